// What the watch cache adds on top of behaving like storage (the conformance suite
// checks that part): reads answered from memory, one shared event per change
// whatever the number of watchers, a bounded window, slow watchers cut off, and
// recovery when its storage watch fails.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError } from '../errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { KV, KVWatch, KVWatchHandlers, RangeOptions } from '../kv.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { EventReader, labelEquals, widget } from '../testing/index.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const DIR = '/registry/test.dev/widgets/';

/** A KV that counts the reads storage makes of it and can break its watches. */
class ObservedKV implements KV {
  reads = 0;
  revisionReads = 0;
  readonly watches: { handlers: KVWatchHandlers; watch: KVWatch }[] = [];

  constructor(readonly inner: KV) {}

  resetCounts(): void {
    this.reads = 0;
    this.revisionReads = 0;
  }

  get(key: string, revision?: number) {
    this.reads++;
    return this.inner.get(key, revision);
  }
  range(start: string, end: string, options?: RangeOptions) {
    this.reads++;
    return this.inner.range(start, end, options);
  }
  create(key: string, value: Buffer) {
    return this.inner.create(key, value);
  }
  update(key: string, value: Buffer, rev: number) {
    return this.inner.update(key, value, rev);
  }
  delete(key: string, rev: number) {
    return this.inner.delete(key, rev);
  }
  watch(prefix: string, from: number, handlers: KVWatchHandlers): KVWatch {
    const watch = this.inner.watch(prefix, from, handlers);
    this.watches.push({ handlers, watch });
    return watch;
  }
  currentRevision() {
    this.revisionReads++;
    return this.inner.currentRevision();
  }
  compactedRevision() {
    return this.inner.compactedRevision();
  }
  compact(revision: number) {
    return this.inner.compact(revision);
  }
  close() {
    return this.inner.close();
  }
}

async function cachedSqlite(
  options: { historyCapacity?: number; watchQueueCapacity?: number } = {},
): Promise<{ storage: CachedStorage; kv: ObservedKV }> {
  const kv = new ObservedKV(SqliteKV.open(':memory:'));
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    ...options,
  });
  assert.ok(await storage.warm([DIR]));
  return { storage, kv };
}

const put = (storage: CachedStorage, name: string, extra: Parameters<typeof widget>[1] = {}) =>
  storage.create(`${DIR}${name}`, widget(name, extra));

describe('watch cache', () => {
  it('answers gets and lists from memory: a consistent read costs one revision request, "0" costs nothing', async () => {
    const { storage, kv } = await cachedSqlite();
    try {
      const created: KubeObject[] = [];
      for (const n of ['a', 'b', 'c']) created.push(await put(storage, n));
      kv.resetCounts();
      assert.deepEqual(await storage.get(`${DIR}b`), created[1]);
      assert.deepEqual((await storage.getList(DIR)).items, created);
      assert.equal(kv.reads, 0, 'no storage read');
      assert.ok(kv.revisionReads <= 2, `one revision request per consistent read, got ${kv.revisionReads}`);
      kv.resetCounts();
      await storage.get(`${DIR}a`, { resourceVersion: '0' });
      await storage.getList(DIR, { resourceVersion: '0', limit: 2 });
      assert.deepEqual([kv.reads, kv.revisionReads], [0, 0]);
    } finally {
      await storage.close();
    }
  });

  it('follows storage without previous values: it keeps every state itself, so etcd reads none per event', async () => {
    const { storage, kv } = await cachedSqlite();
    try {
      await put(storage, 'a');
      await storage.guaranteedUpdate(`${DIR}a`, (cur) => ({ ...(cur as KubeObject), spec: { size: 2 } }));
      assert.deepEqual((await storage.get(`${DIR}a`))?.['spec'], { size: 2 });
      assert.ok(kv.watches.length > 0);
      for (const { handlers } of kv.watches) assert.equal(handlers.withoutPrevious, true);
    } finally {
      await storage.close();
    }
  });

  it('a consistent read reflects a write made straight to storage (as by another replica)', async () => {
    const { storage, kv } = await cachedSqlite();
    try {
      await put(storage, 'mine');
      const other = new KVStorage(kv.inner);
      for (let i = 0; i < 10; i++) {
        const theirs = await other.create(`${DIR}theirs-${i}`, widget(`theirs-${i}`));
        assert.deepEqual(await storage.get(`${DIR}theirs-${i}`), theirs);
        assert.equal((await storage.getList(DIR)).items.length, i + 2);
      }
    } finally {
      await storage.close();
    }
  });

  it('hands out frozen objects, shared between readers', async () => {
    const { storage } = await cachedSqlite();
    try {
      await put(storage, 'a', { labels: { x: '1' } });
      const first = await storage.get(`${DIR}a`);
      const second = (await storage.getList(DIR)).items[0];
      assert.ok(first && Object.isFrozen(first) && Object.isFrozen(first.metadata.labels));
      assert.equal(first, second, 'the same object, not a copy');
      assert.throws(() => {
        (first.metadata.labels as Record<string, string>)['x'] = '2';
      }, TypeError);
    } finally {
      await storage.close();
    }
  });

  it('sends each change to every watcher as one shared event whose derived forms are computed once', async () => {
    const { storage } = await cachedSqlite();
    try {
      const watchers = await Promise.all(
        Array.from({ length: 5 }, () => storage.watch(DIR, { sendInitialEvents: false })),
      );
      const selective = await storage.watch(DIR, {
        sendInitialEvents: false,
        predicate: labelEquals('x', '1'),
      });
      await put(storage, 'a', { labels: { x: '1' } });
      const events = await Promise.all(watchers.map((w) => new EventReader(w).next()));
      const selected = await new EventReader(selective).next();
      const first = events[0]!;
      for (const e of [...events, selected]) assert.equal(e, first, 'one event object for every watcher');
      assert.ok(Object.isFrozen(first));
      let encodings = 0;
      const key = {};
      for (const e of events) e.shared?.memo(key, () => ++encodings);
      assert.equal(encodings, 1);
      for (const w of [...watchers, selective]) w.stop();
    } finally {
      await storage.close();
    }
  });

  it('resumes a watch from any revision in its window, and answers 410 Expired before it', async () => {
    const { storage } = await cachedSqlite({ historyCapacity: 5 });
    try {
      const writes: KubeObject[] = [];
      for (let i = 0; i < 10; i++) writes.push(await put(storage, `w${i}`));
      const from = writes[5]!.metadata.resourceVersion!;
      const resumed = await storage.watch(DIR, { resourceVersion: from });
      const replay = await new EventReader(resumed).take(4);
      assert.deepEqual(
        replay.map((e) => e.object.metadata.name),
        ['w6', 'w7', 'w8', 'w9'],
      );
      resumed.stop();

      const old = writes[2]!.metadata.resourceVersion!;
      const expired = await new EventReader(await storage.watch(DIR, { resourceVersion: old })).drainToEnd();
      assert.equal(expired.length, 1);
      const status = expired[0]!.object as unknown as { code: number; reason: string; message: string };
      assert.equal(expired[0]!.type, 'ERROR');
      assert.equal(status.code, 410);
      assert.equal(status.reason, 'Expired');
      assert.match(status.message, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
    } finally {
      await storage.close();
    }
  });

  it('reads a list at a past revision in its window from memory, and one before the window from storage', async () => {
    const { storage, kv } = await cachedSqlite({ historyCapacity: 4 });
    const direct = new KVStorage(kv.inner);
    try {
      const a = await put(storage, 'a');
      await put(storage, 'b');
      await storage.guaranteedUpdate(`${DIR}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const mid = await storage.currentResourceVersion();
      await storage.delete(`${DIR}b`);
      await put(storage, 'c');
      kv.resetCounts();
      const atMid = await storage.getList(DIR, {
        resourceVersion: String(mid),
        resourceVersionMatch: 'Exact',
      });
      assert.equal(kv.reads, 0, 'served from memory');
      assert.deepEqual(
        atMid,
        await direct.getList(DIR, { resourceVersion: String(mid), resourceVersionMatch: 'Exact' }),
      );
      // Paging at that revision too, with the same tokens and counts storage gives.
      const page = await storage.getList(DIR, {
        resourceVersion: String(mid),
        resourceVersionMatch: 'Exact',
        limit: 1,
      });
      assert.deepEqual(
        page,
        await direct.getList(DIR, { resourceVersion: String(mid), resourceVersionMatch: 'Exact', limit: 1 }),
      );
      for (let i = 0; i < 4; i++) await put(storage, `more-${i}`);
      kv.resetCounts();
      const old = a.metadata.resourceVersion!;
      const atOld = await storage.getList(DIR, { resourceVersion: old, resourceVersionMatch: 'Exact' });
      assert.ok(kv.reads > 0, 'older than the window: storage');
      assert.deepEqual(
        atOld.items.map((o) => o.metadata.name),
        ['a'],
      );
    } finally {
      await storage.close();
    }
  });

  it('cuts off a watcher that stops reading without holding back the others', async () => {
    const { storage } = await cachedSqlite({ watchQueueCapacity: 3 });
    try {
      const idle = await storage.watch(DIR, { sendInitialEvents: false });
      const active = await storage.watch(DIR, { sendInitialEvents: false });
      const reader = new EventReader(active);
      for (let i = 0; i < 10; i++) {
        await put(storage, `n${i}`);
        assert.equal((await reader.next()).object.metadata.name, `n${i}`);
      }
      const late = await new EventReader(idle).drainToEnd();
      assert.ok(late.length <= 3, `the idle watcher kept ${late.length} events`);
      active.stop();
    } finally {
      await storage.close();
    }
  });

  it('relists when its storage watch fails: open watches end, reads go on and see new writes', async () => {
    const { storage, kv } = await cachedSqlite();
    try {
      await put(storage, 'before');
      const w = await storage.watch(DIR, { sendInitialEvents: false });
      const feed = kv.watches.at(-1);
      assert.ok(feed);
      feed.watch.cancel();
      feed.handlers.onError(new Error('connection lost'));
      assert.deepEqual(
        await new EventReader(w).drainToEnd(),
        [],
        'the open watch ends (its client re-watches)',
      );
      const after = await put(storage, 'after');
      assert.deepEqual(await storage.get(`${DIR}after`), after);
      assert.ok(await storage.warm([DIR]));
      assert.ok(kv.watches.length >= 2, 'a new storage watch feeds the cache');
      const again = await put(storage, 'again');
      kv.resetCounts();
      assert.deepEqual(
        await storage.get(`${DIR}again`, { resourceVersion: again.metadata.resourceVersion }),
        again,
      );
      assert.equal(kv.reads, 0);
    } finally {
      await storage.close();
    }
  });

  it('keys outside every cached prefix go straight to storage', async () => {
    const { storage, kv } = await cachedSqlite();
    try {
      await storage.create('/elsewhere/a', widget('a'));
      kv.resetCounts();
      assert.equal((await storage.get('/elsewhere/a'))?.metadata.name, 'a');
      assert.equal(kv.reads, 1);
      await assert.rejects(storage.get(`${DIR}missing`), (err) => isStorageError(err, 'KeyNotFound'));
    } finally {
      await storage.close();
    }
  });
});

describe('prefixAtDepth', () => {
  it('maps keys to the resource prefix two segments below the root, and nothing else', () => {
    const of = prefixAtDepth('/registry', 2);
    assert.equal(of('/registry/g/users/alice'), '/registry/g/users/');
    assert.equal(of('/registry/g/secrets/ns/x'), '/registry/g/secrets/');
    assert.equal(of('/registry/g/users/'), '/registry/g/users/');
    assert.equal(of('/registry/g/users'), undefined);
    assert.equal(of('/registry/g//x'), undefined);
    assert.equal(of('/other/g/users/x'), undefined);
    assert.equal(of('/registry/'), undefined);
  });
});
