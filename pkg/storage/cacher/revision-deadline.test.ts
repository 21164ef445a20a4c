// A consistent read from the watch cache waits for storage's current revision
// (a read shared with other readers, free of any one request's deadline). The
// reader itself stops waiting at its own request's deadline, with the storage
// timeout a storage call gives (504 to the client), instead of holding the request
// for as long as a stalled storage keeps the shared read out.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StorageDeadline } from '../deadline.js';
import { StorageError } from '../errors.js';
import { RevisionWaitExpired, type RevisionReader } from '../revision-batcher.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const TEAMS = '/registry/g.example/teams/';

/** Storage whose current revision never comes (etcd frozen): only the reader's deadline ends the wait. */
class StalledRevisions implements RevisionReader {
  waits = 0;
  current(deadlineAt = Infinity): Promise<number> {
    this.waits++;
    return new Promise<number>((_resolve, reject) => {
      // Gives up by itself after 5 s, so that a reader ignoring its deadline fails the
      // test with this error rather than hanging it.
      const giveUp = setTimeout(() => reject(new Error('the stalled read gave up')), 5000);
      const expire = (err: unknown): void => {
        clearTimeout(giveUp);
        reject(err);
      };
      if (deadlineAt !== Infinity)
        setTimeout(() => expire(new RevisionWaitExpired()), Math.max(0, deadlineAt - Date.now()));
    });
  }
}

test('a consistent get stops waiting for the revision at its request deadline, as a storage timeout', async () => {
  const kv = SqliteKV.open(':memory:');
  const stalled = new StalledRevisions();
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    revisionReader: () => stalled,
  });
  try {
    assert.ok(await storage.warm([TEAMS]));
    await storage.create(`${TEAMS}a`, { apiVersion: 'g.example/v1', kind: 'Team', metadata: { name: 'a' } });
    const started = Date.now();
    const deadline = new StorageDeadline(started + 300);
    await assert.rejects(
      storage.get(`${TEAMS}a`, { resourceVersion: '' }, deadline),
      (err: unknown) => err instanceof StorageError && err.code === 'Timeout',
    );
    assert.equal(stalled.waits, 1, 'the get asked for the revision');
    // Bounded, not timed: the wait ended long before any storage bound (4 s) would have.
    assert.ok(Date.now() - started < 3000, `waited ${Date.now() - started} ms`);

    // An abandoned request does not wait at all.
    const abandoned = new StorageDeadline(Date.now() + 60_000, () => true);
    await assert.rejects(
      storage.get(`${TEAMS}a`, { resourceVersion: '' }, abandoned),
      (err: unknown) => err instanceof StorageError && err.code === 'Timeout',
    );
    assert.equal(stalled.waits, 1);
  } finally {
    await storage.close();
  }
});
