// encodeEvent is only ever a shortcut: for every event it must write the bytes
// JSON.stringify(snapshotEvent(ev)) writes (the serializer the log and webhook backends
// used before), key order and string escaping included.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { encodeEvent, encodeEventList } from './encode.js';
import { responseStatusOf, snapshotEvent } from './event.js';
import { AUDIT_API_VERSION, LEVELS, STAGES, type Event, type EventUser, type ResponseStatus } from './types.js';

/** Strings a JSON encoder must escape, or write as they are, or both. */
const tricky = fc.constantFrom(
  '"',
  '\\',
  '/',
  '\u0000',
  '\b',
  '\t',
  '\n',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  'a',
  '0',
  ' ',
);
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: tricky }),
  fc.constantFrom('', 'admin', 'system:authenticated'),
);
/** Map keys, with array-index keys (enumerated first by an object) and `__proto__`. */
const key = fc.oneof(text, fc.constantFrom('0', '1', '10', '9', '01', '4294967294', '4294967295', '__proto__', '-1'));

/** An object with exactly these own keys, `__proto__` included as a key of its own. */
function record<T>(entries: readonly (readonly [string, T])[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries) {
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

const user: fc.Arbitrary<EventUser> = fc.record(
  {
    username: text,
    uid: text,
    groups: fc.array(text, { maxLength: 4 }),
    extra: fc.array(fc.tuple(key, fc.array(text, { maxLength: 3 })), { maxLength: 5 }).map(record),
  },
  { requiredKeys: [] },
);

const objectRef = fc.record(
  {
    resource: text,
    namespace: text,
    name: text,
    uid: text,
    apiGroup: text,
    apiVersion: text,
    resourceVersion: text,
    subresource: text,
  },
  { requiredKeys: [] },
);

const statusObject = fc.record(
  {
    kind: fc.constant('Status'),
    apiVersion: fc.constant('v1'),
    status: fc.constantFrom('Failure', 'Success', ''),
    message: text,
    reason: fc.constantFrom('NotFound', 'Forbidden', ''),
    details: fc.oneof(
      fc.constant(undefined),
      fc.record({ name: text, kind: text, causes: fc.array(fc.record({ message: text }), { maxLength: 2 }) }),
    ),
    code: fc.integer({ min: 100, max: 599 }),
  },
  { requiredKeys: ['kind', 'apiVersion'] },
);

/** Every shape the filter and responseStatusOf give a responseStatus. */
const responseStatus: fc.Arbitrary<ResponseStatus> = fc.oneof(
  fc.integer({ min: 100, max: 599 }).map((code) => ({ metadata: {}, code })),
  fc.tuple(fc.integer({ min: 100, max: 599 }), statusObject).map(([code, obj]) => responseStatusOf(code, obj)),
  fc.tuple(text, fc.integer({ min: 100, max: 599 })).map(([message, code]) => ({ metadata: {}, message, code })),
  fc.constant<ResponseStatus>({
    metadata: {},
    status: 'Failure',
    message: "APIServer panic'd: TypeError",
    reason: 'InternalError',
    code: 500,
  }),
);

const body = fc.oneof(fc.constant(undefined), fc.jsonValue(), fc.object());

const event: fc.Arbitrary<Event> = fc
  .record(
    {
      level: fc.constantFrom(...LEVELS),
      auditID: text,
      stage: fc.constantFrom(...STAGES),
      requestURI: text,
      verb: text,
      user: fc.oneof(user, fc.constant({})),
      impersonatedUser: user,
      sourceIPs: fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), text), { maxLength: 3 }),
      userAgent: text,
      objectRef,
      responseStatus,
      requestObject: body,
      responseObject: body,
      requestReceivedTimestamp: text,
      stageTimestamp: text,
      annotations: fc.array(fc.tuple(key, text), { maxLength: 4 }).map(record),
    },
    {
      // What newEvent always sets.
      requiredKeys: ['level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'requestReceivedTimestamp', 'stageTimestamp'],
    },
  )
  .map((fields) => ({ kind: 'Event', apiVersion: AUDIT_API_VERSION, ...fields }) as Event);

describe('encodeEvent', () => {
  it('writes what JSON.stringify of the ordered snapshot writes, byte for byte', () => {
    fc.assert(
      fc.property(event, (ev) => {
        assert.equal(encodeEvent(ev), JSON.stringify(snapshotEvent(ev)));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes a snapshot as the snapshot itself stringifies (the batch and webhook path)', () => {
    fc.assert(
      fc.property(event, (ev) => {
        const snap = snapshotEvent(ev);
        assert.equal(encodeEvent(snap), JSON.stringify(snap));
      }),
      { numRuns: 1000 },
    );
  });

  it("writes a webhook batch as JSON.stringify writes upstream's EventList", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 4 }), (events) => {
        const items = events.map(snapshotEvent);
        assert.equal(
          encodeEventList(items.map(encodeEvent)),
          JSON.stringify({ kind: 'EventList', apiVersion: AUDIT_API_VERSION, metadata: {}, items }),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('writes a Metadata-level get as kube-apiserver does', () => {
    const ev: Event = {
      kind: 'Event',
      apiVersion: AUDIT_API_VERSION,
      level: 'Metadata',
      auditID: 'a1',
      stage: 'ResponseComplete',
      requestURI: '/apis/g/v1/users/u',
      verb: 'get',
      user: { username: 'admin', groups: ['system:authenticated'], extra: { 'g/access-key': ['k'] } },
      sourceIPs: ['127.0.0.1'],
      userAgent: 'kubectl/v1.32.0',
      objectRef: { resource: 'users', namespace: '', name: 'u', apiGroup: 'g', apiVersion: 'v1', subresource: '' },
      responseStatus: { metadata: {}, code: 200 },
      requestReceivedTimestamp: '2026-01-01T00:00:00.000001Z',
      stageTimestamp: '2026-01-01T00:00:00.000002Z',
      annotations: { 'authorization.k8s.io/reason': '', 'authorization.k8s.io/decision': 'allow' },
    };
    assert.equal(
      encodeEvent(ev),
      '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete",' +
        '"requestURI":"/apis/g/v1/users/u","verb":"get","user":{"username":"admin","groups":["system:authenticated"],' +
        '"extra":{"g/access-key":["k"]}},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.32.0",' +
        '"objectRef":{"resource":"users","name":"u","apiGroup":"g","apiVersion":"v1"},' +
        '"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:00.000001Z",' +
        '"stageTimestamp":"2026-01-01T00:00:00.000002Z",' +
        '"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}',
    );
  });
});
