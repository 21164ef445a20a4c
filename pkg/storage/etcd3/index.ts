export { Etcd3KV } from './etcd3-kv.js';
export type { Etcd3ConnectOptions, Etcd3TLS } from './etcd3-kv.js';
