// Test fixture for sqlite.test.ts: writes objects through KVStorage, reports the last
// acknowledged resourceVersion on stdout, then kills its own process without closing
// the database — the closest a test gets to pulling the plug.
// Usage: crash-writer <db path> <count>

import { KVStorage } from '../../store.js';
import { SqliteKV } from '../sqlite-kv.js';

const [path, countArg] = process.argv.slice(2);
if (!path || !countArg) throw new Error('usage: crash-writer <db path> <count>');
const storage = new KVStorage(SqliteKV.open(path));
let last = '';
for (let i = 0; i < Number(countArg); i++) {
  const name = `obj-${i}`;
  const created = await storage.create(`/registry/crash/${name}`, { metadata: { name }, spec: { i } });
  last = created.metadata.resourceVersion ?? '';
}
process.stdout.write(`${JSON.stringify({ resourceVersion: last })}\n`, () =>
  process.kill(process.pid, 'SIGKILL'),
);
