// The watch cache as a Storage decorator: reads of a key under a cached resource
// prefix are answered by that resource's Cacher; writes, and everything outside
// the cached prefixes, go to the storage underneath. Each resource's cache is fed
// by one watch of its prefix on the KV beneath that storage, so the server holds
// one storage watch per resource however many clients watch it.
//
// A create hands the object storage returned (exactly what its stored bytes decode
// to, at the write's revision: KVStorage's contract) to the resource's cache, which
// applies it when the write's event arrives instead of decoding the event's bytes
// again; the object is frozen and shared, as every cached object is.
//
// Writes pass the cached object to storage as a hint (`cached`), which saves the
// read storage would otherwise do before its compare-and-swap; storage checks the
// hint against the stored revision and rereads when it is stale.

import type { KubeObject, Preconditions } from '../../apis/meta/types.js';
import type {
  GetOptions,
  ListOptions,
  ListResult,
  Storage,
  UpdateFunc,
  ValidateDeletion,
  Watcher,
  WatchOptions,
} from '../interfaces.js';
import type { StorageDeadline } from '../deadline.js';
import { committedRevisionOf, type KV } from '../kv.js';
import type { Logger } from '../../util/log/index.js';
import { RevisionBatcher, type RevisionReader } from '../revision-batcher.js';
import { Cacher, directoryOf, type CacherOptions } from './cacher.js';
import { defaultHistorySizing, fixedHistorySizing } from './event-history.js';
import { GlobalProgress } from './global-progress.js';

export interface CachedStorageOptions {
  /** What writes and uncached reads go to. */
  readonly storage: Storage;
  /** The KV beneath `storage`: the caches list and watch it. */
  readonly kv: KV;
  /**
   * The resource prefix (ending with "/") whose cache serves `key`, or undefined
   * for a key read straight from storage. A cache starts on the first use of its
   * prefix, or at warm().
   */
  readonly resourcePrefix: (key: string) => string | undefined;
  /**
   * How long each cache keeps the changes it saw, for resuming watches and reading
   * past revisions (upstream's EventsHistoryWindow; see event-history.ts). Default 75 s;
   * the server passes eventFreshMs(--request-timeout). The window holds 100 to
   * 102,400 changes (more for a longer window), resized as events arrive.
   */
  readonly historyWindowMs?: number;
  /**
   * A window of exactly this many changes that never resizes, instead of the above:
   * for tests that reach the window's edge within a few writes (kube-apiserver has no
   * such setting: --watch-cache-sizes only turns a cache off).
   */
  readonly historyCapacity?: number;
  /** The clock the windows stamp events with (ms). Default monotonic (performance.now); tests pass a fake one. */
  readonly now?: () => number;
  /** Keys per storage read while a cache lists its prefix. Default 1000. */
  readonly pagingBatchSize?: number;
  /** Default interval between periodic BOOKMARK events (ms). Default one minute. */
  readonly bookmarkIntervalMs?: number;
  /** Queued events per watch beyond which a slow watch is closed. Default 100 000. */
  readonly watchQueueCapacity?: number;
  /** How long a read waits for a cache (to start, or to catch up) before asking storage. Default 3 s. */
  readonly freshnessTimeoutMs?: number;
  readonly logger?: Logger;
  /**
   * How consistent reads learn storage's current revision from `read`. Default: a
   * RevisionBatcher (one revision read in flight, shared by every reader that
   * arrived before it began). Benchmarks pass one read per reader to measure that.
   */
  readonly revisionReader?: (read: () => Promise<number>) => RevisionReader;
}

/** One running cache as CachedStorage.cacheLags() reports it. */
export interface CacheState {
  readonly prefix: string;
  readonly revision: number;
  readonly lag: number;
  readonly capacity: number;
  readonly capacityIncreases: number;
  readonly capacityDecreases: number;
}

/**
 * Resource prefixes `depth` path segments below `root`: with root "/registry" and
 * depth 2, "/registry/<group>/<resource>/..." is cached per "/registry/<group>/<resource>/".
 */
export function prefixAtDepth(root: string, depth: number): (key: string) => string | undefined {
  const base = root.endsWith('/') ? root : `${root}/`;
  return (key) => {
    if (!key.startsWith(base)) return undefined;
    let i = base.length;
    for (let d = 0; d < depth; d++) {
      const slash = key.indexOf('/', i);
      if (slash <= i) return undefined;
      i = slash + 1;
    }
    return key.slice(0, i);
  };
}

export class CachedStorage implements Storage {
  private readonly storage: Storage;
  private readonly kv: KV;
  private readonly cachers = new Map<string, Cacher>();
  private readonly revisions: RevisionReader;
  private readonly cacherOptions: CacherOptions;
  private readonly freshnessTimeoutMs: number;
  private closed = false;
  private readonly globalProgress: GlobalProgress;

  constructor(private readonly options: CachedStorageOptions) {
    this.storage = options.storage;
    this.kv = options.kv;
    const read = (): Promise<number> => this.storage.currentResourceVersion();
    this.revisions = options.revisionReader ? options.revisionReader(read) : new RevisionBatcher(read);
    // A backend that knows its committed revision in process (SQLite) spares consistent
    // reads the revision read; a reader given by the caller is always asked instead.
    const committedRevision = options.revisionReader ? undefined : committedRevisionOf(options.kv);
    this.freshnessTimeoutMs = options.freshnessTimeoutMs ?? 3000;
    // Used only by caches whose storage watch cannot answer progress requests (older etcd).
    this.globalProgress = new GlobalProgress(options.kv, options.resourcePrefix, options.logger);
    this.cacherOptions = {
      history:
        options.historyCapacity !== undefined
          ? fixedHistorySizing(options.historyCapacity, options.now)
          : defaultHistorySizing(options.historyWindowMs, options.now),
      pagingBatchSize: Math.max(1, options.pagingBatchSize ?? 1000),
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      watchQueueCapacity: Math.max(1, options.watchQueueCapacity ?? 100_000),
      freshnessTimeoutMs: this.freshnessTimeoutMs,
      progressIntervalMs: 100,
      globalProgress: this.globalProgress,
      ...(committedRevision ? { committedRevision } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    };
  }

  /** Starts the caches of these prefixes now rather than on first use; resolves when they are ready (or after the timeout). */
  async warm(prefixes: readonly string[], timeoutMs = 30_000): Promise<boolean> {
    const cachers = prefixes.map((p) => this.cacherOf(p));
    const ready = await Promise.all(cachers.map((c) => c?.waitReady(timeoutMs) ?? true));
    return ready.every(Boolean);
  }

  /** True when every cache started so far is ready (the readiness check). */
  get ready(): boolean {
    for (const cacher of this.cachers.values()) if (!cacher.ready) return false;
    return true;
  }

  /** The cache serving `prefix`, if one has started (tests and metrics). */
  cacher(prefix: string): Cacher | undefined {
    return this.cachers.get(prefix);
  }

  async create(key: string, obj: KubeObject, deadline?: StorageDeadline): Promise<KubeObject> {
    const cacher = await this.readyFor(key);
    const created = await this.storage.create(key, obj, deadline);
    return cacher ? cacher.expectWrite(key, created) : created;
  }

  // Not async: the promise of the read is handed back as it is, rather than wrapped in
  // one more that resolves with it (two more microtask hops and their allocations).
  get(key: string, options: GetOptions = {}, deadline?: StorageDeadline): Promise<KubeObject | null> {
    try {
      const cacher = this.cacherFor(key);
      return cacher ? cacher.get(key, options, deadline) : this.storage.get(key, options, deadline);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async getList(key: string, options: ListOptions = {}, deadline?: StorageDeadline): Promise<ListResult> {
    const recursive = options.recursive ?? key.endsWith('/');
    const cacher = this.cacherFor(recursive ? directoryOf(key) : key);
    return cacher ? cacher.getList(key, options, deadline) : this.storage.getList(key, options, deadline);
  }

  async watch(key: string, options: WatchOptions = {}): Promise<Watcher> {
    const recursive = options.recursive ?? key.endsWith('/');
    const cacher = this.cacherFor(recursive ? directoryOf(key) : key);
    return cacher ? cacher.watch(key, options) : this.storage.watch(key, options);
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: UpdateFunc,
    options: { preconditions?: Preconditions; ignoreNotFound?: boolean; cached?: KubeObject } = {},
    deadline?: StorageDeadline,
  ): Promise<KubeObject> {
    const cached = options.cached ?? (await this.readyFor(key))?.cachedObject(key);
    return this.storage.guaranteedUpdate(key, tryUpdate, cached ? { ...options, cached } : options, deadline);
  }

  async delete(
    key: string,
    options: { preconditions?: Preconditions; validateDeletion?: ValidateDeletion; cached?: KubeObject } = {},
    deadline?: StorageDeadline,
  ): Promise<KubeObject> {
    const cached = options.cached ?? (await this.readyFor(key))?.cachedObject(key);
    return this.storage.delete(key, cached ? { ...options, cached } : options, deadline);
  }

  currentResourceVersion(): Promise<number> {
    return this.revisions.current();
  }

  /**
   * Each running cache's prefix, the revision it has applied, how far it is behind
   * storage's current revision (-1 when storage did not answer), and its history
   * window's capacity and how often it doubled and halved.
   */
  async cacheLags(): Promise<CacheState[]> {
    const cachers = [...this.cachers.values()];
    let newest: number | undefined;
    try {
      newest = await this.revisions.current();
    } catch {
      newest = undefined;
    }
    return Promise.all(
      cachers.map(async (c) => ({
        prefix: c.prefix,
        revision: c.revision,
        lag: newest === undefined ? -1 : await c.lagBehind(newest),
        capacity: c.history.capacity,
        capacityIncreases: c.historyResizes.increases,
        capacityDecreases: c.historyResizes.decreases,
      })),
    );
  }

  async compact(revision: number): Promise<void> {
    await this.storage.compact(revision);
    for (const cacher of this.cachers.values()) cacher.compact(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.cachers.values()].map((c) => c.stop()));
    this.globalProgress.stop();
    await this.storage.close();
  }

  /**
   * The cache serving `key`, started if need be. A write to a prefix waits for its
   * cache to be ready, so that the cache's window starts before the write: a watch
   * from the write's resourceVersion can then always be served.
   */
  private async readyFor(key: string): Promise<Cacher | undefined> {
    const cacher = this.cacherFor(key);
    if (cacher && !cacher.ready) await cacher.waitReady(this.freshnessTimeoutMs);
    return cacher;
  }

  private cacherFor(key: string): Cacher | undefined {
    const prefix = this.options.resourcePrefix(key);
    return prefix === undefined ? undefined : this.cacherOf(prefix);
  }

  private cacherOf(prefix: string): Cacher | undefined {
    if (this.closed) return undefined;
    let cacher = this.cachers.get(prefix);
    if (!cacher) {
      cacher = new Cacher(prefix, this.kv, this.storage, this.revisions, this.cacherOptions);
      this.cachers.set(prefix, cacher);
      // Started by whichever request reads first, but it serves every later one:
      // its list-and-watch loop is given no request's deadline.
      cacher.start();
    }
    return cacher;
  }
}
