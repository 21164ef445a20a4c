// Push delivery (Watcher.receive), the fan-out's fast path: events reach a receiver
// that keeps up synchronously and in order; one that holds has them queued against the
// same bound as an iterated watch, and past it is cut off; a watch that starts between
// changes never sees one twice.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import { EVERYTHING, type StorageWatchEvent, type WatchReceiver } from '../interfaces.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { widget } from '../testing/index.js';
import { CacheWatcher, type CacheWatcherConfig } from './cache-watcher.js';
import { CachedStorage, prefixAtDepth } from './index.js';
import { CacheEntry, CacheEvent } from './watch-cache.js';

const DIR = '/registry/test.dev/widgets/';

function config(queueCapacity: number): CacheWatcherConfig {
  return {
    key: DIR,
    recursive: true,
    predicate: EVERYTHING,
    allowWatchBookmarks: false,
    bookmarkIntervalMs: 0,
    queueCapacity,
    revision: () => 0,
    typeMeta: () => undefined,
  };
}

function created(rev: number): CacheEvent {
  const name = `w${rev}`;
  const obj = widget(name) as KubeObject;
  const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rev) } };
  return new CacheEvent(
    rev,
    `${DIR}${name}`,
    'ADDED',
    new CacheEntry(`${DIR}${name}`, rev, stored),
    undefined,
  );
}

/** A receiver that records what it gets and holds when told to. */
class Recorder implements WatchReceiver {
  readonly names: string[] = [];
  ends = 0;
  endError: unknown;
  holding = false;

  event(event: StorageWatchEvent): boolean {
    this.names.push(event.object.metadata.name ?? event.type);
    return !this.holding;
  }

  end(err?: unknown): void {
    this.ends++;
    this.endError = err;
  }
}

describe('cache watcher push delivery', () => {
  it('hands each dispatched event to a receiver that keeps up at once, in order', () => {
    const watcher = new CacheWatcher(config(10));
    watcher.startAt(0, false);
    const recorder = new Recorder();
    watcher.receive(recorder);
    for (let rev = 1; rev <= 5; rev++) {
      watcher.dispatch(created(rev));
      // Synchronously: no promise turn between the cache and the writer.
      assert.equal(recorder.names.length, rev);
    }
    assert.deepEqual(recorder.names, ['w1', 'w2', 'w3', 'w4', 'w5']);
    watcher.stop();
    assert.equal(recorder.ends, 1);
    watcher.stop();
    assert.equal(recorder.ends, 1, 'the end is told once');
  });

  it('delivers what was queued before receive() first, then the rest, none twice', () => {
    const watcher = new CacheWatcher(config(10));
    watcher.startAt(0, false);
    watcher.dispatch(created(1));
    watcher.dispatch(created(2));
    const recorder = new Recorder();
    watcher.receive(recorder);
    watcher.dispatch(created(3));
    assert.deepEqual(recorder.names, ['w1', 'w2', 'w3']);
    watcher.stop();
  });

  it('queues while the receiver holds and resumes in order', () => {
    const watcher = new CacheWatcher(config(10));
    watcher.startAt(0, false);
    const recorder = new Recorder();
    const resume = watcher.receive(recorder);
    recorder.holding = true;
    watcher.dispatch(created(1)); // taken, then the receiver holds
    watcher.dispatch(created(2));
    watcher.dispatch(created(3));
    assert.deepEqual(recorder.names, ['w1']);
    recorder.holding = false;
    resume();
    watcher.dispatch(created(4));
    assert.deepEqual(recorder.names, ['w1', 'w2', 'w3', 'w4']);
    assert.equal(watcher.isStopped, false);
    watcher.stop();
  });

  it('cuts off a receiver that holds past the queue bound; it gets what was queued, then the end', () => {
    const capacity = 3;
    const watcher = new CacheWatcher(config(capacity));
    watcher.startAt(0, false);
    const recorder = new Recorder();
    const resume = watcher.receive(recorder);
    recorder.holding = true;
    for (let rev = 1; rev <= 50; rev++) watcher.dispatch(created(rev));
    assert.equal(watcher.isStopped, true, 'a receiver that fell behind is cut off');
    assert.equal(recorder.ends, 0, 'the end waits behind the queued events');
    recorder.holding = false;
    resume();
    // The one taken before it held, and at most the bound after it.
    assert.deepEqual(recorder.names, ['w1', 'w2', 'w3', 'w4']);
    assert.equal(recorder.ends, 1);
  });

  it('ends the receiver after the ERROR event of a failed watch', () => {
    const watcher = new CacheWatcher(config(3));
    watcher.startAt(0, false);
    const recorder = new Recorder();
    watcher.receive(recorder);
    watcher.dispatch(created(1));
    watcher.fail({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'gone',
      code: 410,
    });
    watcher.dispatch(created(2));
    assert.deepEqual(recorder.names, ['w1', 'ERROR']);
    assert.equal(recorder.ends, 1);
  });

  it('a watch resumed from a revision inside a batch of changes sees each later change once, in order', async () => {
    const kv = SqliteKV.open(':memory:');
    const storage = new CachedStorage({
      storage: new KVStorage(kv),
      kv,
      resourcePrefix: prefixAtDepth('/registry', 2),
    });
    try {
      assert.ok(await storage.warm([DIR]));
      const revs: string[] = [];
      for (let i = 0; i < 5; i++) {
        const obj = await storage.create(`${DIR}b${i}`, widget(`b${i}`));
        revs.push(obj.metadata.resourceVersion ?? '');
      }
      const watcher = await storage.watch(DIR, { resourceVersion: revs[1] });
      const recorder = new Recorder();
      assert.ok(watcher.receive, 'the watch cache pushes');
      watcher.receive(recorder);
      assert.deepEqual(recorder.names, ['b2', 'b3', 'b4']);
      await storage.create(`${DIR}b5`, widget('b5'));
      // The cache applies the write from its storage watch: wait for it, without a clock.
      const deadline = Date.now() + 10_000;
      while (recorder.names.length < 4 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      assert.deepEqual(recorder.names, ['b2', 'b3', 'b4', 'b5']);
      watcher.stop();
      assert.equal(recorder.ends, 1);
    } finally {
      await storage.close();
    }
  });
});
