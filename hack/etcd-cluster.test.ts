// The fault suite's etcd cluster: three members that elect a leader, survive the
// leader's SIGKILL with a new one, and take a killed member back on its data dir.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { etcdJson } from './etcd.js';
import { startEtcdCluster } from './etcd-cluster.js';

const key = Buffer.from('fault-suite-key').toString('base64');
const value = Buffer.from('kept').toString('base64');

async function read(endpoint: string): Promise<string | undefined> {
  const r = (await etcdJson(`${endpoint}/v3/kv/range`, 'POST', undefined, 5000, { key })) as {
    kvs?: Array<{ value?: string }>;
  };
  const v = r.kvs?.[0]?.value;
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString();
}

test('a 3-member etcd elects a new leader when its leader is SIGKILLed, and a restarted member has its data', async (t) => {
  const cluster = await startEtcdCluster(3);
  t.after(() => cluster.stop());
  assert.equal(cluster.endpoints.length, 3);
  const first = cluster.endpoints[0] as string;
  await etcdJson(`${first}/v3/kv/put`, 'POST', undefined, 5000, { key, value });

  const leader = await cluster.leader();
  await cluster.kill(leader);
  const deadline = Date.now() + 30_000;
  let next: number | undefined;
  while (next === undefined && Date.now() < deadline) {
    next = await cluster.leader().catch(() => undefined);
    if (next === undefined) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(next !== undefined && next !== leader, `a new leader (was ${leader}, now ${next})`);

  await cluster.restart(leader);
  // The restarted member catches up from its data dir and its peers.
  const restarted = cluster.endpoints[leader] as string;
  assert.equal(await read(restarted), 'kept');
});
