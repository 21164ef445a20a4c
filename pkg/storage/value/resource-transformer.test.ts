// A reload puts the new configuration in force at once, but closes the old one's
// KMS plugin connections only after the calls it started can have finished
// (upstream's kmsCloseGracePeriod), so a read begun before the reload is not cut off.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { eventually } from '../../util/eventually.js';
import { parseEncryptionConfiguration, ResourceTransformers, type KMSProvider } from './encryption-config.js';
import { IDENTITY } from './identity.js';
import { DynamicResourceTransformers } from './resource-transformer.js';

const GROUP = 'management.platform.dev';
const parseDuration = (t: string): number | undefined => (/^\d+ms$/.test(t) ? Number(t.slice(0, -2)) : undefined);

function kmsConfig(name: string): ResourceTransformers & { closed: () => boolean } {
  let closed = false;
  const provider = (): KMSProvider => ({
    transformer: IDENTITY,
    check: () => Promise.resolve(),
    primed: Promise.resolve(),
    timeoutMs: 50,
    close: () => {
      closed = true;
    },
  });
  const yaml = [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    `  - resources: [sharedsecrets.${GROUP}]`,
    `    providers: [{kms: {apiVersion: v2, name: ${name}, endpoint: "unix:///tmp/${name}.sock", timeout: 50ms}}]`,
  ].join('\n');
  const transformers = new ResourceTransformers(parseEncryptionConfiguration(yaml, 'enc.yaml', parseDuration), provider);
  return Object.assign(transformers, { closed: () => closed });
}

it('a reload closes the old kms providers after their grace period, never the new ones', async () => {
  const old = kmsConfig('a');
  const next = kmsConfig('b');
  assert.equal(old.closeGracePeriodMs, 100);
  const dynamic = new DynamicResourceTransformers(old);
  dynamic.set(next);
  assert.equal(old.closed(), false, 'closed under calls that may still be running');
  await eventually(async () => assert.equal(old.closed(), true), 10_000, 20);
  assert.equal(next.closed(), false);
  dynamic.close();
  assert.equal(next.closed(), true);
});
