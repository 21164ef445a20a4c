// How objects become stored bytes and back. The stored form never contains
// metadata.resourceVersion (the revision is the key's modRevision, injected on read),
// and it is canonical JSON with sorted object keys, as Go's encoding/json writes an
// unstructured object. Canonical bytes are what make a no-op update detectable by a
// byte comparison however the caller happened to order an object's fields.

import type { KubeObject } from '../apis/meta/types.js';
import type { KeyValue } from './kv.js';
import { isObject } from '../apis/meta/types.js';
import { corruptObject } from './errors.js';
import { formatResourceVersion } from './resource-version.js';
import { setOwn } from '../util/own-member.js';
import { NOT_PLAIN, plainCopy, structuredCopy, type CopyRules } from '../util/plain-copy.js';

/** The canonical form's rules: what JSON.parse gives for the sorted JSON of a value. */
const CANONICAL: CopyRules = { json: true, sortKeys: true };

function sortKeys(_key: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  // setOwn: a `__proto__` key is stored as itself, as Go's encoding/json writes it.
  for (const k of Object.keys(value).sort()) setOwn(sorted, k, value[k]);
  return sorted;
}

/** What a write stores: the bytes, and (when it could be built) the object decoding them would give. */
export interface Encoded {
  readonly data: Buffer;
  /**
   * A fresh object equal to decodeObject(data) but for metadata.resourceVersion,
   * which stored bytes never hold: writtenObject() stamps it with the write's revision.
   */
  readonly decoded: KubeObject | undefined;
}

/**
 * The stored bytes of `obj` (canonical JSON without metadata.resourceVersion) and
 * the object they decode to, from one walk of `obj`: a write's result need not parse
 * the bytes it just printed. Does not modify `obj`.
 */
export function encodeWithObject(obj: KubeObject): Encoded {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  // One walk builds the copy that parsing the canonical bytes would give; printing it
  // needs no replacer. Anything JSON would not carry as itself takes the old way.
  const copy = plainCopy({ ...obj, metadata }, CANONICAL);
  if (copy === NOT_PLAIN) {
    return { data: Buffer.from(JSON.stringify({ ...obj, metadata }, sortKeys), 'utf8'), decoded: undefined };
  }
  return { data: Buffer.from(JSON.stringify(copy), 'utf8'), decoded: copy as KubeObject };
}

/** The stored bytes of `obj`: canonical JSON without metadata.resourceVersion. Does not modify `obj`. */
export function encodeObject(obj: KubeObject): Buffer {
  return encodeWithObject(obj).data;
}

/**
 * The object a write stored, stamped with the write's revision: the encoded copy
 * when there is one, else the stored bytes decoded (the same object either way).
 */
export function writtenObject(key: string, encoded: Encoded, revision: number): KubeObject {
  const obj = encoded.decoded;
  if (obj === undefined) return decodeObject(key, encoded.data, revision);
  // As decodeObject does after parsing: the revision is the last metadata member.
  (obj.metadata ??= {}).resourceVersion = formatResourceVersion(revision);
  return obj;
}

/** A fresh object decoded from stored bytes, with metadata.resourceVersion set to `revision`. */
export function decodeObject(key: string, data: Buffer, revision: number): KubeObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch (err) {
    throw corruptObject(key, revision, 'object not decodable', err);
  }
  if (!isObject(parsed)) {
    throw corruptObject(key, revision, 'object not decodable');
  }
  const obj = parsed as KubeObject;
  if (!isObject(obj.metadata)) obj.metadata = {};
  obj.metadata.resourceVersion = formatResourceVersion(revision);
  return obj;
}

/**
 * The object a read key-value holds, stamped with `revision` (its own by default).
 * A value no encryption provider could read fails as upstream's corrupt object does,
 * naming the key, so the caller's error says which object is unreadable.
 */
export function decodeKeyValue(kv: KeyValue, revision: number = kv.modRevision): KubeObject {
  if (kv.unreadable !== undefined) {
    throw corruptObject(kv.key, revision, `data from the storage is not transformable: ${kv.unreadable}`);
  }
  return decodeObject(kv.key, kv.value, revision);
}

/** A deep copy, so callers and callbacks never share mutable state with the store. */
export function cloneObject<T>(obj: T): T {
  return structuredCopy(obj);
}
