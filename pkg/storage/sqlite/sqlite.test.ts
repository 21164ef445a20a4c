// The conformance suite on SQLite (a temp file and :memory:), plus what only a
// file-backed store can show: data, revisions and compaction survive a reopen, and
// an acknowledged write survives the process dying without closing the database.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { KVStorage } from '../store.js';
import { runStorageConformance, withTimeout } from '../testing/index.js';
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

/** Runs the crash fixture (compiled .js, or .ts through tsx when the tests run from source). */
function runCrashWriter(
  dbPath: string,
  count: number,
): { resourceVersion: string; signal: NodeJS.Signals | null } {
  const script = new URL(
    `./testdata/crash-writer${extname(fileURLToPath(import.meta.url))}`,
    import.meta.url,
  );
  const path = fileURLToPath(script);
  const args = path.endsWith('.ts') ? ['--import', 'tsx', path] : [path];
  const r = spawnSync(process.execPath, [...args, dbPath, String(count)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.error, undefined);
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  assert.ok(line.startsWith('{'), `the writer printed no result; stderr: ${r.stderr}`);
  return {
    resourceVersion: (JSON.parse(line) as { resourceVersion: string }).resourceVersion,
    signal: r.signal,
  };
}

const buf = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('sqlite specifics', () => {
  it('a new store starts at revision 1, so no list ever carries resourceVersion "0"', async () => {
    const kv = SqliteKV.open(':memory:');
    const storage = new KVStorage(kv);
    try {
      assert.equal(await kv.currentRevision(), 1);
      const list = await storage.getList('/registry/things/');
      assert.equal(list.resourceVersion, '1');
      const created = await storage.create('/registry/things/a', { metadata: { name: 'a' } });
      assert.equal(created.metadata.resourceVersion, '2');
    } finally {
      await storage.close();
    }
  });

  it('data, revisions, history and compaction survive closing and reopening the file', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'data.db');
      let storage = new KVStorage(SqliteKV.open(path));
      const a = await storage.create('/registry/t/a', { metadata: { name: 'a' }, spec: { v: 1 } });
      const a2 = await storage.guaranteedUpdate('/registry/t/a', (cur) => ({ ...cur!, spec: { v: 2 } }));
      await storage.create('/registry/t/b', { metadata: { name: 'b' } });
      await storage.compact(Number(a2.metadata.resourceVersion));
      const gone = await storage.delete('/registry/t/b');
      const before = await storage.getList('/registry/t/');
      await storage.close();

      storage = new KVStorage(SqliteKV.open(path));
      try {
        const after = await storage.getList('/registry/t/');
        assert.deepEqual(after, before);
        assert.equal(await storage.currentResourceVersion(), Number(gone.metadata.resourceVersion));
        // History from before the restart is still watchable...
        const w = await storage.watch('/registry/t/', { resourceVersion: a2.metadata.resourceVersion });
        const it = w[Symbol.asyncIterator]();
        const events = [(await it.next()).value, (await it.next()).value] as {
          type: string;
          object: { metadata: { name: string } };
        }[];
        assert.deepEqual(
          events.map((e) => `${e.type} ${e.object.metadata.name}`),
          ['ADDED b', 'DELETED b'],
        );
        w.stop();
        // ...and compacted history is still gone.
        await assert.rejects(
          storage.getList('/registry/t/', {
            resourceVersion: a.metadata.resourceVersion,
            resourceVersionMatch: 'Exact',
          }),
          /too old/,
        );
        // New writes continue the revision sequence.
        const c = await storage.create('/registry/t/c', { metadata: { name: 'c' } });
        assert.equal(Number(c.metadata.resourceVersion), Number(gone.metadata.resourceVersion) + 1);
      } finally {
        await storage.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('an acknowledged write survives the process being killed without closing the database', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'crash.db');
      const { resourceVersion, signal } = runCrashWriter(path, 20);
      assert.equal(signal, 'SIGKILL', 'the writer died without closing');
      const storage = new KVStorage(SqliteKV.open(path));
      try {
        const list = await storage.getList('/registry/crash/');
        assert.equal(list.items.length, 20);
        assert.equal(await storage.currentResourceVersion(), Number(resourceVersion));
        assert.deepEqual(await storage.get('/registry/crash/obj-19'), {
          metadata: { name: 'obj-19', resourceVersion },
          spec: { i: 19 },
        });
      } finally {
        await storage.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('refuses to open a file another open store owns', async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, 'owned.db');
    const first = SqliteKV.open(path);
    try {
      assert.throws(() => SqliteKV.open(path, { lockTimeoutMs: 50 }), /database is locked/);
    } finally {
      await first.close();
      tmp.remove();
    }
  });

  it('compaction removes superseded rows and tombstones without bringing deleted keys back', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'compact.db');
      const kv = SqliteKV.open(path, { batchSize: 2 });
      let r = await kv.create('/k/a', buf('a1'));
      r = await kv.update('/k/a', buf('a2'), r.revision);
      await kv.delete('/k/a', r.revision);
      const b = await kv.create('/k/b', buf('b1'));
      await kv.update('/k/b', buf('b2'), b.revision);
      const c = await kv.create('/k/c', buf('c1'));
      await kv.delete('/k/c', c.revision);
      await kv.create('/k/c', buf('c2'));
      const current = await kv.currentRevision();
      const before = await kv.range('/k/', '/k0');
      await kv.compact(current);
      const after = await kv.range('/k/', '/k0');
      assert.deepEqual(after, before);
      assert.deepEqual(
        after.kvs.map((x) => `${x.key}=${x.value.toString('utf8')}`),
        ['/k/b=b2', '/k/c=c2'],
      );
      assert.equal((await kv.get('/k/a')).kv, undefined);
      await kv.close();

      const raw = new Database(path, { readonly: true });
      try {
        const rows = raw.prepare('SELECT name, deleted FROM kv ORDER BY id').all() as {
          name: string;
          deleted: number;
        }[];
        // Only the newest row of each live key survives: the last write is at the compaction revision.
        assert.deepEqual(rows, [
          { name: '/k/b', deleted: 0 },
          { name: '/k/c', deleted: 0 },
        ]);
      } finally {
        raw.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('the background compactor compacts to the revision of its previous run', async () => {
    const kv = SqliteKV.open(':memory:', { compactIntervalMs: 10 });
    try {
      const first = await kv.create('/k/a', buf('1'));
      await kv.update('/k/a', buf('2'), first.revision);
      const target = await kv.currentRevision();
      await withTimeout(
        (async () => {
          while ((await kv.compactedRevision()) < target) await new Promise((r) => setTimeout(r, 5));
        })(),
        'the background compaction',
      );
      await assert.rejects(kv.get('/k/a', first.revision), /compacted/);
      assert.equal((await kv.get('/k/a')).kv?.value.toString('utf8'), '2');
    } finally {
      await kv.close();
    }
  });

  it('a watch replaying history in batches while new writes land sees each revision once, in order', async () => {
    const kv = SqliteKV.open(':memory:', { batchSize: 2 });
    try {
      const start = (await kv.currentRevision()) + 1;
      for (let i = 0; i < 9; i++) await kv.create(`/w/${i}`, buf(String(i)));
      const seen: number[] = [];
      let wake: (() => void) | undefined;
      const w = kv.watch('/w/', start, {
        onEvents: (events) => {
          for (const e of events) seen.push(e.kv.modRevision);
          wake?.();
        },
        onError: (err) => {
          throw err;
        },
      });
      // Writes while the replay is still under way (it yields between batches).
      for (let i = 9; i < 15; i++) {
        await kv.create(`/w/${i}`, buf(String(i)));
        await new Promise((r) => setImmediate(r));
      }
      const end = await kv.currentRevision();
      await withTimeout(
        (async () => {
          while (seen.length < 15) await new Promise<void>((r) => (wake = r));
        })(),
        'all events',
      );
      w.cancel();
      assert.deepEqual(
        seen,
        Array.from({ length: end - start + 1 }, (_, i) => start + i),
      );
    } finally {
      await kv.close();
    }
  });

  it('a closed store refuses further use', async () => {
    const kv = SqliteKV.open(':memory:');
    await kv.close();
    await assert.rejects(kv.get('/x'), /closed/);
    await kv.close();
  });
});
