import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';

import { RequestAudit } from './context.js';
import { microTime, newEvent, responseStatusOf, snapshotEvent, sourceIPs, userAgentOf } from './event.js';
import type { Event } from './types.js';

function request(headers: Record<string, string>, remoteAddress = '10.0.0.9'): IncomingMessage {
  return { headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

describe('audit events', () => {
  it('writes timestamps as metav1.MicroTime: six fractional digits, UTC', () => {
    const ms = Date.UTC(2024, 4, 1, 10, 20, 30, 123) + 0.456;
    assert.equal(microTime(ms), '2024-05-01T10:20:30.123456Z');
    assert.equal(microTime(Date.UTC(2024, 0, 1)), '2024-01-01T00:00:00.000000Z');
  });

  it('lists source IPs as utilnet.SourceIPs does', () => {
    assert.deepEqual(sourceIPs(request({})), ['10.0.0.9']);
    assert.deepEqual(sourceIPs(request({}, '::ffff:127.0.0.1')), ['127.0.0.1']);
    assert.deepEqual(
      sourceIPs(request({ 'x-forwarded-for': '1.1.1.1, bogus, 2.2.2.2', 'x-real-ip': '3.3.3.3' })),
      ['1.1.1.1', '2.2.2.2', '3.3.3.3', '10.0.0.9'],
    );
    // X-Real-Ip already listed, and the connection the last address listed: not repeated.
    assert.deepEqual(sourceIPs(request({ 'x-forwarded-for': '1.1.1.1,10.0.0.9', 'x-real-ip': '1.1.1.1' })), [
      '1.1.1.1',
      '10.0.0.9',
    ]);
  });

  it('truncates a long user agent as upstream', () => {
    const ua = userAgentOf(request({ 'user-agent': 'x'.repeat(2000) }));
    assert.equal(ua, 'x'.repeat(1024) + '...TRUNCATED');
  });

  it("keeps a Status's bounded fields and only the code of anything else", () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'teams.management.platform.dev "x" not found',
      reason: 'NotFound',
      details: { name: 'x', group: 'management.platform.dev', kind: 'teams' },
      code: 404,
    };
    assert.equal(
      JSON.stringify(responseStatusOf(404, status)),
      '{"metadata":{},"status":"Failure","message":"teams.management.platform.dev \\"x\\" not found","reason":"NotFound","details":{"name":"x","group":"management.platform.dev","kind":"teams"},"code":404}',
    );
    assert.deepEqual(responseStatusOf(201, { kind: 'Team' }), { metadata: {}, code: 201 });
  });

  it("encodes events with upstream's field order", () => {
    const ev = newEvent({
      level: 'RequestResponse',
      auditID: 'id-1',
      requestURI: '/apis/g/v1/teams?x=1',
      verb: 'create',
      user: { username: 'alice', groups: ['g'], extra: { z: ['1'], a: ['2'] } },
      sourceIPs: ['1.2.3.4'],
      userAgent: 'kubectl',
      objectRef: { resource: 'teams', apiGroup: 'g', apiVersion: 'v1', name: '', namespace: '' },
      requestReceivedEpochMs: Date.UTC(2024, 0, 1),
    });
    ev.annotations = { 'z/b': '1', 'a/b': '2' };
    ev.responseStatus = { metadata: {}, code: 201 };
    ev.requestObject = { kind: 'Team' };
    const keys = Object.keys(snapshotEvent(ev));
    assert.deepEqual(keys, [
      'kind',
      'apiVersion',
      'level',
      'auditID',
      'stage',
      'requestURI',
      'verb',
      'user',
      'sourceIPs',
      'userAgent',
      'objectRef',
      'responseStatus',
      'requestObject',
      'requestReceivedTimestamp',
      'stageTimestamp',
      'annotations',
    ]);
    const snap = snapshotEvent(ev);
    assert.deepEqual(Object.keys(snap.annotations ?? {}), ['a/b', 'z/b']);
    assert.deepEqual(Object.keys(snap.user.extra ?? {}), ['a', 'z']);
    // Empty reference fields are left out, as omitempty does.
    assert.deepEqual(snap.objectRef, { resource: 'teams', apiGroup: 'g', apiVersion: 'v1' });
  });

  it('snapshots copies of the extra values, keeps every key as its own field, and writes them sorted', () => {
    const extra: Record<string, string[]> = JSON.parse('{"__proto__":["p"],"b":["1"],"a":["2"]}') as Record<string, string[]>;
    const ev = newEvent({
      level: 'Metadata',
      auditID: 'id-2',
      requestURI: '/apis/g/v1/teams',
      verb: 'list',
      user: { username: 'alice', extra },
      sourceIPs: [],
      userAgent: '',
      objectRef: undefined,
      requestReceivedEpochMs: Date.UTC(2024, 0, 1),
    });
    const snap = snapshotEvent(ev);
    assert.equal(
      JSON.stringify(snap.user.extra),
      '{"__proto__":["p"],"a":["2"],"b":["1"]}',
    );
    assert.equal(Object.getPrototypeOf(snap.user.extra), Object.prototype);
    snap.user.extra?.['a']?.push('changed');
    assert.deepEqual(ev.user.extra?.['a'], ['2'], 'the event keeps its own values');
  });

  it('records objects by level, fills the reference from the body, and stamps stages', async () => {
    const stored: Event[] = [];
    const sink = {
      processEvents: (events: readonly Event[]) => (stored.push(...events), Promise.resolve(true)),
    };
    const make = (
      level: 'Metadata' | 'Request' | 'RequestResponse',
      omit: ('RequestReceived' | 'ResponseComplete')[] = [],
    ) =>
      new RequestAudit(
        newEvent({
          level,
          auditID: 'a',
          requestURI: '/',
          verb: 'create',
          user: { username: 'u' },
          sourceIPs: [],
          userAgent: '',
          objectRef: { resource: 'sharedsecrets', namespace: 'default', apiGroup: 'g', apiVersion: 'v1' },
          requestReceivedEpochMs: Date.UTC(2024, 0, 1),
        }),
        { level, omitStages: omit, omitManagedFields: false },
        sink,
      );
    const body = { metadata: { name: 's1', uid: 'u-1' }, spec: { data: { k: 'dmFsdWU=' } } };
    const metadata = make('Metadata');
    metadata.logRequestObject(body);
    metadata.logResponseObject(201, body);
    assert.equal(metadata.event.objectRef?.name, 's1');
    assert.equal(metadata.event.requestObject, undefined);
    assert.equal(metadata.event.responseObject, undefined);
    assert.deepEqual(metadata.event.responseStatus, { metadata: {}, code: 201 });

    const request = make('Request');
    request.logRequestObject(body);
    request.logResponseObject(201, body);
    assert.deepEqual(request.event.requestObject, {
      metadata: { name: 's1', uid: 'u-1' },
      spec: { data: { k: '<redacted>' } },
    });
    assert.equal(request.event.responseObject, undefined);

    const full = make('RequestResponse', ['RequestReceived']);
    full.logResponseObject(201, body);
    assert.ok(!JSON.stringify(full.event).includes('dmFsdWU='));
    assert.equal(await full.process('RequestReceived'), true);
    assert.equal(stored.length, 0, 'an omitted stage is not stored');
    await full.process('ResponseComplete');
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.stage, 'ResponseComplete');
    assert.match(stored[0]?.stageTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(stored[0]?.requestReceivedTimestamp, '2024-01-01T00:00:00.000000Z');
  });
});
