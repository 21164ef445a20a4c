// The secretbox transformer (value/encrypt/secretbox): XSalsa20-Poly1305 as NaCl's
// secretbox, from @noble/ciphers (audited, no native code). Layout as upstream:
// a 24-byte random nonce, then the box (16-byte Poly1305 tag, then the ciphertext).
// A 24-byte random nonce never repeats in practice, so a key needs no write budget;
// secretbox takes no additional data, so it does not bind a value to its key.

import { randomBytes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import type { FromStorage, Transformer } from './transformer.js';
import { TransformError } from './transformer.js';

const NONCE_SIZE = 24;
const TAG_SIZE = 16;

export class SecretboxTransformer implements Transformer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error(`invalid secretbox key size ${key.length}: must be 32 bytes`);
  }

  transformFromStorage(data: Buffer, _authenticatedData?: Buffer): Promise<FromStorage> {
    if (data.length < NONCE_SIZE + TAG_SIZE) {
      return Promise.reject(new TransformError('the stored data was shorter than the required size'));
    }
    const nonce = data.subarray(0, NONCE_SIZE);
    try {
      const plain = xsalsa20poly1305(this.key, nonce).decrypt(data.subarray(NONCE_SIZE));
      return Promise.resolve({ data: Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength), stale: false });
    } catch {
      return Promise.reject(new TransformError('attempted to decrypt with an invalid key'));
    }
  }

  transformToStorage(data: Buffer, _authenticatedData?: Buffer): Promise<Buffer> {
    const nonce = randomBytes(NONCE_SIZE);
    const box = xsalsa20poly1305(this.key, nonce).encrypt(data);
    return Promise.resolve(Buffer.concat([nonce, box]));
  }
}
