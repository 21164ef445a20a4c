// Value transformers: what turns an object's stored bytes into what the backend
// keeps (k8s.io/apiserver pkg/storage/value). A transformer works on bytes only and
// knows nothing of objects; the storage key is passed as authenticated data so an
// authenticated cipher can refuse a value copied under another key.
//
// Reads report `stale` when the value was not written by the transformer that
// writes now (another key, another provider, or plain text under a cipher): storage
// then rewrites the object even when nothing in it changed, which is what makes
// `kubectl get -o json | kubectl replace -f -` re-encrypt everything after a rotation.

/** The result of reading stored bytes back. */
export interface FromStorage {
  readonly data: Buffer;
  /** Written by something other than the transformer that writes now: rewrite on the next update. */
  readonly stale: boolean;
}

export interface Transformer {
  /** Undoes transformToStorage; rejects when the bytes cannot be read (wrong key, tampered, unknown prefix). */
  transformFromStorage(data: Buffer, authenticatedData: Buffer): Promise<FromStorage>;
  transformToStorage(data: Buffer, authenticatedData: Buffer): Promise<Buffer>;
}

/** A transformer and the prefix its values carry (`k8s:enc:aescbc:v1:key1:`; empty for identity). */
export interface PrefixTransformer {
  readonly prefix: Buffer;
  readonly transformer: Transformer;
}

/** Every prefixed (encrypted) value begins with this; the identity transformer refuses such values. */
export const ENCRYPTED_PREFIX = Buffer.from('k8s:enc:');

/** A stored value no configured transformer could read. The message never holds key material or data. */
export class TransformError extends Error {
  override readonly name = 'TransformError';
}

/**
 * Tries the prefixed transformers in order (value.NewPrefixTransformers): the first
 * whose prefix matches and that succeeds reads the value; any but the first makes the
 * value stale. Several entries may share a prefix (one provider listed twice while
 * its keys rotate), so a matching prefix that fails does not end the search. The
 * first transformer writes.
 */
export class PrefixTransformers implements Transformer {
  constructor(
    private readonly transformers: readonly PrefixTransformer[],
    /** What to say when no prefix matches. */
    private readonly noMatch: string = 'the provided value does not match any of the supported transformers',
  ) {
    if (transformers.length === 0) throw new Error('PrefixTransformers needs at least one transformer');
  }

  async transformFromStorage(data: Buffer, authenticatedData: Buffer): Promise<FromStorage> {
    const errors: string[] = [];
    for (let i = 0; i < this.transformers.length; i++) {
      const { prefix, transformer } = this.transformers[i] as PrefixTransformer;
      if (!hasPrefix(data, prefix)) continue;
      let result: FromStorage;
      try {
        result = await transformer.transformFromStorage(data.subarray(prefix.length), authenticatedData);
      } catch (err) {
        // Identity says "encrypted data" for a prefixed value: let a later cipher try it, unrecorded.
        if (prefix.length === 0) continue;
        errors.push(err instanceof Error ? err.message : String(err));
        continue;
      }
      return { data: result.data, stale: result.stale || i !== 0 };
    }
    if (errors.length > 0) throw new TransformError(errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`);
    throw new TransformError(this.noMatch);
  }

  /** True when the first transformer (the one that writes) stores plain text. */
  get writesPlain(): boolean {
    return (this.transformers[0] as PrefixTransformer).prefix.length === 0;
  }

  async transformToStorage(data: Buffer, authenticatedData: Buffer): Promise<Buffer> {
    const { prefix, transformer } = this.transformers[0] as PrefixTransformer;
    const out = await transformer.transformToStorage(data, authenticatedData);
    return Buffer.concat([prefix, out]);
  }
}

export function hasPrefix(data: Buffer, prefix: Buffer): boolean {
  return data.length >= prefix.length && data.subarray(0, prefix.length).equals(prefix);
}
