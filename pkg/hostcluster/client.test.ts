// The real host client (@kubernetes/client-node) against the in-process host double
// over HTTPS with client-certificate authentication.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { request } from 'node:https';
import { HostClusterError, isHostAlreadyExists, isHostConflict } from './errors.js';
import { loadHostCluster } from './load.js';
import { requestClientCertificate, CertificateSigningError } from './client-certificate.js';
import { createCertificateRequest } from './certificate-request.js';
import type { HostCluster, HostConfigMap } from './types.js';
import { HostClusterDouble, KUBE_APISERVER_CLIENT_SIGNER, generateKey } from './testing/index.js';

let double: HostClusterDouble;
let host: HostCluster;
let dir: string;

before(async () => {
  double = await HostClusterDouble.start({ maxSigningDurationSeconds: 30 * 24 * 3600 });
  dir = mkdtempSync(join(tmpdir(), 'hostcluster-test-'));
  host = (await loadHostCluster({ kubeconfigPath: double.writeKubeconfig(join(dir, 'kubeconfig')) }))!;
});

after(async () => {
  await double.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves when `predicate` holds for a value the watch delivered. */
function nextMatching<T>(
  values: (T | undefined)[],
  predicate: (v: T | undefined, i: number) => boolean,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = (): void => {
      if (values.some(predicate)) resolve();
      else if (Date.now() > deadline) reject(new Error(`no matching value in ${JSON.stringify(values)}`));
      else setTimeout(check, 10);
    };
    check();
  });
}

describe('reviews', () => {
  test('TokenReview authenticates a registered token and not an unknown one', async () => {
    double.addToken('good-token', { username: 'jane', uid: 'u-1', groups: ['devs'], extra: { team: ['a'] } });
    const ok = await host.tokenReview('good-token');
    assert.equal(ok.authenticated, true);
    assert.equal(ok.user?.username, 'jane');
    assert.equal(ok.user?.uid, 'u-1');
    assert.deepEqual(ok.user?.groups, ['devs', 'system:authenticated']);
    assert.deepEqual(ok.user?.extra, { team: ['a'] });
    const bad = await host.tokenReview('other-token');
    assert.equal(bad.authenticated, false);
    assert.equal(bad.user, undefined);
  });

  test('SubjectAccessReview answers from the grants; system:masters is always allowed', async () => {
    double.grant({ users: ['jane'], verbs: ['get', 'list'], apiGroups: ['g.example'], resources: ['teams'] });
    const attrs = { verb: 'get', group: 'g.example', version: 'v1', resource: 'teams', name: 'x' };
    assert.equal((await host.subjectAccessReview({ user: 'jane', resourceAttributes: attrs })).allowed, true);
    const deleteAttrs = { ...attrs, verb: 'delete' };
    assert.equal(
      (await host.subjectAccessReview({ user: 'jane', resourceAttributes: deleteAttrs })).allowed,
      false,
    );
    const masters = await host.subjectAccessReview({
      user: 'root',
      groups: ['system:masters'],
      resourceAttributes: deleteAttrs,
    });
    assert.equal(masters.allowed, true);
    double.setSubjectAccessReviewer(() => ({ allowed: false, denied: true, reason: 'no way' }));
    try {
      const denied = await host.subjectAccessReview({
        user: 'root',
        nonResourceAttributes: { path: '/x', verb: 'get' },
      });
      assert.deepEqual(denied, { allowed: false, denied: true, reason: 'no way', evaluationError: '' });
      assert.deepEqual(double.subjectAccessReviews.at(-1)?.nonResourceAttributes, {
        path: '/x',
        verb: 'get',
      });
    } finally {
      double.setSubjectAccessReviewer(undefined);
    }
  });
});

describe('ConfigMaps', () => {
  test('the published authentication ConfigMap carries the front-proxy CA and JSON header lists', async () => {
    const cm = await host.getConfigMap('kube-system', 'extension-apiserver-authentication');
    assert.ok(cm);
    assert.equal(cm.data['requestheader-client-ca-file'], double.frontProxyCa.certPem);
    assert.deepEqual(JSON.parse(cm.data['requestheader-username-headers'] ?? ''), ['X-Remote-User']);
    assert.equal(await host.getConfigMap('kube-system', 'missing'), undefined);
  });

  test('a watch sees the current state, changes, deletion, and survives a dropped watch and 410 Gone', async () => {
    const seen: (HostConfigMap | undefined)[] = [];
    const errors: Error[] = [];
    const handle = host.watchConfigMap('ns1', 'settings', (cm) => seen.push(cm), {
      onError: (e) => errors.push(e),
    });
    try {
      await nextMatching(seen, (cm) => cm === undefined);
      double.putConfigMap('ns1', 'settings', { a: '1' });
      double.putConfigMap('ns1', 'other', { ignored: 'yes' });
      await nextMatching(seen, (cm) => cm?.data['a'] === '1');
      double.putConfigMap('ns1', 'settings', { a: '2' });
      await nextMatching(seen, (cm) => cm?.data['a'] === '2');
      double.deleteConfigMap('ns1', 'settings');
      await nextMatching(seen, (cm, i) => cm === undefined && i > 0);

      // History gone and the connection dropped: the watch must relist and catch up.
      double.compact();
      double.closeWatches();
      double.putConfigMap('ns1', 'settings', { a: '3' });
      await nextMatching(seen, (cm) => cm?.data['a'] === '3');
      assert.ok(seen.every((cm) => cm === undefined || cm.metadata.name === 'settings'));
    } finally {
      await handle.stop();
    }
    const count = seen.length;
    double.putConfigMap('ns1', 'settings', { a: '4' });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(seen.length, count, 'no callbacks after stop()');
  });

  test('a watch stops at once even while the host has not sent its response headers', async () => {
    double.holdWatchHeaders = true;
    const seen: (HostConfigMap | undefined)[] = [];
    try {
      const handle = host.watchConfigMap('ns2', 'held', (cm) => seen.push(cm));
      // The list answers; the watch that follows it hangs before its headers.
      await nextMatching(seen, (cm) => cm === undefined);
      await new Promise((r) => setTimeout(r, 50));
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        handle.stop().then(() => true),
        new Promise<false>((r) => (timer = setTimeout(() => r(false), 10_000))),
      ]);
      clearTimeout(timer);
      assert.ok(stopped, 'stop() waited for a response the host never started');
      const count = seen.length;
      double.putConfigMap('ns2', 'held', { a: '1' });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(seen.length, count, 'no callbacks after stop()');
    } finally {
      double.holdWatchHeaders = false;
    }
  });
});

describe('Secrets', () => {
  test('create, read back bytes, AlreadyExists, optimistic concurrency on update', async () => {
    const data = { accessKey: Buffer.from('k-123'), binary: Buffer.from([0, 255, 7]) };
    const created = await host.createSecret({ metadata: { name: 's1', namespace: 'platform' }, data });
    assert.ok(created.metadata.resourceVersion);
    const read = await host.getSecret('platform', 's1');
    assert.deepEqual(read?.data, data);
    assert.equal(read?.type, 'Opaque');
    await assert.rejects(
      host.createSecret({ metadata: { name: 's1', namespace: 'platform' }, data }),
      (err) => isHostAlreadyExists(err),
    );
    const updated = await host.updateSecret({ ...created, data: { accessKey: Buffer.from('k-456') } });
    assert.equal(double.secretData('platform', 's1')?.['accessKey'], 'k-456');
    await assert.rejects(host.updateSecret({ ...created, data: {} }), (err) => isHostConflict(err));
    assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.equal(await host.getSecret('platform', 'nope'), undefined);
  });

  test('a request the host forbids is a 403 HostClusterError with the host message', async () => {
    double.setClientAuthorizer((_user, r) => !(r.resource === 'secrets' && r.verb === 'create'));
    try {
      await assert.rejects(
        host.createSecret({ metadata: { name: 's2', namespace: 'platform' }, data: {} }),
        (err) =>
          err instanceof HostClusterError &&
          err.code === 403 &&
          err.message.includes('cannot create resource "secrets"'),
      );
    } finally {
      double.setClientAuthorizer(undefined);
    }
  });
});

describe('certificate signing requests', () => {
  test('a client certificate is issued by the host CA with the identity, usage and lifetime asked for', async () => {
    const issued = await requestClientCertificate(host, {
      signerName: KUBE_APISERVER_CLIENT_SIGNER,
      commonName: 'alice',
      organizations: ['devs', 'ops'],
      expirationSeconds: 3600,
      timeoutMs: 10_000,
    });
    const cert = new X509Certificate(issued.certPem);
    assert.ok(cert.checkIssued(double.clientCa.cert) && cert.verify(double.clientCa.cert.publicKey));
    assert.ok(cert.subject.includes('CN=alice'));
    assert.ok(cert.subject.includes('O=devs') && cert.subject.includes('O=ops'));
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.ok(cert.checkPrivateKey(createPrivateKey(issued.keyPem)));
    // Backdated 5 minutes, as upstream's signer does; lives exactly the requested hour from now.
    const lifetime = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000;
    assert.equal(lifetime, 3600 + 300);
    assert.equal(double.certificateSigningRequests().length, 0, 'no request is left behind');

    // The certificate authenticates against the host.
    const who = await selfSubjectReview(issued.certPem, issued.keyPem);
    assert.equal(who.username, 'alice');
    assert.deepEqual(who.groups, ['devs', 'ops', 'system:authenticated']);
  });

  test('without expirationSeconds the request carries none and the signer default applies', async () => {
    const csr = await host.createCertificateSigningRequest({
      generateName: 'noexp-',
      signerName: KUBE_APISERVER_CLIENT_SIGNER,
      requestPem: createCertificateRequest({ privateKey: generateKey(), commonName: 'bob' }),
      usages: ['client auth'],
    });
    assert.equal(csr.expirationSeconds, undefined);
    assert.equal(csr.username, 'system:serviceaccount:platform-system:platform-apiserver');
    const stored = double.object('certificatesigningrequests', '', csr.metadata.name);
    assert.equal((stored?.spec as Record<string, unknown>).expirationSeconds, undefined);
    const approved = await host.approveCertificateSigningRequest(csr.metadata.name, 'Test', 'ok');
    assert.ok(approved.conditions.some((c) => c.type === 'Approved' && c.status === 'True'));
    const issued = await new Promise<string>((resolve) => {
      const h = host.watchCertificateSigningRequest(csr.metadata.name, (c) => {
        if (c?.certificatePem) {
          void h.stop();
          resolve(c.certificatePem);
        }
      });
    });
    const cert = new X509Certificate(issued);
    assert.equal((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000, 30 * 24 * 3600 + 300);
    await host.deleteCertificateSigningRequest(csr.metadata.name);
    assert.equal(await host.getCertificateSigningRequest(csr.metadata.name), undefined);
    await host.deleteCertificateSigningRequest(csr.metadata.name); // deleting what is gone is fine
  });

  test('the host validates requests: an unsigned PEM and a short expirationSeconds are 422', async () => {
    await assert.rejects(
      host.createCertificateSigningRequest({
        name: 'bad',
        signerName: KUBE_APISERVER_CLIENT_SIGNER,
        requestPem: 'not a pem',
        usages: ['client auth'],
        expirationSeconds: 60,
      }),
      (err) =>
        err instanceof HostClusterError &&
        err.code === 422 &&
        err.message.includes('PEM block type must be CERTIFICATE REQUEST') &&
        err.message.includes('may not specify a duration less than 600 seconds'),
    );
  });

  test('denied, failed and unanswered requests each fail in their own words and leave no request', async () => {
    const base = { commonName: 'carol', timeoutMs: 5_000 };
    const signer = 'example.com/test-signer';

    // Denied by an approval policy on the host before we could approve it.
    double.setSignerBehaviour(signer, 'deny');
    await assert.rejects(requestClientCertificate(host, { ...base, signerName: signer }), (err) => {
      assert.ok(err instanceof CertificateSigningError, String(err));
      assert.equal(err.failure, 'denied');
      assert.match(err.message, /was denied: PolicyDenied: denied by the approval policy/);
      return true;
    });

    // Denied by an administrator after approval was asked but before any signer acted.
    double.setSignerBehaviour(signer, 'ignore');
    const pending = requestClientCertificate(host, { ...base, signerName: signer });
    const name = await waitForRequest((csr) => hasCondition(csr, 'Approved'));
    double.denyCertificateSigningRequest(name, 'NotToday', 'policy says no');
    await assert.rejects(pending, (err) => {
      assert.ok(err instanceof CertificateSigningError, String(err));
      assert.equal(err.failure, 'denied');
      assert.match(err.message, /was denied: NotToday: policy says no/);
      return true;
    });

    double.setSignerBehaviour(signer, 'fail');
    await assert.rejects(requestClientCertificate(host, { ...base, signerName: signer }), (err) => {
      assert.ok(err instanceof CertificateSigningError, String(err));
      assert.equal(err.failure, 'failed');
      return true;
    });

    double.setSignerBehaviour(signer, 'ignore');
    await assert.rejects(
      requestClientCertificate(host, { ...base, signerName: signer, timeoutMs: 300 }),
      (err) =>
        err instanceof CertificateSigningError && err.failure === 'timeout' && /within/.test(err.message),
    );
    assert.equal(double.certificateSigningRequests().length, 0);
  });
});

describe('host failures', () => {
  test('an unavailable host is a 503, a slow one times out, an unreachable one is code 0', async () => {
    double.setUnavailable(true);
    try {
      await assert.rejects(
        host.tokenReview('x'),
        (err) => err instanceof HostClusterError && err.code === 503,
      );
    } finally {
      double.setUnavailable(false);
    }

    const slowDir = mkdtempSync(join(tmpdir(), 'hostcluster-slow-'));
    try {
      const slow = (await loadHostCluster({
        kubeconfigPath: double.writeKubeconfig(join(slowDir, 'kubeconfig')),
        requestTimeoutMs: 200,
      }))!;
      double.setLatency(1000);
      await assert.rejects(
        slow.tokenReview('x'),
        (err) => err instanceof HostClusterError && err.code === 0 && err.reason === 'Timeout',
      );
    } finally {
      double.setLatency(0);
      rmSync(slowDir, { recursive: true, force: true });
    }

    const gone = await HostClusterDouble.start();
    const goneDir = mkdtempSync(join(tmpdir(), 'hostcluster-gone-'));
    try {
      const unreachable = (await loadHostCluster({
        kubeconfigPath: gone.writeKubeconfig(join(goneDir, 'kubeconfig')),
      }))!;
      await gone.stop();
      await assert.rejects(
        unreachable.tokenReview('x'),
        (err) => err instanceof HostClusterError && err.code === 0,
      );
    } finally {
      rmSync(goneDir, { recursive: true, force: true });
    }
  });

  test('no kube config and not in a cluster means no host', async () => {
    assert.equal(await loadHostCluster({ env: {} }), undefined);
  });
});

async function waitForRequest(ready: (csr: StoredCsr) => boolean): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const csr = double.certificateSigningRequests().find(ready);
    if (csr) return csr.metadata.name;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no certificate signing request was filed');
}

type StoredCsr = ReturnType<HostClusterDouble['certificateSigningRequests']>[number];

function hasCondition(csr: StoredCsr, type: string): boolean {
  const conditions = (csr.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === type);
}

function selfSubjectReview(certPem: string, keyPem: string): Promise<{ username: string; groups: string[] }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${double.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: 'POST',
        cert: certPem,
        key: keyPem,
        ca: double.serverCa.certPem,
        headers: { 'Content-Type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          const parsed = JSON.parse(body) as {
            status?: { userInfo?: { username: string; groups: string[] } };
          };
          if (parsed.status?.userInfo) resolve(parsed.status.userInfo);
          else reject(new Error(body));
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  });
}
