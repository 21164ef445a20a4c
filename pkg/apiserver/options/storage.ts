// Opens the configured backend and wraps it in KVStorage, the one implementation
// of the Kubernetes storage semantics. Backends are imported lazily so a server on
// SQLite never loads the etcd client (and its gRPC stack), and vice versa.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../config.js';
import type { KV } from '../../storage/kv.js';
import type { Storage } from '../../storage/interfaces.js';
import type { ServerOptionValues } from './options.js';

export const SQLITE_FILE = 'platform.db';

export async function openKV(options: ServerOptionValues, logger: Logger): Promise<KV> {
  if (options.storageBackend === 'etcd3') {
    const { Etcd3KV } = await import('../../storage/etcd3/index.js');
    // Without --etcd-cafile an https endpoint is verified against the system's roots.
    const tls = options.etcdCaFile
      ? {
          ca: readFileSync(options.etcdCaFile),
          ...(options.etcdCertFile
            ? { cert: readFileSync(options.etcdCertFile), key: readFileSync(options.etcdKeyFile) }
            : {}),
        }
      : undefined;
    const kv = await Etcd3KV.connect({ endpoints: options.etcdServers, ...(tls ? { tls } : {}) });
    logger.info('storage: etcd3', { endpoints: options.etcdServers, prefix: options.etcdPrefix });
    return kv;
  }
  const { SqliteKV } = await import('../../storage/sqlite/sqlite-kv.js');
  const file = join(options.dataDir, SQLITE_FILE);
  const kv = SqliteKV.open(file);
  logger.info('storage: sqlite', { file, prefix: options.etcdPrefix });
  return kv;
}

export async function openStorage(options: ServerOptionValues, logger: Logger): Promise<Storage> {
  const kv = await openKV(options, logger);
  const { KVStorage } = await import('../../storage/store.js');
  return new KVStorage(kv);
}
