// The node:http2 unary transport against a local HTTP/2 server playing etcd's
// gRPC side (testing/fake-member.ts): the request on the wire, replies and statuses
// as a caller sees them (the codes grpc-js gives the same events), deadlines, a
// refused connection and its backoff, GOAWAY, a peer that stops answering
// (keepalive), close().

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { isEtcdCompacted } from './errors.js';
import { GrpcCallError, GrpcCode, Http2UnaryTransport } from './http2-unary.js';
import { echo, grpcFrame, startFakeMember, type FakeMember } from './testing/fake-member.js';

/** A fake etcd and a transport to it, both closed after the test. */
async function connected(t: TestContext): Promise<{ etcd: FakeMember; client: Http2UnaryTransport }> {
  const etcd = await startFakeMember();
  t.after(() => etcd.close());
  const client = new Http2UnaryTransport(etcd.origin, undefined);
  t.after(() => client.close());
  return { etcd, client };
}

const asText = (b: Buffer): string => b.toString('utf8');
const later = (ms: number): number => Date.now() + ms;

async function rejection(p: Promise<unknown>): Promise<GrpcCallError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GrpcCallError, `not a GrpcCallError: ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}

test('a call is one framed gRPC POST; the reply is decoded, also when split across DATA frames', async (t) => {
  const { etcd, client } = await connected(t);

  let seen: { headers: http2.IncomingHttpHeaders; body: Buffer } | undefined;
  etcd.handler = (stream, headers, body) => {
    seen = { headers, body };
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    // The reply in two writes: prefix and half the message, then the rest.
    const reply = grpcFrame(Buffer.from('a reply of some length'));
    stream.write(reply.subarray(0, 9));
    setTimeout(() => stream.end(reply.subarray(9)), 10);
  };
  const reply = await client.call('/etcdserverpb.KV/Range', Buffer.from('req'), asText, later(5000));
  assert.equal(reply, 'a reply of some length');
  assert.ok(seen);
  assert.equal(seen.headers[':method'], 'POST');
  assert.equal(seen.headers[':path'], '/etcdserverpb.KV/Range');
  assert.equal(seen.headers['content-type'], 'application/grpc');
  assert.equal(seen.headers['te'], 'trailers');
  assert.match(String(seen.headers['grpc-timeout']), /^\d{1,8}m$/);
  assert.deepEqual(seen.body, grpcFrame(Buffer.from('req')));
});

test('many concurrent calls share one session', async (t) => {
  const { etcd, client } = await connected(t);
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) => client.call('/m', Buffer.from(`r${i}`), asText, later(5000))),
  );
  assert.deepEqual(
    replies,
    Array.from({ length: 50 }, (_, i) => `r${i}`),
  );
  assert.equal(etcd.sessions.length, 1);
});

test('an error status, in trailers or trailers-only, comes back as grpc-js reports it', async (t) => {
  const { etcd, client } = await connected(t);
  const compacted = encodeURIComponent('etcdserver: mvcc: required revision has been compacted');

  etcd.handler = (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '11', 'grpc-message': compacted }));
    stream.end();
  };
  const inTrailers = await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)));
  assert.equal(inTrailers.code, 11);
  assert.equal(inTrailers.details, 'etcdserver: mvcc: required revision has been compacted');
  assert.equal(inTrailers.message, '11 OUT_OF_RANGE: etcdserver: mvcc: required revision has been compacted');
  assert.ok(isEtcdCompacted(inTrailers));

  etcd.handler = (stream) => {
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '9', 'grpc-message': 'not%20now' },
      { endStream: true },
    );
  };
  const trailersOnly = await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)));
  assert.equal(trailersOnly.code, 9);
  assert.equal(trailersOnly.details, 'not now');
});

test('a reply that is not one gRPC message, an HTTP error and a refused stream get the right codes', async (t) => {
  const { etcd, client } = await connected(t);

  etcd.handler = (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(Buffer.from([0, 0, 0, 0, 9, 1])); // says 9 bytes, has 1
  };
  assert.equal((await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)))).code, GrpcCode.INTERNAL);

  etcd.handler = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
  assert.equal(
    (await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)))).code,
    GrpcCode.UNAVAILABLE,
  );

  etcd.handler = (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
  assert.equal(
    (await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)))).code,
    GrpcCode.UNAVAILABLE,
  );

  // A decoder that throws (a malformed message) is INTERNAL, not a crash.
  etcd.handler = echo;
  const throwing = (): never => {
    throw new Error('bad protobuf');
  };
  assert.equal(
    (await rejection(client.call('/m', Buffer.from('x'), throwing, later(5000)))).code,
    GrpcCode.INTERNAL,
  );
  // The session survived all of it.
  assert.equal(await client.call('/m', Buffer.from('still here'), asText, later(5000)), 'still here');
  assert.equal(etcd.sessions.length, 1);
});

test('past its deadline a call is DEADLINE_EXCEEDED and its stream is reset with CANCEL', async (t) => {
  const { etcd, client } = await connected(t);

  const resetCode = new Promise<number | undefined>((resolve) => {
    etcd.handler = (stream) => stream.on('close', () => resolve(stream.rstCode)); // never answers
  });
  const err = await rejection(client.call('/m', Buffer.from('x'), asText, later(200)));
  assert.equal(err.code, GrpcCode.DEADLINE_EXCEEDED);
  assert.equal(await resetCode, http2.constants.NGHTTP2_CANCEL);
  // A deadline already past fails without a request.
  assert.equal(
    (await rejection(client.call('/m', Buffer.from('x'), asText, Date.now() - 1))).code,
    GrpcCode.DEADLINE_EXCEEDED,
  );
});

test('an unreachable member is UNAVAILABLE, fails fast during the backoff, and is reconnected after it', async (t) => {
  const probe = await startFakeMember();
  const { origin, port } = probe;
  await probe.close();
  const client = new Http2UnaryTransport(origin, undefined);
  t.after(() => client.close());

  assert.equal((await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)))).code, GrpcCode.UNAVAILABLE);
  assert.equal(client.failing, true, 'the failed connect starts a backoff');

  const etcd = await startFakeMember(port);
  t.after(() => etcd.close());
  // Within the backoff (100 ms at first) a call may fail fast; after it the member is tried again.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(client.failing, false);
  assert.equal(await client.call('/m', Buffer.from('back'), asText, later(5000)), 'back');
});

test('after a GOAWAY the next call opens a new session', async (t) => {
  const { etcd, client } = await connected(t);

  assert.equal(await client.call('/m', Buffer.from('one'), asText, later(5000)), 'one');
  const first = etcd.sessions[0];
  assert.ok(first);
  first.goaway(http2.constants.NGHTTP2_NO_ERROR);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(await client.call('/m', Buffer.from('two'), asText, later(5000)), 'two');
  assert.equal(etcd.sessions.length, 2);
});

test('a peer that stops answering (SIGSTOP) is found by the keepalive PING: its calls fail UNAVAILABLE', async (t) => {
  const etcd = await startFakeMember();
  t.after(() => etcd.close());
  // A TCP relay that can be frozen: bytes stop flowing both ways, the sockets stay open.
  let frozen = false;
  const sockets: net.Socket[] = [];
  const relay = net.createServer((down) => {
    const up = net.connect(etcd.port, '127.0.0.1');
    sockets.push(down, up);
    down.on('data', (d: Buffer) => frozen || up.write(d));
    up.on('data', (d: Buffer) => frozen || down.write(d));
    down.on('error', () => undefined);
    up.on('error', () => undefined);
    down.on('close', () => up.destroy());
    up.on('close', () => down.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    relay.close();
  });
  const origin = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  const client = new Http2UnaryTransport(origin, undefined, { timeMs: 100, timeoutMs: 200 });
  t.after(() => client.close());

  assert.equal(await client.call('/m', Buffer.from('alive'), asText, later(5000)), 'alive');
  frozen = true;
  // The deadline is far: the keepalive, not the deadline, ends the call.
  const err = await rejection(client.call('/m', Buffer.from('x'), asText, later(30_000)));
  assert.equal(err.code, GrpcCode.UNAVAILABLE);
});

test('close() refuses new calls and closes the session', async (t) => {
  const etcd = await startFakeMember();
  t.after(() => etcd.close());
  const client = new Http2UnaryTransport(etcd.origin, undefined);
  assert.equal(await client.call('/m', Buffer.from('one'), asText, later(5000)), 'one');
  const closed = new Promise<void>((resolve) => etcd.sessions[0]?.on('close', () => resolve()));
  client.close();
  await closed;
  assert.equal((await rejection(client.call('/m', Buffer.from('x'), asText, later(5000)))).code, GrpcCode.UNAVAILABLE);
});
