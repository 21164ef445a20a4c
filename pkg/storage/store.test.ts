// KVStorage behaviour beyond the shared conformance suite: its knobs (paging batch,
// watch queue bound), its stored form, and how it reports corrupt data.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError } from './errors.js';
import { SqliteKV } from './sqlite/sqlite-kv.js';
import { KVStorage } from './store.js';
import { EventReader, widget } from './testing/helpers.js';

function open(options: ConstructorParameters<typeof KVStorage>[1] = {}): {
  storage: KVStorage;
  kv: SqliteKV;
} {
  const kv = SqliteKV.open(':memory:');
  return { storage: new KVStorage(kv, options), kv };
}

describe('KVStorage', () => {
  it('stores canonical JSON (sorted keys, no resourceVersion)', async () => {
    const { storage, kv } = open();
    try {
      await storage.create('/r/w/a', {
        metadata: { uid: 'u', name: 'a' },
        spec: { z: 1, a: 2 },
        kind: 'Widget',
      });
      const raw = (await kv.get('/r/w/a')).kv?.value.toString('utf8');
      assert.equal(raw, '{"kind":"Widget","metadata":{"name":"a","uid":"u"},"spec":{"a":2,"z":1}}');
    } finally {
      await storage.close();
    }
  });

  it('accepts resourceVersion "0" on create, as "not set"', async () => {
    const { storage } = open();
    try {
      const obj = widget('a');
      obj.metadata.resourceVersion = '0';
      const created = await storage.create('/r/w/a', obj);
      assert.notEqual(created.metadata.resourceVersion, '0');
    } finally {
      await storage.close();
    }
  });

  it('lists and sends initial watch state across many small batches at one revision', async (t) => {
    const { storage } = open({ pagingBatchSize: 2 });
    t.after(() => storage.close());
    const names = Array.from({ length: 11 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    for (const n of names) await storage.create(`/r/w/${n}`, widget(n));
    const list = await storage.getList('/r/w/');
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      names,
    );
    const w = await storage.watch('/r/w/', { sendInitialEvents: true, allowWatchBookmarks: true });
    t.after(() => w.stop());
    const events = await new EventReader(w).take(names.length + 1);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`),
      [...names.map((n) => `ADDED ${n}`), 'BOOKMARK '],
    );
    assert.equal(events.at(-1)?.object.metadata.resourceVersion, list.resourceVersion);
  });

  it('closes a watch whose consumer falls too far behind, without holding back other watches', async (t) => {
    const { storage } = open({ watchQueueCapacity: 3 });
    t.after(() => storage.close());
    const start = String(await storage.currentResourceVersion());
    const slow = await storage.watch('/r/w/', { resourceVersion: start });
    const fast = await storage.watch('/r/w/', { resourceVersion: start });
    t.after(() => fast.stop());
    const fastReader = new EventReader(fast);
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const n = `n${i}`;
      await storage.create(`/r/w/${n}`, widget(n));
      seen.push((await fastReader.next()).object.metadata.name ?? '');
    }
    assert.equal(seen.length, 10);
    // The slow watch delivers what it had queued, then ends; its client re-watches from there.
    const slowEvents = await new EventReader(slow).drainToEnd();
    assert.ok(slowEvents.length <= 3, `got ${slowEvents.length} events`);
    assert.deepEqual(
      slowEvents.map((e) => e.object.metadata.name),
      seen.slice(0, slowEvents.length),
    );
  });

  it('close() ends open watches', async () => {
    const { storage } = open();
    const w = await storage.watch('/r/w/', {});
    await storage.close();
    assert.deepEqual(await new EventReader(w).drainToEnd(), []);
  });

  it('reports stored bytes that are not an object as a corrupt-object error, on read and on watch', async (t) => {
    const { storage, kv } = open();
    t.after(() => storage.close());
    const start = String(await storage.currentResourceVersion());
    const w = await storage.watch('/r/w/', { resourceVersion: start });
    t.after(() => w.stop());
    await kv.create('/r/w/bad', Buffer.from('not json'));
    await assert.rejects(
      storage.get('/r/w/bad'),
      (err) => isStorageError(err, 'Internal') && /corrupt object/.test(err.message),
    );
    const events = await new EventReader(w).drainToEnd();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, 'ERROR');
    assert.equal((events[0]?.object as { code?: number }).code, 500);
  });
});
