// Conversions between the etcd3 client's wire shapes and the KV contract's.
// etcd revisions are int64 and arrive as decimal strings; JavaScript numbers hold
// them exactly below 2^53, which a store reaches after ~285 years at a million
// writes per second, so plain numbers are used throughout.

import type { IKeyValue, IResponseHeader } from 'etcd3';
import type { KeyValue } from '../kv.js';

export function toRevision(value: string | number | undefined | null): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`etcd revision ${String(value)} is not a safe integer`);
  return n;
}

export function headerRevision(header: IResponseHeader | null | undefined): number {
  return toRevision(header?.revision);
}

export function toKeyValue(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value ?? Buffer.alloc(0),
    createRevision: toRevision(kv.create_revision),
    modRevision: toRevision(kv.mod_revision),
  };
}

export function keyBytes(key: string): Buffer {
  return Buffer.from(key, 'utf8');
}

/**
 * The range end for [start, end). The KV contract uses '' for "no upper bound"
 * (prefixEnd('') is ''), which etcd spells as the single byte 0x00; an empty
 * range_end would mean "just the start key" to etcd instead.
 */
export function rangeEndBytes(end: string): Buffer {
  return end === '' ? Buffer.from([0]) : keyBytes(end);
}

/** etcd rejects an empty key; the smallest non-empty key, 0x00, starts "everything". */
export function rangeStartBytes(start: string): Buffer {
  return start === '' ? Buffer.from([0]) : keyBytes(start);
}
