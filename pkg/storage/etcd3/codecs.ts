// Encoders and decoders for the etcd v3 messages this server exchanges, written
// against etcd's api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto (field numbers
// in the comments). Requests are encoded in one exactly sized buffer; responses are
// decoded straight into the KV contract's shapes (convert.ts's job for the etcd3
// package), keys as strings and values as views of the received message, so a value
// is never copied on its way in.

import type { KeyValue } from '../kv.js';
import {
  delimitedSize,
  LENGTH_DELIMITED,
  Reader,
  tagSize,
  VARINT,
  varintFieldSize,
  varintSize,
  Writer,
} from './proto-wire.js';

const EMPTY_VALUE: Buffer = Buffer.alloc(0);

// ---- requests ----

/** RangeRequest: key=1 range_end=2 limit=3 revision=4. */
export interface RangeArgs {
  readonly key: Buffer;
  /** Absent: just `key`. */
  readonly rangeEnd?: Buffer;
  readonly limit?: number;
  readonly revision?: number;
}

function rangeBodySize(a: RangeArgs): number {
  let size = delimitedSize(1, a.key.length);
  if (a.rangeEnd !== undefined) size += delimitedSize(2, a.rangeEnd.length);
  if (a.limit) size += varintFieldSize(3, a.limit);
  if (a.revision) size += varintFieldSize(4, a.revision);
  return size;
}

function writeRangeBody(w: Writer, a: RangeArgs): void {
  w.bytesField(1, a.key);
  if (a.rangeEnd !== undefined) w.bytesField(2, a.rangeEnd);
  if (a.limit) w.varintField(3, a.limit);
  if (a.revision) w.varintField(4, a.revision);
}

export function encodeRange(a: RangeArgs): Buffer {
  const w = new Writer(rangeBodySize(a));
  writeRangeBody(w, a);
  return w.finish();
}

/**
 * Compare: result=1 (Equal 0, Greater 1) target=2 (Create 1, Mod 2) key=3, and the
 * target_union oneof create_revision=5 / mod_revision=6. The oneof member is always
 * written, also when 0: "created at revision 0" is how "does not exist" is asked.
 */
export interface TxnCompare {
  readonly key: Buffer;
  readonly target: 'create' | 'mod';
  readonly result: 'equal' | 'greater';
  readonly revision: number;
}

/** RequestOp oneof: request_range=1 (RangeRequest key only), request_put=2 (PutRequest key=1 value=2),
 *  request_delete_range=3 (DeleteRangeRequest key=1 prev_kv=3). */
export type TxnOp =
  | { readonly op: 'range'; readonly key: Buffer }
  | { readonly op: 'put'; readonly key: Buffer; readonly value: Buffer }
  | { readonly op: 'delete'; readonly key: Buffer };

const COMPARE_RESULT = { equal: 0, greater: 1 } as const;
const COMPARE_TARGET = { create: 1, mod: 2 } as const;
const COMPARE_UNION_FIELD = { create: 5, mod: 6 } as const;

function compareBodySize(c: TxnCompare): number {
  const result = COMPARE_RESULT[c.result];
  return (
    (result !== 0 ? varintFieldSize(1, result) : 0) +
    varintFieldSize(2, COMPARE_TARGET[c.target]) +
    delimitedSize(3, c.key.length) +
    varintFieldSize(COMPARE_UNION_FIELD[c.target], c.revision)
  );
}

function opInnerSize(o: TxnOp): number {
  switch (o.op) {
    case 'range':
      return delimitedSize(1, o.key.length);
    case 'put':
      return delimitedSize(1, o.key.length) + delimitedSize(2, o.value.length);
    case 'delete':
      return delimitedSize(1, o.key.length) + varintFieldSize(3, 1);
  }
}

const OP_FIELD = { range: 1, put: 2, delete: 3 } as const;

/** TxnRequest: compare=1 success=2 failure=3, one of each as the KV's conditional writes use them. */
export function encodeTxn(compare: TxnCompare, success: TxnOp, failure: TxnOp): Buffer {
  const compareSize = compareBodySize(compare);
  const successInner = opInnerSize(success);
  const successSize = delimitedSize(OP_FIELD[success.op], successInner);
  const failureInner = opInnerSize(failure);
  const failureSize = delimitedSize(OP_FIELD[failure.op], failureInner);
  const w = new Writer(
    delimitedSize(1, compareSize) + delimitedSize(2, successSize) + delimitedSize(3, failureSize),
  );
  w.delimited(1, compareSize);
  const result = COMPARE_RESULT[compare.result];
  if (result !== 0) w.varintField(1, result);
  w.varintField(2, COMPARE_TARGET[compare.target]);
  w.bytesField(3, compare.key);
  w.varintField(COMPARE_UNION_FIELD[compare.target], compare.revision);
  writeOp(w, 2, success, successSize, successInner);
  writeOp(w, 3, failure, failureSize, failureInner);
  return w.finish();
}

function writeOp(w: Writer, field: number, o: TxnOp, size: number, innerSize: number): void {
  w.delimited(field, size);
  w.delimited(OP_FIELD[o.op], innerSize);
  w.bytesField(1, o.key);
  if (o.op === 'put') w.bytesField(2, o.value);
  else if (o.op === 'delete') w.varintField(3, 1);
}

/** CompactionRequest: revision=1 physical=2. */
export function encodeCompaction(revision: number, physical: boolean): Buffer {
  const w = new Writer(varintFieldSize(1, revision) + (physical ? varintFieldSize(2, 1) : 0));
  w.varintField(1, revision);
  if (physical) w.varintField(2, 1);
  return w.finish();
}

/** An empty message (StatusRequest). */
export const EMPTY_MESSAGE = Buffer.alloc(0);

/** WatchCreateRequest: key=1 range_end=2 start_revision=3 progress_notify=4 prev_kv=6. */
export interface WatchCreateArgs {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly startRevision: number;
  readonly progressNotify: boolean;
  readonly prevKv: boolean;
}

/** WatchRequest{create_request=1}. */
export function encodeWatchCreate(a: WatchCreateArgs): Buffer {
  const body =
    delimitedSize(1, a.key.length) +
    delimitedSize(2, a.rangeEnd.length) +
    (a.startRevision ? varintFieldSize(3, a.startRevision) : 0) +
    (a.progressNotify ? varintFieldSize(4, 1) : 0) +
    (a.prevKv ? varintFieldSize(6, 1) : 0);
  const w = new Writer(delimitedSize(1, body));
  w.delimited(1, body);
  w.bytesField(1, a.key);
  w.bytesField(2, a.rangeEnd);
  if (a.startRevision) w.varintField(3, a.startRevision);
  if (a.progressNotify) w.varintField(4, 1);
  if (a.prevKv) w.varintField(6, 1);
  return w.finish();
}

/** WatchRequest{progress_request=3}: an empty WatchProgressRequest. */
export const WATCH_PROGRESS_REQUEST: Buffer = new Writer(tagSize(3) + varintSize(0)).delimited(3, 0).finish();

// ---- responses ----

/** ResponseHeader: revision=3 (cluster_id, member_id, raft_term skipped). */
function readHeaderRevision(r: Reader): number {
  let revision = 0;
  while (!r.done) {
    const tag = r.varint();
    if (tag === ((3 << 3) | VARINT)) revision = r.varint();
    else r.skip(tag & 7);
  }
  return revision;
}

/** The version of the last key decoded by readKeyValue (only watch events need it). */
let lastVersion = 0;

/** mvccpb.KeyValue: key=1 create_revision=2 mod_revision=3 version=4 value=5 (lease=6 skipped). */
function readKeyValue(r: Reader): KeyValue {
  let key = '';
  let value = EMPTY_VALUE;
  let createRevision = 0;
  let modRevision = 0;
  let version = 0;
  while (!r.done) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH_DELIMITED:
        key = r.string();
        break;
      case (2 << 3) | VARINT:
        createRevision = r.varint();
        break;
      case (3 << 3) | VARINT:
        modRevision = r.varint();
        break;
      case (4 << 3) | VARINT:
        version = r.varint();
        break;
      case (5 << 3) | LENGTH_DELIMITED:
        value = r.bytes();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  lastVersion = version;
  // A plain object of one shape, as the rest of the server builds KeyValues.
  return { key, value, createRevision, modRevision };
}

/** RangeResponse: header=1 kvs=2 more=3 count=4. */
export interface RangeReply {
  readonly revision: number;
  readonly kvs: KeyValue[];
  readonly more: boolean;
  readonly count: number;
}

function readRangeResponse(r: Reader): RangeReply {
  let revision = 0;
  const kvs: KeyValue[] = [];
  let more = false;
  let count = 0;
  while (!r.done) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH_DELIMITED:
        revision = readHeaderRevision(r.nested());
        break;
      case (2 << 3) | LENGTH_DELIMITED:
        kvs.push(readKeyValue(r.nested()));
        break;
      case (3 << 3) | VARINT:
        more = r.bool();
        break;
      case (4 << 3) | VARINT:
        count = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, kvs, more, count };
}

export function decodeRange(buf: Buffer): RangeReply {
  return readRangeResponse(new Reader(buf));
}

/** Only the header's revision (PutResponse, CompactionResponse, ...). */
export function decodeHeaderOnly(buf: Buffer): number {
  const r = new Reader(buf);
  let revision = 0;
  while (!r.done) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH_DELIMITED)) revision = readHeaderRevision(r.nested());
    else r.skip(tag & 7);
  }
  return revision;
}

/**
 * TxnResponse: header=1 succeeded=2 responses=3, each a ResponseOp whose oneof is
 * response_range=1 (a RangeResponse) or response_delete_range=3 (DeleteRangeResponse:
 * prev_kvs=3); response_put=2 carries nothing we read. The KV's transactions have one
 * operation per branch, so the kvs of the first range or delete are what is wanted.
 */
export interface TxnReply {
  readonly revision: number;
  readonly succeeded: boolean;
  /** The failure branch's range, or the success branch's deleted previous values. */
  readonly kvs: KeyValue[];
}

export function decodeTxn(buf: Buffer): TxnReply {
  const r = new Reader(buf);
  let revision = 0;
  let succeeded = false;
  let kvs: KeyValue[] | undefined;
  while (!r.done) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH_DELIMITED:
        revision = readHeaderRevision(r.nested());
        break;
      case (2 << 3) | VARINT:
        succeeded = r.bool();
        break;
      case (3 << 3) | LENGTH_DELIMITED: {
        const found = readResponseOpKvs(r.nested());
        kvs ??= found;
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, succeeded, kvs: kvs ?? [] };
}

function readResponseOpKvs(op: Reader): KeyValue[] | undefined {
  let kvs: KeyValue[] | undefined;
  while (!op.done) {
    const tag = op.varint();
    if (tag === ((1 << 3) | LENGTH_DELIMITED)) kvs = readRangeResponse(op.nested()).kvs;
    else if (tag === ((3 << 3) | LENGTH_DELIMITED)) kvs = readDeletePrevKvs(op.nested());
    else op.skip(tag & 7);
  }
  return kvs;
}

function readDeletePrevKvs(r: Reader): KeyValue[] {
  const kvs: KeyValue[] = [];
  while (!r.done) {
    const tag = r.varint();
    if (tag === ((3 << 3) | LENGTH_DELIMITED)) kvs.push(readKeyValue(r.nested()));
    else r.skip(tag & 7);
  }
  return kvs;
}

/** StatusResponse: version=2 dbSize=3. */
export interface StatusReply {
  readonly version: string;
  readonly dbSize: number;
}

export function decodeStatus(buf: Buffer): StatusReply {
  const r = new Reader(buf);
  let version = '';
  let dbSize = 0;
  while (!r.done) {
    const tag = r.varint();
    if (tag === ((2 << 3) | LENGTH_DELIMITED)) version = r.string();
    else if (tag === ((3 << 3) | VARINT)) dbSize = r.varint();
    else r.skip(tag & 7);
  }
  return { version, dbSize };
}

/** mvccpb.Event: type=1 (PUT 0, DELETE 1) kv=2 prev_kv=3. */
export interface WatchEvent {
  readonly type: 'put' | 'delete';
  readonly kv: KeyValue;
  /** The key's version after the event: 1 for a put that created it. */
  readonly version: number;
  readonly prevKv: KeyValue | undefined;
}

/**
 * WatchResponse: header=1 watch_id=2 created=3 canceled=4 compact_revision=5
 * cancel_reason=6 fragment=7 events=11.
 */
export interface WatchReply {
  readonly revision: number;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compactRevision: number;
  readonly cancelReason: string;
  readonly fragment: boolean;
  readonly events: WatchEvent[];
}

export function decodeWatch(buf: Buffer): WatchReply {
  const r = new Reader(buf);
  let revision = 0;
  let created = false;
  let canceled = false;
  let compactRevision = 0;
  let cancelReason = '';
  let fragment = false;
  const events: WatchEvent[] = [];
  while (!r.done) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH_DELIMITED:
        revision = readHeaderRevision(r.nested());
        break;
      case (3 << 3) | VARINT:
        created = r.bool();
        break;
      case (4 << 3) | VARINT:
        canceled = r.bool();
        break;
      case (5 << 3) | VARINT:
        compactRevision = r.varint();
        break;
      case (6 << 3) | LENGTH_DELIMITED:
        cancelReason = r.string();
        break;
      case (7 << 3) | VARINT:
        fragment = r.bool();
        break;
      case (11 << 3) | LENGTH_DELIMITED:
        events.push(readEvent(r.nested()));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, created, canceled, compactRevision, cancelReason, fragment, events };
}

function readEvent(r: Reader): WatchEvent {
  let type: 'put' | 'delete' = 'put';
  let kv: KeyValue | undefined;
  let version = 0;
  let prevKv: KeyValue | undefined;
  while (!r.done) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | VARINT:
        type = r.varint() === 1 ? 'delete' : 'put';
        break;
      case (2 << 3) | LENGTH_DELIMITED:
        kv = readKeyValue(r.nested());
        version = lastVersion;
        break;
      case (3 << 3) | LENGTH_DELIMITED:
        prevKv = readKeyValue(r.nested());
        break;
      default:
        r.skip(tag & 7);
    }
  }
  if (kv === undefined) throw new Error('etcd: a watch event without its key');
  return { type, kv, version, prevKv };
}
