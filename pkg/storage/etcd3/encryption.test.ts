// Encryption at rest on a real etcd: the same cases as on SQLite.

import { after, before } from 'node:test';
import { startEtcd } from '../../../hack/etcd.js';
import type { EtcdInstance } from '../../../hack/etcd.js';
import { runEncryptionConformance } from '../testing/index.js';
import { Etcd3KV } from './etcd3-kv.js';

let etcd: EtcdInstance | undefined;

before(async () => {
  etcd = await startEtcd();
});

after(async () => {
  await etcd?.stop();
});

runEncryptionConformance('etcd3', async () => {
  if (!etcd) throw new Error('etcd did not start');
  const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  return { kv, cleanup: () => kv.close() };
});
