// The DEK transformers of KMS v2 (value/encrypt/aes): what encrypts each value once
// the plugin has unwrapped the data encryption key.
//
// HKDF_SHA256_XNONCE_AES_GCM_SEED (what this server writes, upstream's default since
// 1.29): the unwrapped secret is a 32-byte seed; every write draws 32 random bytes
// ("info"), derives a one-time AES-256 key as HKDF-Expand(SHA-256, seed, info), and
// stores info || 12-byte nonce || GCM ciphertext and tag, with the storage key as
// additional data. A derived key is used once, so a seed has no write budget (no
// nonce can repeat under one key): the seed is reused for every write until the
// plugin's key id changes, as upstream reuses it.
// AES_GCM_KEY (read only, written by older servers): the secret is the AES key
// itself and the value is nonce || ciphertext and tag, as the aesgcm provider.

import { createHmac, randomBytes } from 'node:crypto';
import { AesGcmTransformer } from '../aes.js';
import type { FromStorage, Transformer } from '../transformer.js';
import { TransformError } from '../transformer.js';

/** Seed, info and derived key sizes (upstream's commonSize). */
export const SEED_SIZE = 32;
const INFO_SIZE = 32;

/** HKDF-Expand (RFC 5869) for one SHA-256 block: the seed is already a pseudo-random key. */
export function hkdfExpandOneBlock(seed: Buffer, info: Buffer): Buffer {
  return createHmac('sha256', seed).update(info).update(Buffer.of(1)).digest();
}

export class HkdfSeedGcmTransformer implements Transformer {
  constructor(private readonly seed: Buffer) {
    if (seed.length < SEED_SIZE) throw new Error(`invalid seed length ${seed.length} used for key generation`);
  }

  async transformFromStorage(data: Buffer, authenticatedData: Buffer): Promise<FromStorage> {
    if (data.length < INFO_SIZE) throw new TransformError('the stored data was shorter than the required size');
    const info = data.subarray(0, INFO_SIZE);
    return new AesGcmTransformer(hkdfExpandOneBlock(this.seed, info)).transformFromStorage(data.subarray(INFO_SIZE), authenticatedData);
  }

  async transformToStorage(data: Buffer, authenticatedData: Buffer): Promise<Buffer> {
    const info = randomBytes(INFO_SIZE);
    const sealed = await new AesGcmTransformer(hkdfExpandOneBlock(this.seed, info)).transformToStorage(data, authenticatedData);
    return Buffer.concat([info, sealed]);
  }
}

/** A fresh seed and the transformer that writes with it. */
export function generateSeedTransformer(): { transformer: HkdfSeedGcmTransformer; seed: Buffer } {
  const seed = randomBytes(SEED_SIZE);
  return { transformer: new HkdfSeedGcmTransformer(seed), seed };
}
