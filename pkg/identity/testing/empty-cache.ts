// An identity cache over an empty in-memory store, never started: it answers "no such
// user, team or key" for everyone, which is all tests of callers without identities need.

import { SqliteKV } from '../../storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../../storage/store.js';
import { IdentityCache } from '../identity-cache.js';

/** The cache, and its storage closed when the test ends. */
export function emptyIdentityCache(t: { after(fn: () => unknown): void }): IdentityCache {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  t.after(() => storage.close());
  return new IdentityCache({
    storage,
    users: '/registry/g/users/',
    teams: '/registry/g/teams/',
    accessKeys: '/registry/g/ownedaccesskeys/',
  });
}
