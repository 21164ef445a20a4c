// The Store over the watch cache: a change reaches every watcher as one decorated
// event, so the layers above (the HTTP watch writer) encode it once.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compileSchema } from '../../apis/schema/compile.js';
import { CachedStorage, prefixAtDepth } from '../../storage/cacher/index.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import { cachedListJSON } from './encoded.js';
import type { RequestContext } from '../rest/interfaces.js';
import { Store } from './store.js';
import { API_VERSION, collect, CREATE, TestStrategy, testInfo, widget } from './testing/fixtures.js';

/** A Store over the watch cache over an in-memory SQLite, and a caller. */
function cachedStore(strategy: TestStrategy): { storage: CachedStorage; store: Store; ctx: RequestContext } {
  const kv = SqliteKV.open(':memory:');
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
  });
  const store = new Store({ strategy, storage, keyPrefix: '/registry', compileSchema });
  return { storage, store, ctx: { user: { name: 'alice', groups: [] }, namespace: '', warnings: [] } };
}

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('Store over the watch cache', () => {
  it('gives every watcher the same decorated event, with a memo for its encoding', async () => {
    const { storage, store, ctx } = cachedStore(new TestStrategy(testInfo(false)));
    try {
      const { resourceVersion } = (await store.list(ctx, {})).metadata;
      const watchers = await Promise.all([1, 2, 3].map(() => store.watch(ctx, { resourceVersion })));
      await store.create(ctx, widget('g1', { spec: { size: 1, secret: 's3cret' } }), CREATE);
      const events = (await Promise.all(watchers.map((w) => collect(w, 1)))).map((e) => e[0]!);
      const first = events[0]!;
      for (const e of events) assert.equal(e, first);
      assert.equal(first.type, 'ADDED');
      assert.equal(first.object.kind, 'Gadget');
      assert.deepEqual(first.object.spec, { size: 1, secret: '' }, 'decorated as for any watcher');
      assert.ok(first.shared, 'the decorated event can carry what is derived from it');
      for (const w of watchers) w.stop();
    } finally {
      await storage.close();
    }
  });

  it('ends a pushed watch with the error when decorating an event fails, as an iterated one does', async () => {
    const strategy = new TestStrategy(testInfo(false));
    const decorate = strategy.decorate.bind(strategy);
    strategy.decorate = (obj, created, c) => {
      if (obj.metadata.name === 'bad' && !created) throw new TypeError('decorate failed');
      return decorate(obj, created, c);
    };
    const { storage, store, ctx } = cachedStore(strategy);
    try {
      const { resourceVersion } = (await store.list(ctx, {})).metadata;
      const watcher = await store.watch(ctx, { resourceVersion });
      assert.ok(watcher.receive, 'the watch cache offers push delivery through the Store');
      const ends: unknown[] = [];
      watcher.receive({ event: () => true, end: (err) => ends.push(err) });
      await store.create(ctx, widget('bad'), CREATE);
      await waitFor(() => ends.length > 0);
      // The first end is the one the HTTP writer acts on (later ones are no-ops there).
      assert.match(String((ends[0] as Error | undefined)?.message), /decorate failed/);
    } finally {
      await storage.close();
    }
  });

  it('lists cached states with no copy, as their JSON with apiVersion and kind first', async () => {
    // A kind without output decoration: its cached states are what clients get.
    const strategy = new TestStrategy(testInfo(false));
    (strategy as { decorate?: unknown }).decorate = undefined;
    const { storage, store, ctx } = cachedStore(strategy);
    try {
      // As clients send them: apiVersion and kind first.
      for (const name of ['a', 'b', 'c']) {
        const { apiVersion, ...rest } = widget(name);
        await store.create(ctx, { apiVersion, kind: 'Gadget', ...rest }, CREATE);
      }
      const list = await store.list(ctx, {});
      assert.equal(list.items.length, 3);
      assert.ok(
        list.items.every((item) => Object.isFrozen(item)),
        'the cached states themselves',
      );
      assert.equal(cachedListJSON(list), JSON.stringify(list));
      for (const item of list.items) assert.deepEqual(Object.keys(item).slice(0, 2), ['apiVersion', 'kind']);

      // Whatever order a body came in (here: no kind, metadata before apiVersion), every
      // item of the list has apiVersion and kind first, and the list's JSON is exact.
      const { apiVersion: _v, ...rest } = widget('d');
      await store.create(ctx, { ...rest, apiVersion: API_VERSION }, CREATE);
      const mixed = await store.list(ctx, {});
      assert.equal(mixed.items.length, 4);
      for (const item of mixed.items) assert.deepEqual(Object.keys(item).slice(0, 2), ['apiVersion', 'kind']);
      assert.equal(cachedListJSON(mixed), JSON.stringify(mixed));
    } finally {
      await storage.close();
    }
  });
});
