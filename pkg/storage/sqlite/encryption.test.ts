// Encryption at rest on SQLite: the encryption cases, the whole storage conformance
// suite through the value transformer (it must change nothing a client sees), and
// the file itself: platform.db and its write-ahead log never hold a plain value.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { KVStorage } from '../store.js';
import { PROVIDERS, runEncryptionConformance, runStorageConformance, widget } from '../testing/index.js';
import { TransformedKV } from '../transformed-kv.js';
import { PrefixTransformers } from '../value/transformer.js';
import { SqliteKV } from './sqlite-kv.js';

runEncryptionConformance('sqlite', async () => {
  const kv = SqliteKV.open(':memory:');
  return { kv, cleanup: () => kv.close() };
});

runStorageConformance('sqlite through an aesgcm transformer', async () => {
  const raw = SqliteKV.open(':memory:');
  const transformer = new PrefixTransformers([PROVIDERS['aesgcm']!('key1', randomBytes(32))]);
  const kv = new TransformedKV(raw, () => transformer);
  const storage = new KVStorage(kv, { pagingBatchSize: 3 });
  return { storage, kv, cleanup: () => storage.close() };
});

it('sqlite: neither platform.db nor its WAL holds a plain value, across updates, deletes and compaction', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-enc-'));
  try {
    const file = join(dir, 'platform.db');
    const transformer = new PrefixTransformers([PROVIDERS['secretbox']!('key1', randomBytes(32))]);
    const storage = new KVStorage(new TransformedKV(SqliteKV.open(file), () => transformer));
    const secret = `s3cr3t-${randomBytes(8).toString('hex')}`;
    for (let i = 0; i < 20; i++) {
      const key = `/registry/g/sharedsecrets/default/s${i}`;
      await storage.create(key, widget(`s${i}`, { spec: { data: { v: secret } } }));
      await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { data: { v: `${secret}-${i}` } } }));
      if (i % 3 === 0) await storage.delete(key);
    }
    const bytes = Buffer.concat([readFileSync(file), existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`) : Buffer.alloc(0)]);
    assert.ok(bytes.includes(Buffer.from('k8s:enc:secretbox:v1:key1:')), 'no encrypted value found: the check would prove nothing');
    assert.ok(!bytes.includes(Buffer.from(secret)), 'a plain value is in platform.db or its WAL');
    await storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
