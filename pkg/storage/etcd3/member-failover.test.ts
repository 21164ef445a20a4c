// Which failures move the client's calls to another member: a member that refuses
// connections or stays silent past MEMBER_SILENCE_MS does; a request whose own short
// deadline runs out on a healthy, slow-to-answer member does not (one impatient
// client must not shuffle the whole server between members). Two local HTTP/2
// servers play etcd's gRPC side, each counting the calls it receives.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { EtcdGrpcClient, METHOD } from './grpc-client.js';

interface Member {
  readonly endpoint: string;
  calls: number;
  /** Ms before this member answers. */
  delayMs: number;
}

async function member(t: TestContext): Promise<Member> {
  const server = http2.createServer();
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (s) => sessions.push(s));
  const m: Member = { endpoint: '', calls: 0, delayMs: 0 };
  server.on('stream', (stream) => {
    m.calls++;
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => undefined);
    stream.on('end', () => {
      const answer = (): void => {
        if (stream.destroyed || stream.closed) return;
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(Buffer.concat(chunks));
      };
      if (m.delayMs > 0) setTimeout(answer, m.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  );
  return Object.assign(m, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const echoed = (b: Buffer): Buffer => b;

test("a request's own short deadline on a slow but healthy member keeps the client on it", async (t) => {
  const [first, second] = [await member(t), await member(t)];
  const client = new EtcdGrpcClient({ endpoints: [first!.endpoint, second!.endpoint] });
  t.after(() => client.close());
  // A framed empty message is a valid body for the echo.
  await client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000);
  assert.equal(first!.calls, 1);

  first!.delayMs = 300;
  await assert.rejects(client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 50), (err: unknown) => {
    assert.equal((err as { code?: number }).code, 4, 'DEADLINE_EXCEEDED');
    return true;
  });
  first!.delayMs = 0;
  await client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000);
  assert.equal(first!.calls, 3, 'the next call went to the same member');
  assert.equal(second!.calls, 0);
});

test('a member that cannot be reached sends later calls to the next one', async (t) => {
  const second = await member(t);
  // A port nothing listens on: the first member refuses connections.
  const probe = http2.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const client = new EtcdGrpcClient({ endpoints: [`http://127.0.0.1:${deadPort}`, second.endpoint] });
  t.after(() => client.close());
  await assert.rejects(client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000));
  await client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000);
  assert.equal(second.calls, 1, 'the call after the failure went to the reachable member');
});
