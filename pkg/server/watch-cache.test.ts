// --watch-cache: on by default (reads and watches from memory), off on request.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CachedStorage } from '../storage/cacher/index.js';
import { KVStorage } from '../storage/store.js';
import { parseFlags } from '../apiserver/options/flags.js';
import { silentLogger } from '../util/log/index.js';
import { DEFAULT_OPTIONS } from '../apiserver/options/server-run-options.js';
import { openStorage } from './storage.js';

test('--watch-cache takes true or false and says so when given anything else', () => {
  assert.equal(DEFAULT_OPTIONS.watchCache, true);
  assert.equal(parseFlags(['--watch-cache=false']).values.watchCache, false);
  assert.equal(parseFlags(['--watch-cache', 'true']).values.watchCache, true);
  assert.deepEqual(parseFlags(['--watch-cache=maybe']).problems, [
    '--watch-cache: "maybe" is not a boolean (true or false)',
  ]);
});

test('storage is served through the watch cache unless it is turned off', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'watch-cache-flag-'));
  try {
    for (const [watchCache, kind] of [
      [true, CachedStorage],
      [false, KVStorage],
    ] as const) {
      const storage = await openStorage(
        { ...DEFAULT_OPTIONS, etcdServers: [], dataDir, watchCache },
        silentLogger,
      );
      try {
        assert.ok(storage instanceof kind, `watchCache ${watchCache}`);
      } finally {
        await storage.close();
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
