// The Store over the watch cache: a change reaches every watcher as one decorated
// event, so the layers above (the HTTP watch writer) encode it once.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compileSchema } from '../../apis/schema/compile.js';
import { CachedStorage, prefixAtDepth } from '../../storage/cacher/index.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import { Store } from './store.js';
import { collect, CREATE, TestStrategy, testInfo, widget } from './testing/fixtures.js';

describe('Store over the watch cache', () => {
  it('gives every watcher the same decorated event, with a memo for its encoding', async () => {
    const kv = SqliteKV.open(':memory:');
    const storage = new CachedStorage({
      storage: new KVStorage(kv),
      kv,
      resourcePrefix: prefixAtDepth('/registry', 2),
    });
    const strategy = new TestStrategy(testInfo(false));
    const store = new Store({ strategy, storage, keyPrefix: '/registry', compileSchema });
    const ctx = { user: { name: 'alice', groups: [] }, namespace: '', warnings: [] };
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
});
