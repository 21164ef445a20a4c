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
