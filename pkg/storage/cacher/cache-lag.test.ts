// How far each watch cache is behind storage, as /metrics reports it.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { exposition } from '../../metrics/registry.js';
import { sample } from '../../metrics/testing.js';
import { setWatchCacheSource } from '../../metrics/watch-cache.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { KVStorage } from '../store.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const TEAMS = '/registry/g.example/teams/';
const USERS = '/registry/g.example/users/';

function team(name: string): { apiVersion: string; kind: string; metadata: { name: string } } {
  return { apiVersion: 'g.example/v1', kind: 'Team', metadata: { name } };
}

test("a current cache lags 0 revisions, however far storage moved on under other resources", async () => {
  const kv = SqliteKV.open(':memory:');
  const storage = new CachedStorage({ storage: new KVStorage(kv), kv, resourcePrefix: prefixAtDepth('/registry', 2) });
  try {
    assert.ok(await storage.warm([TEAMS, USERS]));
    await storage.create(`${TEAMS}a`, team('a'));
    // Writes elsewhere move storage's revision past anything the teams cache applied.
    for (const n of ['b', 'c', 'd']) await storage.create(`${USERS}${n}`, team(n));
    const lags = await storage.cacheLags();
    assert.deepEqual(
      lags.map((l) => [l.prefix, l.lag]).sort(),
      [
        [TEAMS, 0],
        [USERS, 0],
      ],
    );
    assert.ok(lags.every((l) => l.revision > 0));
  } finally {
    await storage.close();
  }
});

test('a cache behind storage reports how far, and /metrics shows both gauges by group and resource', async () => {
  setWatchCacheSource({
    watchCaches: () =>
      Promise.resolve([
        { group: 'g.example', resource: 'teams', revision: 40, lag: 0 },
        { group: 'g.example', resource: 'users', revision: 12, lag: 30 },
      ]),
  });
  try {
    const { body } = await exposition();
    const labels = { group: 'g.example', resource: 'users' };
    assert.equal(sample(body, 'apiserver_watch_cache_resource_version', labels), 12);
    assert.equal(sample(body, 'platform_watch_cache_resource_version_lag', labels), 30);
    assert.equal(
      sample(body, 'platform_watch_cache_resource_version_lag', { group: 'g.example', resource: 'teams' }),
      0,
    );
  } finally {
    setWatchCacheSource(undefined);
  }
});
