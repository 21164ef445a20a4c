// The hand-written codecs against an independent protobuf implementation
// (protobufjs, reading the message definitions of etcd's rpc.proto and kv.proto
// below): what we encode, protobufjs decodes to the intended request, and what
// protobufjs encodes as etcd would answer, we decode to the intended values.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import {
  decodeRange,
  decodeStatus,
  decodeTxn,
  decodeWatch,
  encodeCompaction,
  encodeRange,
  encodeTxn,
  encodeWatchCreate,
  WATCH_PROGRESS_REQUEST,
} from './codecs.js';

// Field numbers as in etcd-io/etcd api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto.
const PROTO = `
syntax = "proto3";
package t;
message ResponseHeader { uint64 cluster_id = 1; uint64 member_id = 2; int64 revision = 3; uint64 raft_term = 4; }
message KeyValue { bytes key = 1; int64 create_revision = 2; int64 mod_revision = 3; int64 version = 4; bytes value = 5; int64 lease = 6; }
message Event { enum EventType { PUT = 0; DELETE = 1; } EventType type = 1; KeyValue kv = 2; KeyValue prev_kv = 3; }
message RangeRequest { bytes key = 1; bytes range_end = 2; int64 limit = 3; int64 revision = 4; bool serializable = 7; }
message RangeResponse { ResponseHeader header = 1; repeated KeyValue kvs = 2; bool more = 3; int64 count = 4; }
message PutRequest { bytes key = 1; bytes value = 2; int64 lease = 3; bool prev_kv = 4; }
message PutResponse { ResponseHeader header = 1; KeyValue prev_kv = 2; }
message DeleteRangeRequest { bytes key = 1; bytes range_end = 2; bool prev_kv = 3; }
message DeleteRangeResponse { ResponseHeader header = 1; int64 deleted = 2; repeated KeyValue prev_kvs = 3; }
message RequestOp { oneof request { RangeRequest request_range = 1; PutRequest request_put = 2; DeleteRangeRequest request_delete_range = 3; } }
message ResponseOp { oneof response { RangeResponse response_range = 1; PutResponse response_put = 2; DeleteRangeResponse response_delete_range = 3; } }
message Compare {
  int32 result = 1; int32 target = 2; bytes key = 3;
  oneof target_union { int64 version = 4; int64 create_revision = 5; int64 mod_revision = 6; bytes value = 7; int64 lease = 8; }
  bytes range_end = 64;
}
message TxnRequest { repeated Compare compare = 1; repeated RequestOp success = 2; repeated RequestOp failure = 3; }
message TxnResponse { ResponseHeader header = 1; bool succeeded = 2; repeated ResponseOp responses = 3; }
message CompactionRequest { int64 revision = 1; bool physical = 2; }
message WatchCreateRequest { bytes key = 1; bytes range_end = 2; int64 start_revision = 3; bool progress_notify = 4; bool prev_kv = 6; int64 watch_id = 7; bool fragment = 8; }
message WatchProgressRequest {}
message WatchRequest { oneof request_union { WatchCreateRequest create_request = 1; WatchProgressRequest progress_request = 3; } }
message WatchResponse { ResponseHeader header = 1; int64 watch_id = 2; bool created = 3; bool canceled = 4; int64 compact_revision = 5; string cancel_reason = 6; bool fragment = 7; repeated Event events = 11; }
message StatusResponse { ResponseHeader header = 1; string version = 2; int64 dbSize = 3; uint64 leader = 4; }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
const type = (name: string): protobuf.Type => root.lookupType(`t.${name}`);
const TO_OBJECT = { longs: Number, bytes: String, oneofs: true } as const;

/** What protobufjs reads from our bytes, with bytes as base64 and int64s as numbers. */
function read(name: string, bytes: Buffer): Record<string, unknown> {
  const t = type(name);
  return t.toObject(t.decode(bytes), TO_OBJECT);
}

/** What etcd would send, encoded by protobufjs. */
function write(name: string, message: Record<string, unknown>): Buffer {
  const t = type(name);
  return Buffer.from(t.encode(t.fromObject(message)).finish());
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
/** A header with the uint64s etcd really sends (they are skipped, not read). */
const header = (revision: number): Record<string, unknown> => ({
  cluster_id: '14841639068965178418',
  member_id: '10276657743932975437',
  revision,
  raft_term: 7,
});

test('a create transaction: "created at revision 0" written explicitly, put on success, read back on failure', () => {
  const key = Buffer.from('/registry/g/r/a');
  const value = Buffer.from('{"x":1}');
  const msg = read(
    'TxnRequest',
    encodeTxn(
      { key, target: 'create', result: 'equal', revision: 0 },
      { op: 'put', key, value },
      { op: 'range', key },
    ),
  );
  assert.deepEqual(msg, {
    compare: [
      { target: 1, key: b64('/registry/g/r/a'), create_revision: 0, target_union: 'create_revision' },
    ],
    success: [
      { request_put: { key: b64('/registry/g/r/a'), value: b64('{"x":1}') }, request: 'request_put' },
    ],
    failure: [{ request_range: { key: b64('/registry/g/r/a') }, request: 'request_range' }],
  });
});

test('a delete transaction: mod_revision compares (greater than 0, equal to a large one) and asks for the previous value', () => {
  const key = Buffer.from('k');
  const any = read(
    'TxnRequest',
    encodeTxn(
      { key, target: 'mod', result: 'greater', revision: 0 },
      { op: 'delete', key },
      { op: 'range', key },
    ),
  );
  assert.deepEqual(any['compare'], [
    { result: 1, target: 2, key: b64('k'), mod_revision: 0, target_union: 'mod_revision' },
  ]);
  assert.deepEqual(any['success'], [
    { request_delete_range: { key: b64('k'), prev_kv: true }, request: 'request_delete_range' },
  ]);
  const exact = read(
    'TxnRequest',
    encodeTxn(
      { key, target: 'mod', result: 'equal', revision: 2 ** 40 + 3 },
      { op: 'delete', key },
      { op: 'range', key },
    ),
  );
  assert.deepEqual(exact['compare'], [
    { target: 2, key: b64('k'), mod_revision: 2 ** 40 + 3, target_union: 'mod_revision' },
  ]);
});

test('range, compaction and watch requests carry exactly the fields asked for', () => {
  assert.deepEqual(read('RangeRequest', encodeRange({ key: Buffer.from('a') })), { key: b64('a') });
  assert.deepEqual(
    read(
      'RangeRequest',
      encodeRange({ key: Buffer.from('a'), rangeEnd: Buffer.from('b'), limit: 500, revision: 300_000 }),
    ),
    { key: b64('a'), range_end: b64('b'), limit: 500, revision: 300_000 },
  );
  assert.deepEqual(read('CompactionRequest', encodeCompaction(12345, true)), {
    revision: 12345,
    physical: true,
  });
  const watchCreate = (startRevision: number, flags: boolean): Record<string, unknown> =>
    read(
      'WatchRequest',
      encodeWatchCreate({
        key: Buffer.from('/p/'),
        rangeEnd: Buffer.from('/p0'),
        startRevision,
        progressNotify: flags,
        prevKv: flags,
      }),
    );
  assert.deepEqual(watchCreate(129, true), {
    create_request: {
      key: b64('/p/'),
      range_end: b64('/p0'),
      start_revision: 129,
      progress_notify: true,
      prev_kv: true,
    },
    request_union: 'create_request',
  });
  assert.deepEqual(watchCreate(0, false)['create_request'], { key: b64('/p/'), range_end: b64('/p0') });
  assert.deepEqual(read('WatchRequest', WATCH_PROGRESS_REQUEST), {
    progress_request: {},
    request_union: 'progress_request',
  });
});

test('a range response decodes to KeyValues with the header revision, more and count', () => {
  const reply = decodeRange(
    write('RangeResponse', {
      header: header(2 ** 33),
      kvs: [
        { key: b64('/a'), value: b64('v1'), create_revision: 5, mod_revision: 9, version: 3, lease: 77 },
        { key: b64('/b'), create_revision: 6, mod_revision: 6, version: 1 },
      ],
      more: true,
      count: 12,
    }),
  );
  assert.equal(reply.revision, 2 ** 33);
  assert.equal(reply.more, true);
  assert.equal(reply.count, 12);
  assert.deepEqual(
    reply.kvs.map((kv) => ({ ...kv, value: kv.value.toString() })),
    [
      { key: '/a', value: 'v1', createRevision: 5, modRevision: 9 },
      { key: '/b', value: '', createRevision: 6, modRevision: 6 },
    ],
  );
  const empty = decodeRange(write('RangeResponse', { header: header(3) }));
  assert.deepEqual(empty, { revision: 3, kvs: [], more: false, count: 0 });
});

test('a transaction response: the failed compare reads back the key; a delete returns what it removed', () => {
  const failed = decodeTxn(
    write('TxnResponse', {
      header: header(40),
      succeeded: false,
      responses: [
        {
          response_range: {
            header: header(40),
            kvs: [{ key: b64('/k'), value: b64('cur'), create_revision: 2, mod_revision: 30 }],
          },
        },
      ],
    }),
  );
  assert.equal(failed.succeeded, false);
  assert.equal(failed.revision, 40);
  assert.equal(failed.kvs[0]?.value.toString(), 'cur');
  assert.equal(failed.kvs[0]?.modRevision, 30);

  const put = decodeTxn(
    write('TxnResponse', {
      header: header(41),
      succeeded: true,
      responses: [{ response_put: { header: header(41) } }],
    }),
  );
  assert.deepEqual(put, { revision: 41, succeeded: true, kvs: [] });

  const deleted = decodeTxn(
    write('TxnResponse', {
      header: header(42),
      succeeded: true,
      responses: [
        {
          response_delete_range: {
            header: header(42),
            deleted: 1,
            prev_kvs: [{ key: b64('/k'), value: b64('old'), create_revision: 2, mod_revision: 41 }],
          },
        },
      ],
    }),
  );
  assert.equal(deleted.kvs[0]?.key, '/k');
  assert.equal(deleted.kvs[0]?.value.toString(), 'old');
});

test('a watch response: events with type, version and previous value; cancellation with its compact revision', () => {
  const events = decodeWatch(
    write('WatchResponse', {
      header: header(50),
      watch_id: 0,
      events: [
        {
          type: 0,
          kv: { key: b64('/a'), value: b64('new'), create_revision: 49, mod_revision: 49, version: 1 },
        },
        {
          type: 1,
          kv: { key: b64('/b'), mod_revision: 50 },
          prev_kv: { key: b64('/b'), value: b64('last'), create_revision: 10, mod_revision: 20, version: 4 },
        },
      ],
    }),
  );
  assert.equal(events.revision, 50);
  assert.equal(events.created, false);
  assert.deepEqual(
    events.events.map((e) => [
      e.type,
      e.kv.key,
      e.kv.modRevision,
      e.version,
      e.kv.value.toString(),
      e.prevKv?.value.toString(),
    ]),
    [
      ['put', '/a', 49, 1, 'new', undefined],
      ['delete', '/b', 50, 0, '', 'last'],
    ],
  );
  const canceled = decodeWatch(
    write('WatchResponse', {
      header: header(60),
      canceled: true,
      compact_revision: 55,
      cancel_reason: 'mvcc: required revision has been compacted',
    }),
  );
  assert.deepEqual(
    { ...canceled, events: canceled.events.length },
    {
      revision: 60,
      created: false,
      canceled: true,
      compactRevision: 55,
      cancelReason: 'mvcc: required revision has been compacted',
      fragment: false,
      events: 0,
    },
  );
  assert.equal(decodeWatch(write('WatchResponse', { header: header(61), created: true })).created, true);
});

test('status, and malformed or out-of-range input is refused, not misread', () => {
  assert.deepEqual(
    decodeStatus(
      write('StatusResponse', { header: header(1), version: '3.5.17', dbSize: 20480, leader: '123' }),
    ),
    {
      version: '3.5.17',
      dbSize: 20480,
    },
  );
  // A revision past 2^53 cannot be held exactly in a number.
  assert.throws(
    () => decodeRange(write('RangeResponse', { header: { revision: '9007199254740993' } })),
    /not a safe integer/,
  );
  // A message cut short.
  const whole = write('RangeResponse', { header: header(5), kvs: [{ key: b64('/a'), value: b64('value') }] });
  assert.throws(() => decodeRange(whole.subarray(0, whole.length - 2)), /truncated/);
});
