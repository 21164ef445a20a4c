// The identity transformer (value/encrypt/identity): stores plain bytes. It refuses
// to "read" a value that carries the encrypted prefix, so that with identity listed
// first (to decrypt everything on rewrite) an encrypted value falls through to the
// cipher that can read it instead of being served as garbage.

import type { FromStorage, Transformer } from './transformer.js';
import { ENCRYPTED_PREFIX, hasPrefix, TransformError } from './transformer.js';

export class IdentityTransformer implements Transformer {
  transformFromStorage(data: Buffer, _authenticatedData?: Buffer): Promise<FromStorage> {
    if (hasPrefix(data, ENCRYPTED_PREFIX)) {
      return Promise.reject(new TransformError('identity transformer tried to read encrypted data'));
    }
    return Promise.resolve({ data, stale: false });
  }

  transformToStorage(data: Buffer, _authenticatedData?: Buffer): Promise<Buffer> {
    return Promise.resolve(data);
  }
}

export const IDENTITY = new IdentityTransformer();
