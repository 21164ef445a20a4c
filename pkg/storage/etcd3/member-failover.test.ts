// Which failures move the client's calls to another member: a member that refuses
// connections or stays silent past MEMBER_SILENCE_MS does; a request whose own short
// deadline runs out on a healthy, slow-to-answer member does not (one impatient
// client must not shuffle the whole server between members). Two local HTTP/2
// servers play etcd's gRPC side (testing/fake-member.ts), each counting the calls
// it receives.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { EtcdGrpcClient, METHOD } from './grpc-client.js';
import { startFakeMember, unreachableOrigin, type FakeMember } from './testing/fake-member.js';

/** A member, closed after the test. */
async function member(t: TestContext): Promise<FakeMember> {
  const m = await startFakeMember();
  t.after(() => m.close());
  return m;
}

const echoed = (b: Buffer): Buffer => b;

test("a request's own short deadline on a slow but healthy member keeps the client on it", async (t) => {
  const [first, second] = [await member(t), await member(t)];
  const client = new EtcdGrpcClient({ endpoints: [first!.origin, second!.origin] });
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
  const client = new EtcdGrpcClient({ endpoints: [await unreachableOrigin(), second.origin] });
  t.after(() => client.close());
  await assert.rejects(client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000));
  await client.unary(METHOD.range, Buffer.alloc(0), echoed, Date.now() + 5000);
  assert.equal(second.calls, 1, 'the call after the failure went to the reachable member');
});
