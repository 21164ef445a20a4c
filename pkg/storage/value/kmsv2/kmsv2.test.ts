// KMS v2 end to end inside the process: an EncryptionConfiguration with a kms
// provider, gRPC over a unix socket to a plugin double with its own AES keys, and
// what storage would keep. The plugin counts its calls, so DEK reuse and the DEK
// cache are asserted as the plugin sees them; a fake clock moves the DEK's expiry.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../../util/eventually.js';
import { parseEncryptionConfiguration, ResourceTransformers } from '../encryption-config.js';
import type { Transformer } from '../transformer.js';
import { encryptedObject, HKDF_SHA256_XNONCE_AES_GCM_SEED } from './protocol.js';
import { newKMSv2Provider } from './provider.js';
import type { ProbeTimings } from './probe.js';
import { DOUBLE_ANNOTATION, KMSPluginDouble } from './testing/plugin-double.js';

const GROUP = 'management.platform.dev';
const PREFIX = Buffer.from('k8s:enc:kms:v2:vault:');
const KEY = Buffer.from(`/registry/${GROUP}/sharedsecrets/default/db`);
const VALUE = Buffer.from('{"spec":{"data":{"password":"cGE1NS13b3Jk"}}}');
const MINUTE = 60_000;

/** Polls never run on their own during a test; health checks always ask the plugin. */
const QUIET: ProbeTimings = {
  positiveIntervalMs: 3_600_000,
  negativeIntervalMs: 3_600_000,
  writeDEKMaxTTLMs: 3 * MINUTE,
  healthzPositiveTTLMs: 0,
  healthzNegativeTTLMs: 0,
};

function config(endpoint: string, timeout = '2s'): string {
  return [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    `  - resources: [sharedsecrets.${GROUP}]`,
    '    providers:',
    `      - kms: {apiVersion: v2, name: vault, endpoint: "${endpoint}", timeout: ${timeout}}`,
    '      - identity: {}',
  ].join('\n');
}

const parseDuration = (t: string): number | undefined => (/^\d+s$/.test(t) ? Number(t.slice(0, -1)) * 1000 : undefined);

interface Loaded {
  readonly transformers: ResourceTransformers;
  readonly transformer: Transformer;
  /** The fake clock: every provider of this load reads it. */
  readonly clock: { now: number };
}

async function load(endpoint: string, timings: ProbeTimings = QUIET): Promise<Loaded> {
  const clock = { now: Date.now() };
  const transformers = new ResourceTransformers(parseEncryptionConfiguration(config(endpoint), 'enc.yaml', parseDuration), (kms) =>
    newKMSv2Provider(kms, { timings, now: () => clock.now }),
  );
  await transformers.primed();
  return { transformers, transformer: transformers.transformerFor(GROUP, 'sharedsecrets'), clock };
}

function decode(stored: Buffer): ReturnType<typeof encryptedObject.deserialize> {
  assert.ok(stored.subarray(0, PREFIX.length).equals(PREFIX), `no ${PREFIX.toString()} prefix`);
  return encryptedObject.deserialize(stored.subarray(PREFIX.length));
}

describe('KMS v2 provider', () => {
  let dir: string;
  let plugin: KMSPluginDouble;
  const open: ResourceTransformers[] = [];
  const loaded = async (timings?: ProbeTimings): Promise<Loaded> => {
    const l = await load(plugin.endpoint, timings);
    open.push(l.transformers);
    return l;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kmsv2-'));
    plugin = await KMSPluginDouble.start(join(dir, 'kms.sock'));
  });
  after(async () => {
    for (const t of open) t.close();
    await plugin.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores upstream's prefix and EncryptedObject, and reads the value back", async () => {
    const { transformer } = await loaded();
    const stored = await transformer.transformToStorage(VALUE, KEY);
    assert.ok(!stored.includes(VALUE) && !stored.includes(Buffer.from('cGE1NS13b3Jk')), 'the plain value is stored');
    const object = decode(stored);
    assert.equal(object.keyID, plugin.keyId);
    assert.equal(object.encryptedDEKSourceType, HKDF_SHA256_XNONCE_AES_GCM_SEED);
    assert.ok(object.encryptedDEKSource.length > 0);
    assert.equal(object.annotations[DOUBLE_ANNOTATION]?.toString(), plugin.keyId.replace('double-key-', ''));
    const read = await transformer.transformFromStorage(stored, KEY);
    assert.deepEqual(read, { data: VALUE, stale: false });
  });

  it('wraps one DEK for many writes, and unwraps it once for many reads', async () => {
    const before = { ...plugin.calls };
    const { transformer } = await loaded();
    assert.equal(plugin.calls.encrypt - before.encrypt, 1, 'the first DEK is wrapped at start');
    const stored = await Promise.all(Array.from({ length: 20 }, (_, i) => transformer.transformToStorage(Buffer.from(`v${i}`), KEY)));
    assert.equal(plugin.calls.encrypt - before.encrypt, 1, 'writes wrapped another DEK');
    assert.equal(new Set(stored.map((s) => decode(s).encryptedDEKSource.toString('hex'))).size, 1);
    // The writer knows its own DEK: reading back asks the plugin nothing.
    for (const s of stored) await transformer.transformFromStorage(s, KEY);
    assert.equal(plugin.calls.decrypt - before.decrypt, 0);
    // Another server (a fresh cache) unwraps the DEK once for all twenty values, read at once.
    const other = await loaded();
    const values = (await Promise.all(stored.map((s) => other.transformer.transformFromStorage(s, KEY)))).map((r) => r.data.toString());
    assert.deepEqual(values, Array.from({ length: 20 }, (_, i) => `v${i}`));
    assert.equal(plugin.calls.decrypt - before.decrypt, 1);
  });

  it("replaces the DEK when the plugin's key id changes; old values still read, as stale", async () => {
    const { transformers, transformer } = await loaded();
    const old = await transformer.transformToStorage(VALUE, KEY);
    const oldKeyId = decode(old).keyID;
    const encrypts = plugin.calls.encrypt;
    const newKeyId = plugin.rotate();
    await transformers.checkKMS(); // the Status poll (also run by /healthz)
    assert.equal(plugin.calls.encrypt - encrypts, 1, 'no new DEK was wrapped');
    const fresh = await transformer.transformToStorage(VALUE, KEY);
    assert.equal(decode(fresh).keyID, newKeyId);
    assert.notEqual(newKeyId, oldKeyId);
    assert.deepEqual(await transformer.transformFromStorage(old, KEY), { data: VALUE, stale: true });
    assert.deepEqual(await transformer.transformFromStorage(fresh, KEY), { data: VALUE, stale: false });
    // An unchanged key id keeps the DEK.
    await transformers.checkKMS();
    assert.equal(plugin.calls.encrypt - encrypts, 1);
  });

  it("keeps the DEK it has when Encrypt's key id is not the one Status reports", async () => {
    const { transformers, transformer } = await loaded();
    const before = decode(await transformer.transformToStorage(VALUE, KEY)).keyID;
    plugin.rotate();
    plugin.encryptKeyId = 'some-other-key';
    try {
      await assert.rejects(
        transformers.checkKMS(),
        /kmsv2 Provider vault is not healthy, error: failed to rotate DEK uid="[^"]+", useSeed=true, errState=<nil>, errGen=<nil>, statusKeyIDHash="sha256:[0-9a-f]{64}", encryptKeyIDHash="sha256:[0-9a-f]{64}"/,
      );
      assert.equal(decode(await transformer.transformToStorage(VALUE, KEY)).keyID, before, 'writes moved to an unconfirmed key');
    } finally {
      plugin.encryptKeyId = undefined;
    }
    await transformers.checkKMS();
    assert.equal(decode(await transformer.transformToStorage(VALUE, KEY)).keyID, plugin.keyId);
  });

  it('refuses a tampered value, a value moved under another key, and bytes that are no EncryptedObject', async () => {
    const { transformer } = await loaded();
    const stored = await transformer.transformToStorage(VALUE, KEY);
    const object = decode(stored);
    const flipped = Buffer.from(object.encryptedData);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    const tampered = Buffer.concat([PREFIX, encryptedObject.serialize({ ...object, encryptedData: flipped })]);
    await assert.rejects(transformer.transformFromStorage(tampered, KEY), /cipher: message authentication failed/);
    await assert.rejects(
      transformer.transformFromStorage(stored, Buffer.from(`/registry/${GROUP}/sharedsecrets/default/other`)),
      /cipher: message authentication failed/,
    );
    await assert.rejects(
      transformer.transformFromStorage(Buffer.concat([PREFIX, Buffer.from('not a protobuf \xff\xff\xff')]), KEY),
      /no matching prefix found|encrypted object|encryptedDEKSourceType|index out of range|invalid wire type/,
    );
    const empty = encryptedObject.serialize({ ...decode(stored), keyID: '' });
    await assert.rejects(transformer.transformFromStorage(Buffer.concat([PREFIX, empty]), KEY), /failed to validate key id: keyID is empty/);
  });

  it('a value whose key id the plugin does not know fails with the plugin’s answer, naming no key', async () => {
    const { transformer } = await loaded();
    const object = decode(await transformer.transformToStorage(VALUE, KEY));
    const unknown = Buffer.concat([PREFIX, encryptedObject.serialize({ ...object, keyID: 'retired-key' })]);
    const fresh = await loaded();
    await assert.rejects(
      fresh.transformer.transformFromStorage(unknown, KEY),
      (err: Error) => /failed to decrypt DEK, error: rpc error: code = NotFound desc = unknown key id "retired-key"/.test(err.message),
    );
  });

  it('when the plugin is down: cached DEKs still read, writes coast until the DEK expires, health says why', async () => {
    const { transformers, transformer, clock } = await loaded();
    const stored = await transformer.transformToStorage(VALUE, KEY);
    const other = await loaded(); // a second server that never saw this DEK
    await plugin.down();
    try {
      assert.deepEqual((await transformer.transformFromStorage(stored, KEY)).data, VALUE);
      await assert.rejects(other.transformer.transformFromStorage(stored, KEY), /failed to decrypt DEK, error: rpc error: code = (Unavailable|DeadlineExceeded|Canceled)/);
      await assert.rejects(
        transformers.checkKMS(),
        /^Error: kms-provider-0: failed to perform status section of the healthz check for KMS Provider vault, error: rpc error/,
      );
      // Within three minutes of the last good Status, writes use the DEK they have.
      clock.now += 2 * MINUTE;
      const coasted = await transformer.transformToStorage(VALUE, KEY);
      assert.deepEqual((await transformer.transformFromStorage(coasted, KEY)).data, VALUE);
      clock.now += 2 * MINUTE;
      await assert.rejects(transformer.transformToStorage(VALUE, KEY), (err: Error) => {
        assert.match(err.message, /^KMS v2 provider "vault" cannot encrypt: encryptedDEKSource with keyID hash "sha256:[0-9a-f]{64}" expired at \S+Z \(current time is \S+Z\)$/);
        assert.ok(!err.message.includes(plugin.keyId), 'the key id is named, not hashed');
        return true;
      });
    } finally {
      await plugin.up();
    }
    // Back up: the next Status extends the DEK and writes work again.
    await transformers.checkKMS();
    assert.deepEqual((await transformer.transformFromStorage(await transformer.transformToStorage(VALUE, KEY), KEY)).data, VALUE);
  });

  it('a server started while the plugin is down fails writes naming the provider, and recovers by itself', async () => {
    await plugin.down();
    let l: Loaded;
    try {
      l = await loaded({ ...QUIET, negativeIntervalMs: 50 });
      await assert.rejects(l.transformer.transformToStorage(VALUE, KEY), /^TransformError: KMS v2 provider "vault" cannot encrypt: got unexpected nil transformer$/);
    } finally {
      await plugin.up();
    }
    // The fast poll (every negativeIntervalMs while unhealthy) finds the plugin back.
    const stored = await eventually(() => l.transformer.transformToStorage(VALUE, KEY), 30_000, 50);
    assert.deepEqual((await l.transformer.transformFromStorage(stored, KEY)).data, VALUE);
  });

  it('an endpoint that is no unix socket URL fails the configuration with upstream’s message', () => {
    assert.throws(
      () => new ResourceTransformers(parseEncryptionConfiguration(config('unix://a b/kms.sock'), 'enc.yaml', parseDuration), (kms) => newKMSv2Provider(kms)),
      /could not configure KMSv2-Plugin's probe "vault", error: invalid endpoint "unix:\/\/a b\/kms.sock" for remote KMS provider/,
    );
  });

  it('an unhealthy Status fails the health check with upstream’s reasons', async () => {
    const { transformers } = await loaded();
    plugin.healthz = 'degraded';
    try {
      await assert.rejects(transformers.checkKMS(), /kms-provider-0: kmsv2 Provider vault is not healthy, error: got unexpected healthz status: degraded/);
    } finally {
      plugin.healthz = 'ok';
    }
    await transformers.checkKMS();
  });
});
