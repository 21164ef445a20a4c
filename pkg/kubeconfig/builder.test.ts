import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfigBuilder, serializeKubeConfig, singleContextKubeConfig } from './builder.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

test('a single-context kube config is read back by @kubernetes/client-node', () => {
  const doc = singleContextKubeConfig({
    contextName: 'platform-admin',
    cluster: { server: 'https://127.0.0.1:8443/kubernetes/management', caPem: CA },
    user: { token: 'secret-token' },
  });
  const kc = new KubeConfig();
  kc.loadFromString(serializeKubeConfig(doc));
  assert.equal(kc.getCurrentContext(), 'platform-admin');
  const cluster = kc.getCurrentCluster();
  assert.equal(cluster?.server, 'https://127.0.0.1:8443/kubernetes/management');
  assert.equal(Buffer.from(cluster?.caData ?? '', 'base64').toString('utf8'), CA);
  assert.equal(kc.getCurrentUser()?.token, 'secret-token');
});

test('the YAML uses the kebab-case field names kubectl expects', () => {
  const yaml = serializeKubeConfig(
    singleContextKubeConfig({
      contextName: 'c',
      cluster: { server: 'https://x', caPem: CA },
      user: { token: 't' },
    }),
  );
  assert.match(yaml, /^current-context: c$/m);
  assert.match(yaml, /certificate-authority-data: /);
  assert.match(yaml, /^kind: Config$/m);
});

test('no CA data when none is given', () => {
  const doc = singleContextKubeConfig({
    contextName: 'c',
    cluster: { server: 'https://x' },
    user: { token: 't' },
  });
  assert.equal(doc.clusters[0]?.cluster['certificate-authority-data'], undefined);
});

test('a context naming an unknown cluster or user is refused', () => {
  const b = new KubeConfigBuilder().user('u', { token: 't' }).context('c', { cluster: 'nope', user: 'u' });
  assert.throws(() => b.build(), /unknown cluster "nope"/);
  const b2 = new KubeConfigBuilder()
    .cluster('k', { server: 'https://x' })
    .context('c', { cluster: 'k', user: 'who' });
  assert.throws(() => b2.build(), /unknown user "who"/);
  assert.throws(() => new KubeConfigBuilder().currentContext('missing').build(), /current-context "missing"/);
});

test('adding an entry with an existing name replaces it', () => {
  const doc = new KubeConfigBuilder()
    .cluster('k', { server: 'https://old' })
    .cluster('k', { server: 'https://new' })
    .build();
  assert.equal(doc.clusters.length, 1);
  assert.equal(doc.clusters[0]?.cluster.server, 'https://new');
});

test('a client certificate without its key is refused', () => {
  assert.throws(() => new KubeConfigBuilder().user('u', { clientCertificatePem: CA }), /needs its key/);
});
