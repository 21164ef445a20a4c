import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../apis/meta/types.js';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import type { Storage, Watcher } from '../storage/interfaces.js';
import { Informer } from './informer.js';

const PREFIX = '/registry/g/things/';

function thing(name: string): KubeObject {
  return { apiVersion: 'g/v1', kind: 'Thing', metadata: { name } };
}

/** Records what the informer hands over, as a set of names. */
function recorder(): {
  names: Set<string>;
  replaced: number;
  handler: ConstructorParameters<typeof Informer>[0]['handler'];
} {
  const state = { names: new Set<string>(), replaced: 0 };
  return {
    get names() {
      return state.names;
    },
    get replaced() {
      return state.replaced;
    },
    handler: {
      replace: (items) => {
        state.replaced++;
        state.names = new Set(items.map((i) => i.metadata.name ?? ''));
      },
      upsert: (obj) => state.names.add(obj.metadata.name ?? ''),
      remove: (obj) => state.names.delete(obj.metadata.name ?? ''),
    },
  };
}

async function eventually(fn: () => void): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      fn();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

test('lists, then follows every change', async (t) => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  await storage.create(PREFIX + 'a', thing('a'));
  const rec = recorder();
  const informer = new Informer({ storage, prefix: PREFIX, handler: rec.handler, name: 'things' });
  t.after(async () => {
    await informer.stop();
    await storage.close();
  });
  informer.start();
  assert.equal(await informer.waitForSync(5000), true);
  assert.deepEqual([...rec.names], ['a']);
  await storage.create(PREFIX + 'b', thing('b'));
  await storage.delete(PREFIX + 'a');
  await eventually(() => assert.deepEqual([...rec.names], ['b']));
});

test('after a watch error it relists and sees what changed meanwhile', async (t) => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  let watches = 0;
  const failFirstWatch = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === 'watch') {
        return async (key: string, opts: Parameters<Storage['watch']>[1]): Promise<Watcher> => {
          watches++;
          if (watches > 1) return target.watch(key, opts);
          // Like a watch whose start revision was compacted: one ERROR, then the end.
          await target.create(PREFIX + 'late', thing('late'));
          const events = [
            {
              type: 'ERROR' as const,
              object: { metadata: {}, kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
            },
          ];
          return {
            stop() {},
            async *[Symbol.asyncIterator]() {
              yield* events;
            },
          };
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const rec = recorder();
  const informer = new Informer({
    storage: failFirstWatch,
    prefix: PREFIX,
    handler: rec.handler,
    name: 'things',
    maxRetryDelayMs: 50,
  });
  t.after(async () => {
    await informer.stop();
    await storage.close();
  });
  informer.start();
  await eventually(() => assert.ok(rec.names.has('late')));
  assert.ok(watches >= 2);
  assert.ok(rec.replaced >= 2, 'the collection was listed again');
});

test('waits for the first list that time out leave nothing behind, and a later one is woken', async (t) => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  await storage.create(PREFIX + 'a', thing('a'));
  // Storage that cannot list yet, as at a start during an outage.
  let release!: () => void;
  const down = new Promise<void>((resolve) => (release = resolve));
  const held: Storage = Object.create(storage, {
    getList: { value: (...args: Parameters<Storage['getList']>) => down.then(() => storage.getList(...args)) },
  }) as Storage;
  const informer = new Informer({ storage: held, prefix: PREFIX, handler: recorder().handler, name: 'things' });
  t.after(async () => {
    release();
    await informer.stop();
    await storage.close();
  });
  informer.start();
  const waits = await Promise.all(Array.from({ length: 50 }, () => informer.waitForSync(5)));
  assert.deepEqual(new Set(waits), new Set([false]));
  const waiters = (informer as unknown as { syncWaiters: Set<unknown> }).syncWaiters;
  assert.equal(waiters.size, 0, 'every timed-out wait removed itself');
  const later = informer.waitForSync(5000);
  release();
  assert.equal(await later, true);
  assert.equal(waiters.size, 0);
});
