// The watch cache's window as a client sees it, sized as kube-apiserver sizes it
// (event-history.ts), on a fake clock: a burst larger than the old fixed 10,000
// events stays resumable, slow writes move the window and a watch from before it
// gets upstream's 410, and a window that grew through a burst shrinks back.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { exposition } from '../../metrics/registry.js';
import { sample } from '../../metrics/testing.js';
import { setWatchCacheSource } from '../../metrics/watch-cache.js';
import { EventReader, widget } from '../testing/index.js';
import { CachedStorage, prefixAtDepth } from './index.js';
import { WatchCache, CacheEntry } from './watch-cache.js';
import { defaultHistorySizing } from './event-history.js';

const DIR = '/registry/test.dev/widgets/';

/** A cached SQLite store on a clock the test moves, counting the range reads that reach storage. */
async function fakeClockStore() {
  const clock = { now: 1_000_000 };
  const kv = SqliteKV.open(':memory:');
  const counts = { ranges: 0 };
  const range = kv.range.bind(kv);
  kv.range = (...args) => {
    counts.ranges++;
    return range(...args);
  };
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    now: () => clock.now,
  });
  assert.ok(await storage.warm([DIR]));
  const cacher = storage.cacher(DIR)!;
  /** Creates `n` objects named `${name}-i`, the clock moving `stepMs` before each. */
  const write = async (name: string, n: number, stepMs: number): Promise<KubeObject[]> => {
    const out: KubeObject[] = [];
    for (let i = 0; i < n; i++) {
      clock.now += stepMs;
      out.push(await storage.create(`${DIR}${name}-${i}`, widget(`${name}-${i}`)));
    }
    // Every write applied to the cache before the clock moves on.
    await storage.get(`${DIR}${name}-${n - 1}`);
    return out;
  };
  return { storage, kv, clock, counts, cacher, write };
}

const rvOf = (obj: KubeObject): number => Number(obj.metadata.resourceVersion);

describe('watch cache history window', () => {
  it('keeps a burst of 12,000 writes within 75 s: a watch resumes from before its first write', async () => {
    const { storage, cacher, write } = await fakeClockStore();
    try {
      const before = await write('seed', 1, 0);
      const burst = await write('burst', 12_000, 5); // 60 s of writes
      assert.deepEqual(cacher.history, { length: 12_001, capacity: 12_800 });
      const watch = await storage.watch(DIR, { resourceVersion: before[0]!.metadata.resourceVersion! });
      const events = await new EventReader(watch).take(12_000);
      watch.stop();
      assert.ok(events.every((e) => e.type === 'ADDED'));
      assert.deepEqual(
        events.map((e) => e.object.metadata.resourceVersion),
        burst.map((o) => o.metadata.resourceVersion),
      );
    } finally {
      await storage.close();
    }
  });

  it('serves a paged list continued after such a burst, and a list at a revision before it, from memory', async () => {
    const { storage, kv, counts, write } = await fakeClockStore();
    const direct = new KVStorage(kv);
    try {
      await write('page', 10, 0);
      const first = await storage.getList(DIR, { limit: 4 });
      assert.ok(first.continue);
      const at = first.resourceVersion;
      await write('burst', 11_000, 5);
      counts.ranges = 0;
      const next = await storage.getList(DIR, { limit: 4, continue: first.continue });
      const exact = await storage.getList(DIR, { resourceVersion: at, resourceVersionMatch: 'Exact' });
      assert.equal(counts.ranges, 0, 'no storage read');
      assert.deepEqual(next, await direct.getList(DIR, { limit: 4, continue: first.continue }));
      assert.equal(next.resourceVersion, at);
      assert.equal(exact.items.length, 10);
      assert.deepEqual(exact, await direct.getList(DIR, { resourceVersion: at, resourceVersionMatch: 'Exact' }));
    } finally {
      await storage.close();
    }
  });

  it('moves with slow writes: a watch from before the window gets 410 with its first resumable revision', async () => {
    const { storage, cacher, write } = await fakeClockStore();
    try {
      const writes = await write('slow', 150, 1000); // one a second: never 100 within 75 s
      assert.deepEqual(cacher.history, { length: 100, capacity: 100 });
      const oldest = rvOf(writes[50]!) - 1;
      const requested = writes[10]!.metadata.resourceVersion!;
      const expired = await new EventReader(await storage.watch(DIR, { resourceVersion: requested })).drainToEnd();
      assert.equal(expired.length, 1);
      assert.equal(expired[0]!.type, 'ERROR');
      assert.deepEqual(expired[0]!.object, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${requested} (${oldest})`,
        reason: 'Expired',
        code: 410,
      });
      // The revision the message names is itself resumable: the next event is the oldest kept.
      const resumed = await storage.watch(DIR, { resourceVersion: String(oldest) });
      const [firstKept] = await new EventReader(resumed).take(1);
      resumed.stop();
      assert.equal(firstKept!.object.metadata.name, 'slow-50');
    } finally {
      await storage.close();
    }
  });

  it('holds no copy of the current state: the latest event and a read hand out the same object', async () => {
    const { storage, write } = await fakeClockStore();
    try {
      const [created] = await write('shared', 1, 0);
      const updated = await storage.guaranteedUpdate(`${DIR}shared-0`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const watch = await storage.watch(DIR, { resourceVersion: created!.metadata.resourceVersion! });
      const [event] = await new EventReader(watch).take(1);
      watch.stop();
      const read = await storage.get(`${DIR}shared-0`);
      assert.deepEqual(read, updated);
      assert.equal(event!.object, read, 'the history event and the cached state share one object');
    } finally {
      await storage.close();
    }
  });

  it('shrinks back to 100 events once writes slow down after a burst, as /metrics shows', async () => {
    const { storage, cacher, write } = await fakeClockStore();
    /** A scrape, as the server wires the source (pkg/server/storage.ts), without the group/resource split. */
    const scrape = async (): Promise<(number | undefined)[]> => {
      // Set anew each time: a scrape reuses the caches' states read within the last second.
      setWatchCacheSource({
        watchCaches: async () =>
          (await storage.cacheLags()).map((c) => ({ group: 'test.dev', resource: 'widgets', ...c })),
      });
      const { body } = await exposition();
      const labels = { group: 'test.dev', resource: 'widgets' };
      return [
        sample(body, 'watch_cache_capacity', labels),
        sample(body, 'watch_cache_capacity_increase_total', labels),
        sample(body, 'watch_cache_capacity_decrease_total', labels),
      ];
    };
    try {
      assert.deepEqual(await scrape(), [100, 0, 0]);
      await write('burst', 400, 0);
      assert.deepEqual(cacher.history, { length: 400, capacity: 400 });
      assert.deepEqual(await scrape(), [400, 2, 0]);
      await write('later', 5, 100_000);
      assert.deepEqual(cacher.history, { length: 100, capacity: 100 });
      assert.deepEqual(await scrape(), [100, 2, 2]);
    } finally {
      setWatchCacheSource(undefined);
      await storage.close();
    }
  });
});

describe('watch cache window start', () => {
  const entry = (key: string, rev: number): CacheEntry =>
    new CacheEntry(key, rev, { apiVersion: 'v1', kind: 'Widget', metadata: { name: key, resourceVersion: String(rev) } });

  it('a burst of 20,000 events within 75 s is all kept: the window still starts at the list', () => {
    let now = 0;
    const cache = new WatchCache(defaultHistorySizing(75_000, () => now));
    cache.replace([], 7);
    for (let rev = 8; rev < 20_008; rev++) {
      now += 3; // 60 s in all
      cache.apply(`k${rev % 500}`, rev, entry(`k${rev % 500}`, rev));
    }
    assert.equal(cache.historyLength, 20_000);
    assert.equal(cache.historyCapacity, 25_600);
    assert.equal(cache.windowStart, 7);
    assert.equal(cache.eventsAfter(7).length, 20_000);
    // The state right after the list is rebuilt from the history.
    assert.equal(cache.snapshot(7).count('', ''), 0);
    assert.equal(cache.snapshot(507).count('', ''), 500);
  });

  it('past the upper bound the oldest go, and the window starts one below the oldest kept', () => {
    const cache = new WatchCache({ lowerBound: 2, upperBound: 8, freshMs: 75_000, now: () => 0 });
    cache.replace([], 10);
    for (let rev = 11; rev <= 30; rev += 2) cache.apply('a', rev, entry('a', rev)); // 10 events, 11..29
    assert.equal(cache.historyCapacity, 8);
    assert.equal(cache.eventsAfter(0)[0]!.rev, 15);
    assert.equal(cache.windowStart, 14);
    cache.compact(20);
    assert.equal(cache.windowStart, 20, 'never before what storage compacted');
    cache.replace([], 40);
    assert.equal(cache.windowStart, 40, 'a relist starts the window at the list');
    assert.equal(cache.historyCapacity, 8);
  });

  it('never starts after a dropped event, even one that shares its revision with the oldest kept', () => {
    const cache = new WatchCache({ lowerBound: 2, upperBound: 2, freshMs: 75_000, now: () => 0 });
    cache.replace([], 10);
    // One storage transaction changing two keys at revision 12 (etcdctl txn; never the server).
    cache.apply('a', 11, entry('a', 11));
    cache.apply('b', 12, entry('b', 12));
    cache.apply('c', 12, entry('c', 12));
    assert.equal(cache.eventsAfter(0)[0]!.rev, 12);
    assert.equal(cache.windowStart, 11, 'one below the oldest kept');
    cache.apply('d', 13, entry('d', 13)); // drops b at 12; c at 12 is the oldest kept
    assert.equal(cache.windowStart, 12, 'not 11: a watch from 11 would miss b');
  });
});
