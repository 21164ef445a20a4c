// Opens the configured backend and wraps it in KVStorage, the one implementation
// of the Kubernetes storage semantics, and that in the watch cache (--watch-cache,
// on by default). Backends are imported lazily so a server on SQLite never loads
// the etcd client (and its gRPC stack), and vice versa.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../util/log/index.js';
import { prefixEnd, type KV } from '../storage/kv.js';
import { BoundedKV } from '../storage/bounded-kv.js';
import { MeteredKV } from '../storage/metered-kv.js';
import { setWatchCacheSource } from '../metrics/watch-cache.js';
import { setStorageStatsSource, type ObjectCount } from '../metrics/storage.js';
import type { Storage } from '../storage/interfaces.js';
import { CachedStorage, eventFreshMs, prefixAtDepth } from '../storage/cacher/index.js';
import { managementStrategies } from '../registry/management/index.js';
import { rewriteStaleValues, TransformedKV } from '../storage/transformed-kv.js';
import type { Encryption } from './encryption.js';
import { collectionPrefix } from './resources.js';
import type { ServerOptionValues } from '../apiserver/options/server-run-options.js';

export const SQLITE_FILE = 'platform.db';

export async function openKV(options: ServerOptionValues, logger: Logger): Promise<KV> {
  if (options.storageBackend === 'etcd3') {
    const { Etcd3KV } = await import('../storage/etcd3/index.js');
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
  const { SqliteKV } = await import('../storage/sqlite/sqlite-kv.js');
  const file = join(options.dataDir, SQLITE_FILE);
  const kv = SqliteKV.open(file);
  logger.info('storage: sqlite', { file, prefix: options.etcdPrefix });
  return kv;
}

/**
 * With the generated default encryption, values stored before it (plain text) are
 * rewritten now, twice so SQLite's log keeps no plain previous value, then history
 * is compacted and the write-ahead log emptied: afterwards platform.db and its WAL
 * hold no plain Global Secret value.
 */
async function encryptExistingValues(
  raw: KV,
  kv: KV,
  prefixes: readonly string[],
  logger: Logger,
): Promise<void> {
  let rewritten = 0;
  let unreadable = 0;
  for (const prefix of prefixes) {
    const result = await rewriteStaleValues(kv, prefix, { times: 2 });
    rewritten += result.rewritten;
    unreadable += result.unreadable;
  }
  if (unreadable > 0) {
    logger.warn('encryption: some stored values cannot be read with the configured providers', {
      unreadable,
    });
  }
  if (rewritten === 0) return;
  await raw.compact(await raw.currentRevision());
  // SQLite only: empty its write-ahead log (etcd's own compaction and defrag are the operator's).
  const checkpoint = (raw as { checkpoint?: () => Promise<void> }).checkpoint;
  if (checkpoint) await checkpoint.call(raw);
  logger.info('encryption: rewrote values stored before encryption', { rewritten });
}

export async function openStorage(
  options: ServerOptionValues,
  logger: Logger,
  encryption?: Encryption,
): Promise<Storage> {
  const backend = await openKV(options, logger);
  // Every backend call is bounded in time (a frozen etcd answers 503/504, not never),
  // then timed and counted under etcd_request_* (SQLite's too); encryption sits above,
  // so the backend, its metrics and its history only ever see transformed values.
  const raw = new MeteredKV(new BoundedKV(backend), options.etcdPrefix);
  const kv = encryption ? new TransformedKV(raw, encryption.transformerFor, () => encryption.close()) : raw;
  const prefixes = managementStrategies(options.apiGroup).map((s) =>
    collectionPrefix(options.etcdPrefix, s.info.group, s.info.resource),
  );
  const resources = managementStrategies(options.apiGroup).map((s) => s.info);
  setStorageStatsSource({
    objectCounts: () => Promise.all(resources.map((r) => objectCount(raw, options.etcdPrefix, r))),
    sizeBytes: () => raw.sizeBytes(),
  });
  if (encryption?.generated) {
    try {
      await encryptExistingValues(backend, kv, prefixes, logger);
    } catch (err) {
      await raw.close().catch(() => undefined);
      throw err;
    }
  }
  const { KVStorage } = await import('../storage/store.js');
  const storage = new KVStorage(kv);
  if (!options.watchCache) return storage;
  // Keys are <prefix>/<group>/<resource>/...: one cache per resource.
  const cached = new CachedStorage({
    storage,
    kv,
    resourcePrefix: prefixAtDepth(options.etcdPrefix, 2),
    // As kube-apiserver: the history outlives the slowest list a request may make.
    historyWindowMs: eventFreshMs(options.requestTimeoutMs),
    logger,
  });
  // Every kind's cache starts now, so the first request to one need not wait for its list.
  void cached.warm(prefixes);
  setWatchCacheSource({
    watchCaches: async () =>
      (await cached.cacheLags()).map(({ prefix, ...state }) => {
        // <etcd prefix>/<group>/<resource>/
        const [group = '', resource = ''] = prefix.split('/').filter(Boolean).slice(-2);
        return { group, resource, ...state };
      }),
  });
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
