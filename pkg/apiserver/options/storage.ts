// Opens the configured backend and wraps it in KVStorage, the one implementation
// of the Kubernetes storage semantics, and that in the watch cache (--watch-cache,
// on by default). Backends are imported lazily so a server on SQLite never loads
// the etcd client (and its gRPC stack), and vice versa.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../config.js';
import { prefixEnd, type KV } from '../../storage/kv.js';
import { BoundedKV } from '../../storage/bounded-kv.js';
import { MeteredKV } from '../../storage/metered-kv.js';
import { setStorageStatsSource, type ObjectCount } from '../../metrics/storage.js';
import type { Storage } from '../../storage/interfaces.js';
import { CachedStorage, prefixAtDepth } from '../../storage/cacher/index.js';
import { managementStrategies } from '../../registry/management/index.js';
import { collectionPrefix } from './resources.js';
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
  // Every backend call is bounded in time (a frozen etcd answers 503/504, not never),
  // then timed and counted under etcd_request_* (SQLite's too).
  const kv = new MeteredKV(new BoundedKV(await openKV(options, logger)), options.etcdPrefix);
  const resources = managementStrategies(options.apiGroup).map((s) => s.info);
  setStorageStatsSource({
    objectCounts: () => Promise.all(resources.map((r) => objectCount(kv, options.etcdPrefix, r))),
    sizeBytes: () => kv.sizeBytes(),
  });
  const { KVStorage } = await import('../../storage/store.js');
  const storage = new KVStorage(kv);
  if (!options.watchCache) return storage;
  // Keys are <prefix>/<group>/<resource>/...: one cache per resource.
  const cached = new CachedStorage({
    storage,
    kv,
    resourcePrefix: prefixAtDepth(options.etcdPrefix, 2),
    logger,
  });
  // Every kind's cache starts now, so the first request to one need not wait for its list.
  void cached.warm(
    managementStrategies(options.apiGroup).map((s) =>
      collectionPrefix(options.etcdPrefix, s.info.group, s.info.resource),
    ),
  );
  return cached;
}

/** A resource's stored objects, counted by storage without reading them; -1 when storage did not answer. */
async function objectCount(
  kv: KV,
  keyPrefix: string,
  r: { readonly group: string; readonly resource: string },
): Promise<ObjectCount> {
  const prefix = collectionPrefix(keyPrefix, r.group, r.resource);
  try {
    const page = await kv.range(prefix, prefixEnd(prefix), { count: true, limit: 1 });
    return { group: r.group, resource: r.resource, count: page.count ?? -1 };
  } catch {
    return { group: r.group, resource: r.resource, count: -1 };
  }
}
