// The storage conformance suite through the watch cache over a real etcd, and what
// only several replicas can show: a consistent read through one replica's cache
// reflects a write acknowledged by another replica just before it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd } from '../../../hack/etcd.js';
import type { EtcdInstance } from '../../../hack/etcd.js';
import { Etcd3KV } from '../etcd3/etcd3-kv.js';
import { KVStorage } from '../store.js';
import { runStorageConformance, widget } from '../testing/index.js';
import { eventually } from '../../util/eventually.js';
import { CachedStorage, prefixAtDepth } from './index.js';

let etcd: EtcdInstance | undefined;

before(async () => {
  etcd = await startEtcd();
});

after(async () => {
  await etcd?.stop();
});

async function replica(): Promise<{ storage: CachedStorage; kv: Etcd3KV }> {
  if (!etcd) throw new Error('etcd did not start');
  const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    historyCapacity: 50,
    pagingBatchSize: 3,
  });
  return { storage, kv };
}

/** Counts the reads `kv` serves from now on (not revision requests). */
function countReads(kv: Etcd3KV): () => { range: number; get: number } {
  const counts = { range: 0, get: 0 };
  const range = kv.range.bind(kv);
  const get = kv.get.bind(kv);
  kv.range = (...args) => {
    counts.range++;
    return range(...args);
  };
  kv.get = (...args) => {
    counts.get++;
    return get(...args);
  };
  return () => ({ ...counts });
}

runStorageConformance('watch cache over etcd3', async () => {
  const { storage, kv } = await replica();
  return { storage, kv, cleanup: () => storage.close() };
});

describe('watch cache over etcd3, two replicas', () => {
  it('a consistent read on one replica reflects every write acknowledged by the other', async () => {
    const a = await replica();
    const b = await replica();
    try {
      const dir = '/registry/replicas/widgets/';
      // Both caches are up before the writes, so b's answers come from its cache.
      await a.storage.warm([dir]);
      await b.storage.warm([dir]);
      for (let i = 0; i < 20; i++) {
        const name = `w-${i}`;
        const created = await a.storage.create(`${dir}${name}`, widget(name, { spec: { i } }));
        assert.deepEqual(await b.storage.get(`${dir}${name}`), created);
        const list = await b.storage.getList(dir);
        assert.equal(list.items.length, i + 1);
        assert.ok(Number(list.resourceVersion) >= Number(created.metadata.resourceVersion));
        // A write elsewhere moves the revision without an event for b's cache of this prefix.
        await a.storage.create(`/registry/replicas/others/o-${i}`, widget(`o-${i}`));
        const current = await a.storage.currentResourceVersion();
        const again = await b.storage.getList(dir);
        assert.ok(
          Number(again.resourceVersion) >= current,
          'the list is as new as the latest write anywhere',
        );
      }
      // And b answers from memory: after a write elsewhere it asks etcd for the current
      // revision only (a progress request, or the write-order watch, proves the rest).
      await a.storage.create('/registry/replicas/others/last', widget('last'));
      const reads = countReads(b.kv);
      const list = await b.storage.getList(dir);
      assert.equal(list.items.length, 20);
      assert.deepEqual(reads(), { range: 0, get: 0 });
      // Even when the latest write is outside the registry (another user of the same etcd).
      await a.kv.create(`/elsewhere/${Date.now()}`, Buffer.from('x'));
      const outside = countReads(b.kv);
      assert.equal((await b.storage.getList(dir)).items.length, 20);
      assert.deepEqual(outside(), { range: 0, get: 0 });
    } finally {
      await a.storage.close();
      await b.storage.close();
    }
  });
});

describe('watch cache over etcd3: its watch streams', () => {
  it('opens one stream for every cache where etcd cannot order progress requests, one per cache elsewhere', async () => {
    // No cache has started yet: every watch it opens goes through the wrapper below.
    const { storage, kv } = await replica();
    const open = new Map<object, string>();
    const watch = kv.watch.bind(kv);
    kv.watch = (prefix, from, handlers) => {
      const w = watch(prefix, from, handlers);
      const id = {};
      open.set(id, prefix);
      const cancel = w.cancel.bind(w);
      return { ...w, cancel: () => (open.delete(id), cancel()) };
    };
    try {
      const teams = '/registry/streams/teams/';
      const users = '/registry/streams/users/';
      await storage.warm([teams, users]);
      const team = await storage.create(`${teams}t`, widget('t'));
      const user = await storage.create(`${users}u`, widget('u'));
      // Both caches have the writes (a consistent read is answered once they do).
      assert.deepEqual(await storage.get(`${teams}t`), team);
      assert.deepEqual(await storage.get(`${users}u`), user);
      assert.equal(storage.cacher(teams)?.revision, Number(user.metadata.resourceVersion));
      const probe = watch('/registry/streams/probe/', 0, { onEvents: () => undefined, onError: () => undefined });
      const ordered = probe.requestProgress !== undefined;
      probe.cancel();
      assert.deepEqual(
        [...open.values()].sort(),
        ordered ? [teams, users] : [''],
        ordered
          ? 'each cache follows its own prefix (progress requests prove it current)'
          : 'the write-order watch of the whole keyspace feeds both caches: each write is sent once',
      );
    } finally {
      await storage.close();
    }
  });
});

describe('watch cache over etcd3: caches that start while writes flow', () => {
  it('each has every write to its prefix, once, when it lists behind the shared watch', async () => {
    const { storage, kv } = await replica();
    const prefixes = ['a', 'b', 'c', 'd'].map((r) => `/registry/flow/${r}/`);
    const written = new Map<string, number>(prefixes.map((p) => [p, 0]));
    try {
      await storage.warm([prefixes[0]!]);
      let writing = true;
      // Writes to every prefix (through the raw KV, so no cache is handed them) while
      // the other caches list and join: their lists land behind the watch.
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const prefix = prefixes[i % prefixes.length]!;
          await kv.create(`${prefix}o-${i}`, Buffer.from(JSON.stringify(widget(`o-${i}`))));
          written.set(prefix, (written.get(prefix) ?? 0) + 1);
        }
      })();
      for (const prefix of prefixes.slice(1)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(await storage.warm([prefix]), true);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      writing = false;
      await writer;
      for (const prefix of prefixes) {
        // Each cache reaches exactly the objects written (a missed event would leave it
        // short for good, one applied twice over); then a consistent list is proven
        // current from memory at once, and holds them.
        await eventually(async () => assert.equal(storage.cacher(prefix)?.size, written.get(prefix)));
        const reads = countReads(kv);
        const list = await storage.getList(prefix);
        assert.deepEqual(reads(), { range: 0, get: 0 }, `${prefix} is answered by its cache`);
        assert.equal(list.items.length, written.get(prefix), `${prefix} has every write`);
      }
    } finally {
      await storage.close();
    }
  });
});
