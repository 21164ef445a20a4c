// The lean client across members of a real 3-member etcd: a member down at startup
// is passed over, and when the member in use dies, calls move to another one and
// a watch resumes there without losing or repeating an event.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEtcdCluster } from '../../../hack/etcd-cluster.js';
import type { KVEvent } from '../kv.js';
import { Etcd3KV } from './etcd3-kv.js';

const PREFIX = '/failover/';

test(
  'a member down at startup, then the member in use killed: writes go on, the watch misses nothing',
  { timeout: 120_000 },
  async (t) => {
    const cluster = await startEtcdCluster(3);
    t.after(() => cluster.stop());

    // The client tries members in the order given: the first is down.
    await cluster.kill(0);
    const kv = await Etcd3KV.connect({ endpoints: cluster.endpoints });
    t.after(() => kv.close());

    const from = (await kv.currentRevision()) + 1;
    const seen: KVEvent[] = [];
    let watchError: Error | undefined;
    const watch = kv.watch(PREFIX, from, {
      onEvents: (events) => seen.push(...events),
      onError: (err) => (watchError = err),
    });
    t.after(() => watch.cancel());

    const acked = new Map<string, number>();
    const write = async (name: string): Promise<boolean> => {
      try {
        const res = await kv.create(`${PREFIX}${name}`, Buffer.from(name));
        assert.ok(res.ok, `create of ${name} was refused`);
        acked.set(`${PREFIX}${name}`, res.revision);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 10; i++) assert.ok(await write(`before-${i}`), 'writes succeed with one member down');

    // Member 0 is down, so the client is on member 1; bring 0 back and kill 1.
    await cluster.restart(0);
    await cluster.kill(1);
    let failures = 0;
    const deadline = Date.now() + 60_000;
    for (let i = 0; i < 20 && Date.now() < deadline;) {
      if (await write(`after-${i}`)) i++;
      else failures++;
    }
    assert.equal(acked.size, 30, 'every write eventually succeeded on a live member');
    // Only calls that were on the dead member's connection, or the next few while the
    // cluster re-elected a leader, may fail; the bound is generous.
    assert.ok(failures <= 50, `${failures} failed writes after the kill`);
    assert.ok(
      (await kv.get(`${PREFIX}after-19`)).kv !== undefined,
      'a read after the kill sees the last write',
    );

    const until = Date.now() + 30_000;
    while (seen.length < acked.size && watchError === undefined && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(watchError, undefined);
    const revisions = seen.map((e) => e.kv.modRevision);
    assert.deepEqual(
      revisions,
      [...revisions].sort((a, b) => a - b),
      'events in revision order',
    );
    assert.deepEqual(
      new Map(seen.map((e) => [e.kv.key, e.kv.modRevision])),
      acked,
      'the watch saw every acknowledged write exactly once, at its revision',
    );
    assert.equal(seen.length, acked.size, 'no event repeated');
  },
);
