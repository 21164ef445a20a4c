// On SQLite the server is the only writer and commits in process, so a consistent
// read from the watch cache takes storage's committed revision from the backend
// (KV.committedRevision) instead of a revision read. These tests check what a
// client would notice: a consistent read still sees every write acknowledged before
// it began, even one whose watch event the cache has not applied yet; a read at a
// revision storage has not reached still fails as before; and no revision read
// reaches storage (its etcd_request_* series stays still, where etcd's counts each
// revision read that reaches storage).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { BoundedKV } from '../bounded-kv.js';
import { encodeObject } from '../codec.js';
import { StorageError } from '../errors.js';
import type { KV } from '../kv.js';
import { MeteredKV } from '../metered-kv.js';
import { registry } from '../../metrics/registry.js';
import { sample } from '../../metrics/testing.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const TEAMS = '/registry/g.example/teams/';

function team(name: string, label: string): KubeObject {
  return { apiVersion: 'g.example/v1', kind: 'Team', metadata: { name, labels: { v: label } } };
}

/** The production stack's order (pkg/server/storage.ts), counting the revision reads that reach the backend. */
class CountingKV extends MeteredKV {
  revisionReads = 0;
  constructor(inner: KV) {
    super(new BoundedKV(inner), '/registry');
  }
  override currentRevision(...args: Parameters<KV['currentRevision']>): Promise<number> {
    this.revisionReads++;
    return super.currentRevision(...args);
  }
}

async function open(): Promise<{ sqlite: SqliteKV; kv: CountingKV; storage: CachedStorage }> {
  const sqlite = SqliteKV.open(':memory:');
  const kv = new CountingKV(sqlite);
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
  });
  assert.ok(await storage.warm([TEAMS]));
  return { sqlite, kv, storage };
}

test('the wrappers pass the backend committed revision through; etcd-like backends have none', async () => {
  const sqlite = SqliteKV.open(':memory:');
  try {
    const kv = new CountingKV(sqlite);
    assert.equal(kv.committedRevision?.(), await sqlite.currentRevision());
    // A backend without one, as an etcd KV: the wrappers offer none either.
    const etcdLike = new Proxy(sqlite, {
      get: (target, name) => (name === 'committedRevision' ? undefined : Reflect.get(target, name)),
    });
    const withoutOne = new MeteredKV(new BoundedKV(etcdLike), '/r');
    assert.equal(withoutOne.committedRevision, undefined);
  } finally {
    await sqlite.close();
  }
  assert.equal(sqlite.committedRevision(), undefined, 'a closed backend cannot say');
});

test('a consistent get sees a write made beneath the cache before it began, with no revision read', async () => {
  const { sqlite, kv, storage } = await open();
  try {
    await storage.create(`${TEAMS}a`, team('a', 'one'));
    for (let i = 0; i < 20; i++) {
      // Straight to the backend, and read in the same turn: SQLite commits within the
      // update call, but the cache learns of the write only from its watch, whose
      // event comes on a later microtask, so the read must wait for it.
      const stored = (await sqlite.get(`${TEAMS}a`)).kv;
      assert.ok(stored);
      const writing = sqlite.update(`${TEAMS}a`, encodeObject(team('a', `v${i}`)), stored.modRevision);
      const reading = storage.get(`${TEAMS}a`, { resourceVersion: '' });
      const written = await writing;
      assert.ok(written.ok);
      const read = await reading;
      assert.equal(read?.metadata?.labels?.v, `v${i}`, 'the consistent read missed an acknowledged write');
      assert.equal(read?.metadata?.resourceVersion, String(written.revision));
    }
    const list = await storage.getList(TEAMS, { resourceVersion: '', recursive: true });
    assert.equal(list.resourceVersion, String(await sqlite.currentRevision()));
    assert.equal(kv.revisionReads, 0, 'consistent reads asked storage for its revision');
  } finally {
    await storage.close();
  }
});

test('a read at a revision storage has not reached is still refused', async () => {
  const { sqlite, storage } = await open();
  try {
    await storage.create(`${TEAMS}a`, team('a', 'one'));
    const current = await sqlite.currentRevision();
    const beyond = current + 5;
    const tooLarge = (err: unknown): boolean =>
      err instanceof StorageError &&
      err.code === 'TooLargeResourceVersion' &&
      err.message.includes(`Too large resource version: ${beyond}, current: ${current}`);
    await assert.rejects(storage.get(`${TEAMS}a`, { resourceVersion: String(beyond) }), tooLarge);
    await assert.rejects(storage.getList(TEAMS, { resourceVersion: String(beyond), recursive: true }), tooLarge);
  } finally {
    await storage.close();
  }
});

test('the storage metrics count a revision read only when one reaches storage: none on SQLite', async () => {
  // Upstream records etcd_request_* around a storage call (the etcd3 store's
  // GetCurrentResourceVersion); SQLite's committed revision is read in process, no call:
  // nothing to record (docs/operations.md, the storage metrics).
  const revisionReads = { operation: 'getCurrentResourceVersion', group: '', resource: '' };
  const counted = async (): Promise<number> =>
    sample(await registry.metrics(), 'etcd_requests_total', revisionReads) ?? 0;
  const consistentReads = async (storage: CachedStorage): Promise<void> => {
    await storage.create(`${TEAMS}a`, team('a', 'one'));
    for (let i = 0; i < 5; i++) await storage.get(`${TEAMS}a`, { resourceVersion: '' });
    await storage.getList(TEAMS, { resourceVersion: '', recursive: true });
  };

  const sqliteSide = await open();
  try {
    const before = await counted();
    await consistentReads(sqliteSide.storage);
    assert.equal(await counted(), before, 'SQLite counted revision reads it never made');
  } finally {
    await sqliteSide.storage.close();
  }

  // The same reads over a backend without a committed revision, as etcd: each shared
  // revision read that reaches storage is counted.
  const sqlite = SqliteKV.open(':memory:');
  const etcdLike = new Proxy(sqlite, {
    get: (target, name) => {
      if (name === 'committedRevision') return undefined;
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const kv = new CountingKV(etcdLike);
  const storage = new CachedStorage({ storage: new KVStorage(kv), kv, resourcePrefix: prefixAtDepth('/registry', 2) });
  try {
    assert.ok(await storage.warm([TEAMS]));
    const before = await counted();
    const readsBefore = kv.revisionReads;
    await consistentReads(storage);
    const made = kv.revisionReads - readsBefore;
    assert.ok(made >= 1, 'an etcd-like backend made no revision read');
    assert.equal(await counted(), before + made, 'each revision read that reached storage is counted once');
  } finally {
    await storage.close();
  }
});
