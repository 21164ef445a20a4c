// The embedded backend: `new KVStorage(SqliteKV.open(path))`.
export { SqliteKV } from './sqlite-kv.js';
export type { SqliteKVOptions } from './sqlite-kv.js';
