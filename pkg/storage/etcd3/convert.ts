// Keys and ranges as etcd spells them. (Revisions arrive as protobuf int64s and are
// read as JavaScript numbers by proto-wire.ts, exact below 2^53, which a store
// reaches after ~285 years at a million writes per second.)

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
