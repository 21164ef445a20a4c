// The seed transformer derives each value's key as upstream does (golang.org/x/crypto
// hkdf.Expand over SHA-256), or kube-apiserver could not read what this server wrote.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { HkdfSeedGcmTransformer, generateSeedTransformer, hkdfExpandOneBlock } from './hkdf-gcm.js';
import { AesGcmTransformer } from '../aes.js';

const AAD = Buffer.from('/registry/management.platform.dev/sharedsecrets/default/db');

describe('HKDF seed AES-GCM transformer', () => {
  it('expands as RFC 5869 test case 1 (the first 32 bytes of its OKM)', () => {
    const prk = Buffer.from('077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5', 'hex');
    const okm = Buffer.from('3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf', 'hex');
    assert.deepEqual(hkdfExpandOneBlock(prk, Buffer.from('f0f1f2f3f4f5f6f7f8f9', 'hex')), okm);
  });

  it('reads a value sealed with AES-GCM under the key HKDF derives from the seed and the stored info', async () => {
    const seed = randomBytes(32);
    const info = randomBytes(32);
    const sealed = await new AesGcmTransformer(hkdfExpandOneBlock(seed, info)).transformToStorage(Buffer.from('v'), AAD);
    const read = await new HkdfSeedGcmTransformer(seed).transformFromStorage(Buffer.concat([info, sealed]), AAD);
    assert.deepEqual(read.data, Buffer.from('v'));
  });

  it('round-trips, lays out info || nonce || ciphertext+tag, and binds the storage key', async () => {
    const { transformer } = generateSeedTransformer();
    const stored = await transformer.transformToStorage(Buffer.from('secret'), AAD);
    assert.equal(stored.length, 32 + 12 + 6 + 16);
    assert.deepEqual((await transformer.transformFromStorage(stored, AAD)).data, Buffer.from('secret'));
    const again = await transformer.transformToStorage(Buffer.from('secret'), AAD);
    assert.ok(!again.subarray(0, 32).equals(stored.subarray(0, 32)), 'two writes share a derived key');
    await assert.rejects(transformer.transformFromStorage(stored, Buffer.from('/elsewhere')), /message authentication failed/);
    await assert.rejects(transformer.transformFromStorage(stored.subarray(0, 10), AAD), /shorter than the required size/);
  });
});
