// AES transformers with upstream's byte layouts (value/encrypt/aes), so values
// written here read there and the other way round:
//   aesgcm: 12-byte random nonce, then the GCM ciphertext with its 16-byte tag; the
//           storage key is the additional authenticated data, so a value copied
//           under another key fails to decrypt.
//   aescbc: 16-byte random IV, then CBC ciphertext of the PKCS#7-padded value (no
//           authentication: upstream keeps it only for compatibility).
// node:crypto does the AES (native, constant time); nothing here logs key material.

import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import type { FromStorage, Transformer } from './transformer.js';
import { TransformError } from './transformer.js';

const GCM_NONCE_SIZE = 12;
const GCM_TAG_SIZE = 16;
const AES_BLOCK_SIZE = 16;

function aesAlgorithm(key: Buffer, mode: 'gcm' | 'cbc'): string {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) {
    throw new Error(`invalid AES key size ${key.length}: must be 16, 24 or 32 bytes`);
  }
  return `aes-${key.length * 8}-${mode}`;
}

export class AesGcmTransformer implements Transformer {
  private readonly algorithm: CipherGCMTypes;

  constructor(private readonly key: Buffer) {
    this.algorithm = aesAlgorithm(key, 'gcm') as CipherGCMTypes;
  }

  transformFromStorage(data: Buffer, authenticatedData: Buffer): Promise<FromStorage> {
    if (data.length < GCM_NONCE_SIZE + GCM_TAG_SIZE) {
      return Promise.reject(new TransformError('the stored data was shorter than the required size'));
    }
    const nonce = data.subarray(0, GCM_NONCE_SIZE);
    const tag = data.subarray(data.length - GCM_TAG_SIZE);
    const sealed = data.subarray(GCM_NONCE_SIZE, data.length - GCM_TAG_SIZE);
    try {
      const decipher = createDecipheriv(this.algorithm, this.key, nonce, { authTagLength: GCM_TAG_SIZE });
      decipher.setAAD(authenticatedData);
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(sealed), decipher.final()]);
      return Promise.resolve({ data: plain, stale: false });
    } catch {
      // Go's crypto/cipher wording; the cause (wrong key or tampering) is not knowable.
      return Promise.reject(new TransformError('cipher: message authentication failed'));
    }
  }

  transformToStorage(data: Buffer, authenticatedData: Buffer): Promise<Buffer> {
    const nonce = randomBytes(GCM_NONCE_SIZE);
    const cipher = createCipheriv(this.algorithm, this.key, nonce, { authTagLength: GCM_TAG_SIZE });
    cipher.setAAD(authenticatedData);
    const sealed = Buffer.concat([cipher.update(data), cipher.final()]);
    return Promise.resolve(Buffer.concat([nonce, sealed, cipher.getAuthTag()]));
  }
}

export class AesCbcTransformer implements Transformer {
  private readonly algorithm: string;

  constructor(private readonly key: Buffer) {
    this.algorithm = aesAlgorithm(key, 'cbc');
  }

  transformFromStorage(data: Buffer, _authenticatedData?: Buffer): Promise<FromStorage> {
    if (data.length < AES_BLOCK_SIZE) {
      return Promise.reject(new TransformError('the stored data was shorter than the required size'));
    }
    const iv = data.subarray(0, AES_BLOCK_SIZE);
    const sealed = data.subarray(AES_BLOCK_SIZE);
    if (sealed.length % AES_BLOCK_SIZE !== 0) {
      return Promise.reject(new TransformError('the stored data is not a multiple of the block size'));
    }
    try {
      // node's PKCS#7 unpadding is upstream's: a wrong key nearly always leaves bad padding.
      const decipher = createDecipheriv(this.algorithm, this.key, iv);
      const plain = Buffer.concat([decipher.update(sealed), decipher.final()]);
      return Promise.resolve({ data: plain, stale: false });
    } catch {
      return Promise.reject(new TransformError('invalid padding on input'));
    }
  }

  transformToStorage(data: Buffer, _authenticatedData?: Buffer): Promise<Buffer> {
    const iv = randomBytes(AES_BLOCK_SIZE);
    const cipher = createCipheriv(this.algorithm, this.key, iv);
    return Promise.resolve(Buffer.concat([iv, cipher.update(data), cipher.final()]));
  }
}
