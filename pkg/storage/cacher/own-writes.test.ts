// A create's object, decoded once: the cache applies the object storage returned to
// the creator when that write's event arrives, instead of decoding the event's bytes
// again. What a user would notice if it went wrong: a cached read or a watch event
// that differs from what storage holds, so every test compares the cache's object
// with the stored bytes decoded, whichever of the event and the response came first.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import { decodeKeyValue } from '../codec.js';
import type { KV, KVEvent, KVWatch, KVWatchHandlers } from '../kv.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { widget } from '../testing/index.js';
import type { Cacher } from './cacher.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const DIR = '/registry/test.dev/widgets/';

/** Holds every watch event until release(): the creator's response then always comes first. */
function heldEvents(inner: KV): { kv: KV; release: () => void } {
  const held: { handlers: KVWatchHandlers; events: readonly KVEvent[] }[] = [];
  const kv = Object.create(inner) as KV;
  kv.watch = (prefix: string, from: number, handlers: KVWatchHandlers): KVWatch =>
    inner.watch(prefix, from, { ...handlers, onEvents: (events) => held.push({ handlers, events }) });
  return {
    kv,
    release: () => {
      for (const { handlers, events } of held.splice(0)) handlers.onEvents(events);
    },
  };
}

async function storedObject(kv: KV, key: string): Promise<KubeObject> {
  const { kv: stored } = await kv.get(key);
  assert.ok(stored, `${key} is stored`);
  return decodeKeyValue(stored);
}

interface Setup {
  /** The KV underneath, events not held. */
  readonly raw: KV;
  readonly storage: CachedStorage;
  readonly cacher: Cacher;
  /** Delivers the held watch events (a no-op when events are not held). */
  readonly release: () => void;
}

/** A cache over SQLite, ready, its watch events held back when `hold`; closed after `fn`. */
async function withCache(hold: boolean, fn: (setup: Setup) => Promise<void>): Promise<void> {
  const raw = SqliteKV.open(':memory:');
  const { kv, release } = hold ? heldEvents(raw) : { kv: raw, release: () => undefined };
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
  });
  try {
    assert.equal(await storage.warm([DIR]), true);
    const cacher = storage.cacher(DIR);
    assert.ok(cacher);
    await fn({ raw, storage, cacher, release });
  } finally {
    await storage.close();
  }
}

const exotic = (name: string): KubeObject => {
  const obj = widget(name);
  obj.metadata.labels = { '10': 'x', '9': 'y', b: 'z' };
  obj['spec'] = { zeta: [1, { b: null, a: 'é' }], alpha: true, nothing: undefined };
  return obj;
};

describe('a create through the watch cache', () => {
  it('hands the cache the object it returns, equal to the stored bytes decoded', async () => {
    await withCache(true, async ({ raw, storage, cacher, release }) => {
      const created = await storage.create(`${DIR}a`, exotic('a'));
      assert.ok(Object.isFrozen(created) && Object.isFrozen(created.metadata), 'shared objects are frozen');
      assert.equal(cacher.awaitingEvents, 1);
      release();
      assert.equal(cacher.awaitingEvents, 0);
      // The cache holds that very object, and it is what storage holds.
      assert.equal(cacher.cachedObject(`${DIR}a`), created);
      const stored = await storedObject(raw, `${DIR}a`);
      assert.deepStrictEqual(created, stored);
      assert.equal(JSON.stringify(created), JSON.stringify(stored), 'same key order as decoding');
      assert.deepStrictEqual(await storage.get(`${DIR}a`), stored);
    });
  });

  it('decodes the event when it arrives before the response, and keeps nothing', async () => {
    await withCache(false, async ({ raw, storage, cacher }) => {
      for (let i = 0; i < 20; i++) {
        const created = await storage.create(`${DIR}w${i}`, exotic(`w${i}`));
        const stored = await storedObject(raw, `${DIR}w${i}`);
        assert.deepStrictEqual(created, stored);
        assert.deepStrictEqual(await storage.get(`${DIR}w${i}`), stored);
      }
      await storage.get(`${DIR}w0`); // a consistent read: the cache has applied every write
      assert.equal(cacher.awaitingEvents, 0);
    });
  });

  it('uses a handed object only for the write that made it', async () => {
    await withCache(true, async ({ raw, storage, cacher, release }) => {
      const created = await storage.create(`${DIR}b`, exotic('b'));
      // Another writer replaces it (same key, later revision) before any event arrives.
      const other = new KVStorage(raw);
      await other.delete(`${DIR}b`);
      await other.create(`${DIR}b`, widget('b', { spec: { tier: 'other' } }));
      release();
      const cached = cacher.cachedObject(`${DIR}b`);
      assert.notEqual(cached, created);
      assert.deepStrictEqual(cached, await storedObject(raw, `${DIR}b`));
      assert.equal(cacher.awaitingEvents, 0, 'a write the cache moved past is let go');
    });
  });

  it('sends watchers the same object the creator got', async () => {
    await withCache(true, async ({ raw, storage, release }) => {
      const watcher = await storage.watch(DIR, { resourceVersion: '0', sendInitialEvents: false });
      const events = watcher[Symbol.asyncIterator]();
      const created = await storage.create(`${DIR}c`, exotic('c'));
      release();
      const event = await events.next();
      assert.equal(event.done, false);
      assert.equal(event.value.type, 'ADDED');
      assert.deepStrictEqual(event.value.object, await storedObject(raw, `${DIR}c`));
      assert.equal(event.value.object, created);
      watcher.stop();
    });
  });
});
