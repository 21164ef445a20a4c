// The KMS v2 envelope transformer (envelope/kmsv2/envelope.go). A value is encrypted
// locally with a data encryption key (DEK, here a seed: see hkdf-gcm.ts) that the
// plugin wrapped once; what is stored after `k8s:enc:kms:v2:<name>:` is upstream's
// EncryptedObject protobuf: the ciphertext, the plugin's key id, the wrapped DEK
// source, the plugin's annotations and the DEK source type.
//
// Writes never call the plugin: they use the write state the probe keeps (probe.ts),
// which the plugin wrapped when its key id last changed. Reads unwrap a DEK with the
// plugin only the first time they meet it: unwrapped DEKs are cached for a day,
// keyed by (a hash of) everything that identifies the wrapped DEK, so values keep
// reading while the plugin is down once their DEK was seen. A value written under
// another key id than the plugin reports now is stale (rewritten on update).

import { createHash, randomUUID } from 'node:crypto';
import { FieldPath, fieldErrorString, invalid, required } from '../../../apis/meta/field-errors.js';
import { aggregateMessage } from '../../../apis/meta/field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../apis/meta/validation.js';
import { AesGcmTransformer } from '../aes.js';
import type { FromStorage, Transformer } from '../transformer.js';
import { TransformError } from '../transformer.js';
import type { TtlCache } from '../../../util/ttl-cache.js';
import type { KMSService } from './grpc-service.js';
import { HkdfSeedGcmTransformer } from './hkdf-gcm.js';
import type { Annotations, EncryptedObject } from './protocol.js';
import { AES_GCM_KEY, encryptedObject, HKDF_SHA256_XNONCE_AES_GCM_SEED } from './protocol.js';

const ANNOTATIONS_MAX_SIZE = 32 * 1024;
export const KEY_ID_MAX_SIZE = 1024;
const ENCRYPTED_DEK_SOURCE_MAX_SIZE = 1024;
/** How long an unwrapped DEK stays cached (upstream's cacheTTL: a day). */
export const DEK_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

/** What writes use: the current DEK and what is stored beside each value it encrypts. */
export interface WriteState {
  readonly transformer: Transformer;
  readonly keyID: string;
  readonly encryptedDEKSource: Buffer;
  readonly annotations: Annotations;
  readonly encryptedDEKSourceType: number;
  readonly uid: string;
  /** Writes fail after this (ms since epoch) unless a Status call extends it. */
  readonly expiresAt: number;
  readonly cacheKey: string;
}

/** sha256:<hex> of a key id, the only form of it upstream puts in messages. */
export function keyIDHash(keyID: string): string {
  return keyID === '' ? '' : `sha256:${createHash('sha256').update(keyID).digest('hex')}`;
}

/** Go's time.RFC3339 of a UTC instant. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** ValidateKeyID: returns the problem, or undefined. */
export function validateKeyID(keyID: string): string | undefined {
  if (keyID.length === 0) return 'keyID is empty';
  const size = Buffer.byteLength(keyID);
  if (size > KEY_ID_MAX_SIZE) return `keyID is ${size} bytes, which exceeds the max size of ${KEY_ID_MAX_SIZE}`;
  return undefined;
}

/** validation.IsFullyQualifiedDomainName for an annotation's key. */
function fqdnProblem(path: FieldPath, key: string): string | undefined {
  if (key.length === 0) return fieldErrorString(required(path, ''));
  const name = key.endsWith('.') ? key.slice(0, -1) : key;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return fieldErrorString(invalid(path, name, sub.join(',')));
  const labels = name.split('.');
  if (labels.length < 2) return fieldErrorString(invalid(path, name, 'should be a domain with at least two segments separated by dots'));
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return fieldErrorString(invalid(path, label, errs.join(',')));
  }
  return undefined;
}

function validateAnnotations(annotations: Annotations): string | undefined {
  const problems: string[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    const problem = fqdnProblem(FieldPath.root('annotations'), k);
    if (problem) problems.push(problem);
    total += Buffer.byteLength(k) + v.length;
  }
  if (total > ANNOTATIONS_MAX_SIZE) problems.push(`total size of annotations is ${total}, which exceeds the max size of ${ANNOTATIONS_MAX_SIZE}`);
  return problems.length > 0 ? aggregateMessage(problems) : undefined;
}

/** ValidateEncryptedObject, with upstream's messages; returns the problem, or undefined. */
export function validateEncryptedObject(o: EncryptedObject): string | undefined {
  if (o.encryptedDEKSourceType !== AES_GCM_KEY && o.encryptedDEKSourceType !== HKDF_SHA256_XNONCE_AES_GCM_SEED) {
    return `unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`;
  }
  if (o.encryptedData.length === 0) return 'encrypted data is empty';
  if (o.encryptedDEKSource.length === 0) return 'failed to validate encrypted DEK source: encrypted DEK source is empty';
  if (o.encryptedDEKSource.length > ENCRYPTED_DEK_SOURCE_MAX_SIZE) {
    return `failed to validate encrypted DEK source: encrypted DEK source is ${o.encryptedDEKSource.length} bytes, which exceeds the max size of ${ENCRYPTED_DEK_SOURCE_MAX_SIZE}`;
  }
  const keyProblem = validateKeyID(o.keyID);
  if (keyProblem) return `failed to validate key id: ${keyProblem}`;
  const annotationsProblem = validateAnnotations(o.annotations);
  if (annotationsProblem) return `failed to validate annotations: ${annotationsProblem}`;
  return undefined;
}

function lengthPrefixed(bytes: Buffer): Buffer[] {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(bytes.length);
  return [len, bytes];
}

/**
 * generateCacheKey: the DEK source type, the wrapped DEK, the key id and the
 * annotations (sorted by key), length-prefixed as upstream's cryptobyte builder
 * does; hashed, as upstream's cache does, so an entry's key stays small.
 */
export function dekCacheKey(type: number, encryptedDEKSource: Buffer, keyID: string, annotations: Annotations): string {
  const typeBytes = Buffer.alloc(4);
  typeBytes.writeUInt32BE(type);
  const parts = [typeBytes, ...lengthPrefixed(encryptedDEKSource), ...lengthPrefixed(Buffer.from(keyID))];
  const keys = Object.keys(annotations).sort();
  if (keys.length > 0) {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(keys.length);
    parts.push(count);
    for (const k of keys) parts.push(...lengthPrefixed(Buffer.from(k)), ...lengthPrefixed(annotations[k] ?? Buffer.alloc(0)));
  }
  return createHash('sha256').update(Buffer.concat(parts)).digest('base64');
}

/** How many unwrapped DEKs a provider keeps (one per key id change and server start: few). */
export const DEK_CACHE_MAX_ENTRIES = 4096;

/** The transformer that reads values a DEK source of `type` encrypted. */
export function dekTransformer(type: number, plaintextDEKSource: Buffer): Transformer {
  if (type === HKDF_SHA256_XNONCE_AES_GCM_SEED) return new HkdfSeedGcmTransformer(plaintextDEKSource);
  return new AesGcmTransformer(plaintextDEKSource);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class EnvelopeTransformer implements Transformer {
  constructor(
    private readonly service: KMSService,
    private readonly providerName: string,
    /** The probe's current write state; throws when there is none yet. */
    private readonly currentState: () => WriteState,
    /** Unwrapped DEKs by cache key; concurrent reads of one DEK share one Decrypt. */
    private readonly cache: TtlCache<Transformer>,
    private readonly now: () => number = Date.now,
  ) {}

  async transformFromStorage(data: Buffer, authenticatedData: Buffer): Promise<FromStorage> {
    let object: EncryptedObject;
    try {
      object = encryptedObject.deserialize(data);
    } catch (err) {
      throw new TransformError(`failed to decode the encrypted object: ${messageOf(err)}`);
    }
    const problem = validateEncryptedObject(object);
    if (problem) throw new TransformError(problem);
    const state = this.currentState();
    const cacheKey = dekCacheKey(object.encryptedDEKSourceType, object.encryptedDEKSource, object.keyID, object.annotations);
    const transformer = await this.cache.getOrLoad(
      cacheKey,
      async () => {
        let dek: Buffer;
        try {
          dek = await this.service.decrypt(randomUUID(), {
            ciphertext: object.encryptedDEKSource,
            keyId: object.keyID,
            annotations: object.annotations,
          });
        } catch (err) {
          throw new TransformError(`failed to decrypt DEK, error: ${messageOf(err)}`);
        }
        try {
          return dekTransformer(object.encryptedDEKSourceType, dek);
        } catch (err) {
          throw new TransformError(messageOf(err));
        }
      },
      () => DEK_CACHE_TTL_MS,
    );
    const out = await transformer.transformFromStorage(object.encryptedData, authenticatedData);
    return {
      data: out.data,
      stale: out.stale || object.keyID !== state.keyID || object.encryptedDEKSourceType !== state.encryptedDEKSourceType,
    };
  }

  async transformToStorage(data: Buffer, authenticatedData: Buffer): Promise<Buffer> {
    let state: WriteState;
    try {
      state = this.currentState();
    } catch (err) {
      throw this.writeError(messageOf(err));
    }
    const now = this.now();
    if (now > state.expiresAt) {
      throw this.writeError(
        `encryptedDEKSource with keyID hash ${JSON.stringify(keyIDHash(state.keyID))} expired at ${rfc3339(state.expiresAt)} (current time is ${rfc3339(now)})`,
      );
    }
    // Reads of what this write stores then find the DEK without asking the plugin.
    this.cache.set(state.cacheKey, state.transformer, DEK_CACHE_TTL_MS);
    const encryptedData = await state.transformer.transformToStorage(data, authenticatedData);
    const object: EncryptedObject = {
      encryptedData,
      keyID: state.keyID,
      encryptedDEKSource: state.encryptedDEKSource,
      annotations: state.annotations,
      encryptedDEKSourceType: state.encryptedDEKSourceType,
    };
    const problem = validateEncryptedObject(object);
    if (problem) throw this.writeError(problem);
    return encryptedObject.serialize(object);
  }

  /** A write that cannot be encrypted names the provider (never a key or a value). */
  private writeError(why: string): TransformError {
    return new TransformError(`KMS v2 provider ${JSON.stringify(this.providerName)} cannot encrypt: ${why}`);
  }
}
