// A frozen and a killed etcd, against the whole server in this process: requests
// fail fast with 503/504 and Retry-After and a message that names storage (never a
// masked 500), a write whose outcome is unknown says so, and the server serves
// again soon after etcd is back. Loopback only; etcd from hack/etcd.ts.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startEtcd } from '../../hack/etcd.js';
import { eventually } from '../util/eventually.js';
import { callServer, startWithAdmin } from './testing.js';

const GROUP = 'management.platform.dev';
const TEAMS = `/kubernetes/management/apis/${GROUP}/v1/teams`;
/** What the issue allows a request to wait on storage. */
const STORAGE_WAIT_LIMIT_MS = 10_000;

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly body: { message?: string; reason?: string };
  readonly ms: number;
}

async function call(url: string, ca: string, token: string, method = 'GET', body?: unknown): Promise<Answer> {
  const a = await callServer(url, ca, token, method, body);
  const retryAfter = a.headers['retry-after'];
  return {
    status: a.status,
    retryAfter,
    body: a.text.startsWith('{') ? (JSON.parse(a.text) as Answer['body']) : {},
    ms: a.ms,
  };
}

function team(name: string): unknown {
  return { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name }, spec: {} };
}

/** A storage failure as clients must see it: 503 or 504, Retry-After, storage named, in bounded time. */
function assertStorageFailure(a: Answer, what: string): void {
  assert.ok(a.status === 503 || a.status === 504, `${what}: ${a.status} ${JSON.stringify(a.body)}`);
  assert.ok(Number(a.retryAfter) > 0, `${what}: Retry-After ${a.retryAfter}`);
  assert.match(a.body.message ?? '', /storage/, what);
  assert.ok(a.ms < STORAGE_WAIT_LIMIT_MS, `${what} took ${a.ms} ms`);
}

test('a frozen or killed etcd fails requests fast with 503/504 and the server recovers', async (t) => {
  const etcd = await startEtcd();
  t.after(() => etcd.stop());
  const dataDir = mkdtempSync(join(tmpdir(), 'outage-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { server, ca, token } = await startWithAdmin(
    dataDir,
    {},
    {
      storageBackend: 'etcd3',
      etcdServers: [etcd.endpoint],
      etcdPrefix: '/outage-test',
    },
  );
  t.after(() => server.stop());
  const base = server.url;
  assert.equal((await call(`${base}${TEAMS}`, ca, token, 'POST', team('before'))).status, 201);

  etcd.signal('SIGSTOP');
  let frozen = true;
  t.after(() => {
    if (frozen) etcd.signal('SIGCONT');
  });
  // The request's own deadline bounds its storage calls (below the per-call bound), and
  // a write out at that deadline says it may have been applied. First, while the etcd
  // client still sends (after timeouts it opens its circuit and fails calls at once).
  const short = await call(`${base}${TEAMS}?timeout=1s`, ca, token, 'POST', team('short'));
  assert.equal(short.status, 504, JSON.stringify(short.body));
  assert.match(short.body.message ?? '', /the operation may have succeeded/);
  assert.ok(short.ms < STORAGE_WAIT_LIMIT_MS, `create ?timeout=1s took ${short.ms} ms`);
  console.log(`frozen: create ?timeout=1s ${short.status} in ${short.ms} ms`);
  // A consistent read asks storage for its revision; a write needs storage.
  const read = await call(`${base}${TEAMS}/before`, ca, token);
  assertStorageFailure(read, 'get while frozen');
  const write = await call(`${base}${TEAMS}`, ca, token, 'POST', team('during'));
  assertStorageFailure(write, 'create while frozen');
  console.log(`frozen: get ${read.status} in ${read.ms} ms, create ${write.status} in ${write.ms} ms`);
  if (write.status === 504) assert.match(write.body.message ?? '', /may have succeeded/);

  // /readyz answers within a second (its storage probe is cached and bounded) and says not ready.
  const probe = await call(`${base}/readyz`, ca, token);
  assert.notEqual(probe.status, 200);
  assert.ok(probe.ms < 1500, `/readyz took ${probe.ms} ms`);
  console.log(`frozen: /readyz ${probe.status} in ${probe.ms} ms`);

  etcd.signal('SIGCONT');
  frozen = false;
  const thawed = Date.now();
  await eventually(
    async () => assert.equal((await call(`${base}${TEAMS}/before`, ca, token)).status, 200),
    15_000,
    100,
  );
  await eventually(
    async () => assert.equal((await call(`${base}/readyz`, ca, token)).status, 200),
    15_000,
    100,
  );
  const recoveryMs = Date.now() - thawed;
  assert.ok(recoveryMs < 15_000, `served again ${recoveryMs} ms after etcd thawed`);
  console.log(`thawed: served again ${recoveryMs} ms after SIGCONT`);

  await etcd.stop();
  const downRead = await call(`${base}${TEAMS}/before`, ca, token);
  assertStorageFailure(downRead, 'get with etcd down');
  const downWrite = await call(`${base}${TEAMS}`, ca, token, 'POST', team('after'));
  assertStorageFailure(downWrite, 'create with etcd down');
  console.log(
    `down: get ${downRead.status} in ${downRead.ms} ms, create ${downWrite.status} in ${downWrite.ms} ms`,
  );
});
