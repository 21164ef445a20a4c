// The storage conformance suite through the watch cache, over SQLite: the cache
// must be indistinguishable from the storage it decorates.

import { KVStorage } from '../store.js';
import { SqliteKV } from '../sqlite/sqlite-kv.js';
import { runStorageConformance } from '../testing/index.js';
import { CachedStorage, prefixAtDepth } from './index.js';

runStorageConformance('watch cache over sqlite', async () => {
  const kv = SqliteKV.open(':memory:', { batchSize: 2 });
  // A small window and small list batches, so both are exercised.
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    historyCapacity: 50,
    pagingBatchSize: 3,
  });
  return { storage, kv, cleanup: () => storage.close() };
});
