// The storage conformance suite on a real etcd: KVStorage over Etcd3KV must behave
// exactly as it does over SQLite. One etcd serves both runs (each run uses its own
// key prefixes); the second run reads in small batches to exercise paging over etcd.

import { after, before } from 'node:test';
import { startEtcd } from '../../../hack/etcd.js';
import type { EtcdInstance } from '../../../hack/etcd.js';
import { KVStorage } from '../store.js';
import { runStorageConformance } from '../testing/index.js';
import { Etcd3KV } from './etcd3-kv.js';

let etcd: EtcdInstance | undefined;

before(async () => {
  etcd = await startEtcd();
});

after(async () => {
  await etcd?.stop();
});

async function setup(options: { pagingBatchSize?: number } = {}) {
  if (!etcd) throw new Error('etcd did not start');
  const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  const storage = new KVStorage(kv, options);
  return { storage, kv, cleanup: () => storage.close() };
}

runStorageConformance('etcd3', () => setup());
runStorageConformance('etcd3 (paging batch 3)', () => setup({ pagingBatchSize: 3 }));
