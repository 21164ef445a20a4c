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

function sortKeys(_key: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) sorted[k] = value[k];
  return sorted;
}

/** The stored bytes of `obj`: canonical JSON without metadata.resourceVersion. Does not modify `obj`. */
export function encodeObject(obj: KubeObject): Buffer {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  return Buffer.from(JSON.stringify({ ...obj, metadata }, sortKeys), 'utf8');
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
