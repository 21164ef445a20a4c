// Each provider's stored form is upstream's (prefix, then the byte layout), reads
// back what it wrote, and refuses what it must: another key, a value moved under
// another storage key (aesgcm), tampering. Layouts are checked by decrypting with
// node:crypto / @noble/ciphers directly, as an etcd operator's tool would.

import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { AesCbcTransformer, AesGcmTransformer } from './aes.js';
import { IDENTITY } from './identity.js';
import { SecretboxTransformer } from './secretbox.js';
import { PrefixTransformers, TransformError } from './transformer.js';

const PLAIN = Buffer.from('{"spec":{"data":{"password":"hunter2-very-secret"}}}');
const KEY = Buffer.from('/registry/management.platform.dev/sharedsecrets/default/db');
const OTHER_KEY = Buffer.from('/registry/management.platform.dev/sharedsecrets/default/other');

describe('aesgcm', () => {
  for (const size of [16, 24, 32]) {
    it(`round-trips with a ${size}-byte key, as nonce(12) + ciphertext + tag(16) with the storage key authenticated`, async () => {
      const key = randomBytes(size);
      const t = new AesGcmTransformer(key);
      const stored = await t.transformToStorage(PLAIN, KEY);
      assert.equal(stored.length, 12 + PLAIN.length + 16);
      assert.ok(!stored.includes(Buffer.from('hunter2')));
      const d = createDecipheriv(`aes-${size * 8}-gcm` as 'aes-256-gcm', key, stored.subarray(0, 12));
      d.setAAD(KEY);
      d.setAuthTag(stored.subarray(stored.length - 16));
      assert.deepEqual(Buffer.concat([d.update(stored.subarray(12, stored.length - 16)), d.final()]), PLAIN);
      assert.deepEqual(await t.transformFromStorage(stored, KEY), { data: PLAIN, stale: false });
    });
  }

  it('refuses a value copied under another storage key, a wrong key and a flipped bit', async () => {
    const t = new AesGcmTransformer(randomBytes(32));
    const stored = await t.transformToStorage(PLAIN, KEY);
    await assert.rejects(t.transformFromStorage(stored, OTHER_KEY), TransformError);
    await assert.rejects(new AesGcmTransformer(randomBytes(32)).transformFromStorage(stored, KEY), TransformError);
    const tampered = Buffer.from(stored);
    tampered[20] = (tampered[20] ?? 0) ^ 1;
    await assert.rejects(t.transformFromStorage(tampered, KEY), /message authentication failed/);
    await assert.rejects(t.transformFromStorage(Buffer.alloc(5), KEY), /shorter than the required size/);
  });

  it('uses a fresh nonce for every write', async () => {
    const t = new AesGcmTransformer(randomBytes(32));
    const a = await t.transformToStorage(PLAIN, KEY);
    const b = await t.transformToStorage(PLAIN, KEY);
    assert.notDeepEqual(a.subarray(0, 12), b.subarray(0, 12));
  });
});

describe('aescbc', () => {
  it('round-trips as IV(16) + CBC of the PKCS#7-padded value', async () => {
    const key = randomBytes(32);
    const t = new AesCbcTransformer(key);
    const stored = await t.transformToStorage(PLAIN, KEY);
    assert.equal(stored.length, 16 + (Math.floor(PLAIN.length / 16) + 1) * 16);
    const d = createDecipheriv('aes-256-cbc', key, stored.subarray(0, 16));
    assert.deepEqual(Buffer.concat([d.update(stored.subarray(16)), d.final()]), PLAIN);
    assert.deepEqual(await t.transformFromStorage(stored, KEY), { data: PLAIN, stale: false });
  });

  it('refuses a wrong key and a value that is not whole blocks', async () => {
    const stored = await new AesCbcTransformer(randomBytes(32)).transformToStorage(PLAIN, KEY);
    // A wrong key leaves bad padding in all but about 1 in 256 cases; try a few keys.
    let refused = 0;
    for (let i = 0; i < 5; i++) {
      await new AesCbcTransformer(randomBytes(32)).transformFromStorage(stored, KEY).then(
        () => undefined,
        () => refused++,
      );
    }
    assert.ok(refused >= 4);
    await assert.rejects(new AesCbcTransformer(randomBytes(16)).transformFromStorage(stored.subarray(0, 20), KEY), /multiple of the block size/);
  });
});

describe('secretbox', () => {
  it('round-trips as nonce(24) + NaCl secretbox (tag, then ciphertext)', async () => {
    const key = randomBytes(32);
    const t = new SecretboxTransformer(key);
    const stored = await t.transformToStorage(PLAIN, KEY);
    assert.equal(stored.length, 24 + 16 + PLAIN.length);
    const opened = xsalsa20poly1305(key, stored.subarray(0, 24)).decrypt(stored.subarray(24));
    assert.deepEqual(Buffer.from(opened), PLAIN);
    assert.deepEqual(await t.transformFromStorage(stored, KEY), { data: PLAIN, stale: false });
  });

  it('refuses a wrong key', async () => {
    const stored = await new SecretboxTransformer(randomBytes(32)).transformToStorage(PLAIN, KEY);
    await assert.rejects(
      new SecretboxTransformer(randomBytes(32)).transformFromStorage(stored, KEY),
      /attempted to decrypt with an invalid key/,
    );
  });
});

describe('identity and prefixes', () => {
  it('identity stores plain bytes and refuses to read an encrypted value', async () => {
    assert.deepEqual(await IDENTITY.transformToStorage(PLAIN), PLAIN);
    await assert.rejects(IDENTITY.transformFromStorage(Buffer.from('k8s:enc:aescbc:v1:k:xyz')), /tried to read encrypted data/);
  });

  it('writes with the first, reads with any, and marks a read by any but the first stale', async () => {
    const gcm = { prefix: Buffer.from('k8s:enc:aesgcm:v1:new:'), transformer: new AesGcmTransformer(randomBytes(32)) };
    const box = { prefix: Buffer.from('k8s:enc:secretbox:v1:old:'), transformer: new SecretboxTransformer(randomBytes(32)) };
    const identity = { prefix: Buffer.alloc(0), transformer: IDENTITY };
    const old = new PrefixTransformers([box, identity]);
    const current = new PrefixTransformers([gcm, box, identity]);

    const byOld = await old.transformToStorage(PLAIN, KEY);
    assert.ok(byOld.subarray(0, box.prefix.length).equals(box.prefix));
    assert.deepEqual(await current.transformFromStorage(byOld, KEY), { data: PLAIN, stale: true });
    assert.deepEqual(await current.transformFromStorage(PLAIN, KEY), { data: PLAIN, stale: true });
    const byCurrent = await current.transformToStorage(PLAIN, KEY);
    assert.ok(byCurrent.subarray(0, gcm.prefix.length).equals(gcm.prefix));
    assert.deepEqual(await current.transformFromStorage(byCurrent, KEY), { data: PLAIN, stale: false });
    // Identity first (decrypting on rewrite): an encrypted value still reads, through the cipher, stale.
    const decrypting = new PrefixTransformers([identity, gcm]);
    assert.deepEqual(await decrypting.transformFromStorage(byCurrent, KEY), { data: PLAIN, stale: true });
    assert.deepEqual(await decrypting.transformToStorage(PLAIN, KEY), PLAIN);
    // Nothing configured can read it: a clear error, no value in it.
    const stranger = new PrefixTransformers([gcm]);
    await assert.rejects(stranger.transformFromStorage(byOld, KEY), (err: Error) => {
      assert.ok(err instanceof TransformError);
      assert.ok(!err.message.includes('hunter2'));
      return true;
    });
  });
});
