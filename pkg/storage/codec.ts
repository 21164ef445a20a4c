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

/** What canonical() returns for a value JSON would not round-trip exactly. */
const UNUSUAL = Symbol('unusual');

/**
 * A deep copy of a JSON value with every object's keys sorted and undefined
 * members left out: the object JSON.parse would return for its canonical bytes,
 * built without printing and reparsing them. UNUSUAL for anything whose JSON is
 * not simply itself (a class instance or toJSON, -0 or a non-finite number,
 * undefined in an array, a function, a "__proto__" key): the caller then takes the
 * long way, so the copy is never a guess.
 */
function canonical(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : UNUSUAL;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const out: unknown[] = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          const item = canonical(value[i]);
          if (item === UNUSUAL) return UNUSUAL;
          out[i] = item;
        }
        return out;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return UNUSUAL;
      const record = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(record).sort()) {
        const member = record[key];
        if (member === undefined) continue;
        if (key === '__proto__') return UNUSUAL;
        const copy = canonical(member);
        if (copy === UNUSUAL) return UNUSUAL;
        out[key] = copy;
      }
      return out;
    }
    default:
      return UNUSUAL;
  }
}

function sortKeys(_key: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) sorted[k] = value[k];
  return sorted;
}

/** What a write stores: the bytes, and (when it could be built) the object decoding them would give. */
export interface Encoded {
  readonly data: Buffer;
  /**
   * A fresh object equal to decodeObject(data) but for metadata.resourceVersion,
   * which stored bytes never hold: stamp() it with the write's revision.
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
  const copy = canonical({ ...obj, metadata });
  if (copy === UNUSUAL) {
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
  return structuredClone(obj);
}
