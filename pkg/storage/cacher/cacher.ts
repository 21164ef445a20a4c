// One resource's watch cache (k8s.io/apiserver storage/cacher/cacher.go): a
// reflector lists the resource's prefix once and then follows one storage watch,
// applying every change to a WatchCache and handing it to every open watcher as
// it applies it. Reads are answered from memory with the semantics storage has:
//
//   ""   (consistent)     one storage round trip for the current revision, then
//                         wait until the cache has seen it (asking storage for a
//                         progress notification when the latest writes were
//                         elsewhere), then read memory;
//   "0"  (any)            memory as it is;
//   N    (not older than) memory once the cache has seen N (504 when storage
//                         has not reached N either);
//   Exact N / continue    the state at N, rebuilt from the window of recent
//                         changes; storage for a revision older than the window.
//
// Watches start from the current state (initial events) or resume from any
// revision in the window; older ones get 410. While the cache is not ready (first
// list, or relisting after its watch failed) requests go to storage.

import { newTooLargeResourceVersion } from '../../apis/meta/errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { decodeKeyValue } from '../codec.js';
import { encodeContinue } from '../continue.js';
import {
  CorruptObjects,
  keyNotFound,
  StorageError,
  storageTimeout,
  tooLargeResourceVersion,
} from '../errors.js';
import type { StorageDeadline } from '../deadline.js';
import type {
  GetOptions,
  ListOptions,
  ListResult,
  Predicate,
  Storage,
  Watcher,
  WatchOptions,
} from '../interfaces.js';
import { EVERYTHING, selects } from '../interfaces.js';
import { listReadPoint } from '../list-read-point.js';
import type { KeyValue, KV, KVEvent, KVWatch } from '../kv.js';
import { prefixEnd } from '../kv.js';
import { formatResourceVersion, parseResourceVersion } from '../resource-version.js';
import { RevisionWaitExpired, type RevisionReader } from '../revision-batcher.js';
import { tooOldResourceVersionStatus } from '../store-watcher.js';
import type { Logger } from '../../util/log/index.js';
import { Reflector, type WatchEnd } from '../../util/reflector.js';
import { settlesWithin } from '../../util/within.js';
import { CacheWatcher, type CacheWatcherConfig } from './cache-watcher.js';
import type { HistorySizing } from './event-history.js';
import type { GlobalProgress } from './global-progress.js';
import { CacheEntry, deepFreeze, WatchCache, type Snapshot, type TypeMeta } from './watch-cache.js';

/** The fewest handed writes kept before a sweep (see Cacher.sweepWrittenAt). */
const WRITTEN_SWEEP_MIN = 256;

export interface CacherOptions {
  /** How the window of changes kept for resuming watches and lists at past revisions sizes itself. */
  readonly history: HistorySizing;
  /** Keys per storage read while listing. */
  readonly pagingBatchSize: number;
  readonly bookmarkIntervalMs: number;
  /** Queued events per watch beyond which a slow watch is closed. */
  readonly watchQueueCapacity: number;
  /** How long a read waits for the cache to catch up before asking storage instead. */
  readonly freshnessTimeoutMs: number;
  /** How often to repeat a progress request while a read waits. */
  readonly progressIntervalMs: number;
  /**
   * Proves the cache current when storage cannot answer progress requests; a read
   * waits at most `writeOrderWaitMs` for that proof before asking storage.
   */
  readonly globalProgress?: GlobalProgress;
  readonly writeOrderWaitMs?: number;
  /**
   * Storage's latest committed revision when the process knows it without a storage
   * call (KV.committedRevision: SQLite, the sole writer); a consistent read then needs
   * no revision read. Absent, or undefined when called: ask `revisions`.
   */
  readonly committedRevision?: () => number | undefined;
  readonly logger?: Logger;
}

interface FreshWaiter {
  readonly revision: number;
  readonly resolve: (fresh: boolean) => void;
}

const MAX_RETRY_DELAY_MS = 5000;

/** The list prefix for a recursive read: always a directory, so `/x/ns` never matches `/x/ns-other`. */
export function directoryOf(key: string): string {
  return key.endsWith('/') ? key : `${key}/`;
}

type ReadPoint =
  | { readonly kind: 'latest' }
  | { readonly kind: 'any' }
  | { readonly kind: 'notOlderThan'; readonly revision: number }
  | { readonly kind: 'exact'; readonly revision: number };

/** The two read points without a revision, shared rather than built per read. */
const LATEST: ReadPoint = { kind: 'latest' };
const ANY: ReadPoint = { kind: 'any' };

export class Cacher {
  private readonly cache: WatchCache;
  private readonly watchers = new Set<CacheWatcher>();
  private kvWatch: KVWatch | undefined;
  private isReady = false;
  private readyWaiters: (() => void)[] = [];
  private freshWaiters: FreshWaiter[] = [];
  private progressTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly reflector: Reflector;
  /** Objects the last list found (for the ready log line). */
  private listedObjects = 0;
  /**
   * Objects this server just created, by key, awaiting their watch event: the event
   * of the same key and revision is that very write, so its object need not be
   * decoded again. Bounded by the writes in flight: pruned as the cache moves past them.
   */
  private readonly written = new Map<string, CacheEntry>();
  /**
   * The size of `written` at which the next sweep for writes the cache moved past runs.
   * Their events almost always take them out one by one (entryOfEvent); a sweep only
   * finds the few whose event never matched. Sweeping on every batch cost O(writes
   * in flight) per event: in a burst, where the cache runs thousands of writes behind,
   * that was quadratic (a 60,000-write burst kept a consistent get waiting 21 s). Doubling
   * the threshold after each sweep makes it O(1) per write, amortized.
   */
  private sweepWrittenAt = WRITTEN_SWEEP_MIN;

  constructor(
    /** The resource's prefix, ending with "/". */
    readonly prefix: string,
    private readonly kv: KV,
    private readonly storage: Storage,
    private readonly revisions: RevisionReader,
    private readonly options: CacherOptions,
  ) {
    this.cache = new WatchCache(options.history);
    this.reflector = new Reflector({
      listerWatcher: {
        list: () => this.relist(),
        watch: (rv, _observe, signal) => this.follow(parseResourceVersion(rv), signal),
      },
      initialBackoffMs: 100,
      maxBackoffMs: MAX_RETRY_DELAY_MS,
      onFailure: (err, retryInMs) =>
        options.logger?.warn('watch cache lost its watch; relisting', {
          prefix: this.prefix,
          error: err instanceof Error ? err.message : String(err),
          retryInMs,
        }),
    });
  }

  /** Begins listing and watching; idempotent. */
  start(): void {
    this.reflector.start();
  }

  get ready(): boolean {
    return this.isReady;
  }

  /** The revision this cache has applied (for metrics). */
  get revision(): number {
    return this.cache.revision;
  }

  /**
   * Revisions this cache is behind `revision`: 0 once it has applied everything up
   * to it, or proves it has (asking storage for progress, as a consistent read
   * waits, and for no longer).
   */
  async lagBehind(revision: number): Promise<number> {
    if (this.isReady && (await this.waitFresh(revision))) return 0;
    return Math.max(0, revision - this.cache.revision);
  }

  /** Objects cached (for tests and metrics). */
  get size(): number {
    return this.cache.size;
  }

  /** Changes the window holds, and how many it holds before it resizes (tests and metrics). */
  get history(): { readonly length: number; readonly capacity: number } {
    return { length: this.cache.historyLength, capacity: this.cache.historyCapacity };
  }

  /** How many times the window doubled, and halved (metrics). */
  get historyResizes(): { readonly increases: number; readonly decreases: number } {
    return this.cache.historyResizes;
  }

  get openWatchers(): number {
    return this.watchers.size;
  }

  /** Resolves true once ready, or false after `timeoutMs`. */
  async waitReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady) return true;
    if (this.stopped) return false;
    let wake!: () => void;
    const arrived = new Promise<void>((resolve) => (wake = resolve));
    this.readyWaiters.push(wake);
    try {
      return await settlesWithin(arrived, timeoutMs);
    } finally {
      this.readyWaiters = this.readyWaiters.filter((w) => w !== wake);
    }
  }

  /** The cached object at `key`, if the cache is ready and has one (a hint for writes). */
  cachedObject(key: string): KubeObject | undefined {
    return this.isReady ? this.cache.get(key)?.obj : undefined;
  }

  /**
   * `obj` is what storage stored at `key` by a write this server made (decoded from,
   * or equal to what decodes from, the stored bytes, stamped with the write's
   * revision). Frozen and kept for that write's event, which then applies it as is.
   * Returns it frozen: the caller shares it with the cache, as a cached read does.
   */
  expectWrite(key: string, obj: KubeObject): KubeObject {
    const frozen = deepFreeze(obj);
    const rev = parseResourceVersion(frozen.metadata?.resourceVersion ?? '');
    // Already applied (its event came first, and was decoded), or not following storage now.
    if (this.isReady && rev > this.cache.lastEventRevision) {
      this.written.set(key, new CacheEntry(key, rev, frozen));
    }
    return frozen;
  }

  /** Writes this cache was handed whose event has not come yet (tests). */
  get awaitingEvents(): number {
    this.sweepWritten();
    return this.written.size;
  }

  /** Lets go of the writes the cache has moved past: events come in revision order, theirs never will. */
  private sweepWritten(): void {
    const applied = this.cache.lastEventRevision;
    for (const [key, entry] of this.written) if (entry.rev <= applied) this.written.delete(key);
    this.sweepWrittenAt = Math.max(WRITTEN_SWEEP_MIN, 2 * this.written.size);
  }

  /** Storage compacted to `revision`: watches and lists before it are refused from here on too. */
  compact(revision: number): void {
    this.cache.compact(revision);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.options.globalProgress?.detach(this.wakeFreshWaiters);
    this.setReady(false);
    const stopped = this.reflector.stop();
    for (const watcher of [...this.watchers]) watcher.stop();
    await stopped;
  }

  // ---- reads ------------------------------------------------------------------

  async get(key: string, options: GetOptions, deadline?: StorageDeadline): Promise<KubeObject | null> {
    const given = options.resourceVersion ?? '';
    const minimum = parseResourceVersion(given);
    const point: ReadPoint =
      given === '' ? LATEST : minimum === 0 ? ANY : { kind: 'notOlderThan', revision: minimum };
    // Awaited only when the answer is not known at once (a consistent read's revision).
    const caughtUp = this.catchUp(point, deadline);
    if (!(caughtUp === true || (caughtUp !== false && (await caughtUp)))) {
      return this.storage.get(key, options, deadline);
    }
    const entry = this.cache.get(key);
    if (!entry) {
      if (options.ignoreNotFound) return null;
      throw keyNotFound(key, 0);
    }
    return entry.object();
  }

  async getList(key: string, options: ListOptions, deadline?: StorageDeadline): Promise<ListResult> {
    const recursive = options.recursive ?? key.endsWith('/');
    const predicate = options.predicate ?? EVERYTHING;
    const limit = Math.max(0, options.limit ?? 0);
    const keyPrefix = recursive ? directoryOf(key) : key;
    const read = listReadPoint(options, keyPrefix, recursive, limit);
    const start = read.continueKey ?? keyPrefix;
    const point: ReadPoint =
      read.exact > 0
        ? { kind: 'exact', revision: read.exact }
        : read.latest
          ? LATEST
          : read.minimum > 0
            ? { kind: 'notOlderThan', revision: read.minimum }
            : ANY;

    if (!(await this.catchUp(point, deadline))) return this.storage.getList(key, options, deadline);
    // From here on everything is synchronous: the snapshot is only valid until the next event.
    const at = point.kind === 'exact' ? point.revision : this.cache.revision;
    // Older than the window: storage still has it, or says it is too old.
    if (at < this.cache.windowStart) return this.storage.getList(key, options, deadline);
    const snapshot = this.cache.snapshot(at);
    if (!recursive) {
      const entry = snapshot.get(key);
      const items: KubeObject[] = [];
      if (entry && selects(predicate, entry.object())) items.push(entry.object());
      return { items, resourceVersion: formatResourceVersion(at) };
    }
    return this.listRange(snapshot, keyPrefix, start, predicate, limit);
  }

  private listRange(
    snapshot: Snapshot,
    keyPrefix: string,
    start: string,
    predicate: Predicate,
    limit: number,
  ): ListResult {
    const end = prefixEnd(keyPrefix);
    const items: KubeObject[] = [];
    let lastKey: string | undefined;
    let hasMore = false;
    const corrupt = new CorruptObjects();
    for (const entry of snapshot.range(start, end)) {
      if (limit > 0 && items.length >= limit) {
        hasMore = true;
        break;
      }
      lastKey = entry.key;
      let obj: KubeObject;
      try {
        obj = entry.object();
      } catch (err) {
        if (!corrupt.add(err)) throw err;
        continue;
      }
      if (selects(predicate, obj)) items.push(obj);
    }
    corrupt.throwIfAny();
    const result: {
      items: KubeObject[];
      resourceVersion: string;
      continue?: string;
      remainingItemCount?: number;
    } = { items, resourceVersion: formatResourceVersion(snapshot.revision) };
    if (hasMore && lastKey !== undefined) {
      result.continue = encodeContinue(`${lastKey}\u0000`, keyPrefix, snapshot.revision);
      if (predicate.empty) result.remainingItemCount = Math.max(snapshot.count(start, end) - limit, 0);
    }
    return result;
  }

  /**
   * Waits until the cache can answer a read at `point`. False means "ask storage":
   * the cache is not ready, or did not catch up in time. Throws when the revision
   * asked for is newer than storage's. `deadline` is the request's, if any: the wait
   * for storage's current revision ends at it. Answers at once (no promise) when it
   * can: a read that names no revision, or one the cache has already applied.
   */
  private catchUp(point: ReadPoint, deadline: StorageDeadline | undefined): boolean | Promise<boolean> {
    if (!this.isReady) return this.catchUpOnceReady(point, deadline);
    return this.catchUpReady(point, deadline);
  }

  private async catchUpOnceReady(point: ReadPoint, deadline: StorageDeadline | undefined): Promise<boolean> {
    if (!(await this.waitReady(this.options.freshnessTimeoutMs))) return false;
    return this.catchUpReady(point, deadline);
  }

  private catchUpReady(point: ReadPoint, deadline: StorageDeadline | undefined): boolean | Promise<boolean> {
    switch (point.kind) {
      case 'any':
        return true;
      case 'latest':
        return this.freshAtCommitted(undefined, deadline) ?? this.freshAtStorageRevision(undefined, deadline);
      case 'notOlderThan':
      case 'exact':
        if (this.cache.revision >= point.revision) return true;
        return (
          this.freshAtCommitted(point.revision, deadline) ??
          this.freshAtStorageRevision(point.revision, deadline)
        );
    }
  }

  /**
   * freshAtStorageRevision without the revision read, when storage's committed revision
   * is known in process (SQLite); undefined when it is not (etcd: ask storage).
   *
   * Still linearizable: a write acknowledged to any client before this read began was
   * committed by this process before then, and the committed revision moved with the
   * commit, in the same synchronous step (SqliteKV.write), so it is at or past every
   * such write. It is the very value the revision read would have answered, read at
   * the moment the read would have begun: only the promise and the storage call's
   * wrappers are left out. When the cache has applied it the answer is true at once
   * (no promise, the common case); otherwise the read waits for the cache's watch to
   * deliver it, as after a revision read. A request already past its deadline or
   * abandoned is refused as a revision read would refuse it.
   */
  private freshAtCommitted(
    revision: number | undefined,
    deadline: StorageDeadline | undefined,
  ): boolean | Promise<boolean> | undefined {
    const committed = this.options.committedRevision?.();
    if (committed === undefined) return undefined;
    if (deadline && (deadline.abandoned || deadline.remainingMs() === 0)) throw storageTimeout(this.prefix, false);
    return this.freshAgainst(revision, committed);
  }

  /**
   * Asks for storage's current revision (the shared revision read), then waits for the
   * cache to reach it (`revision` undefined: a consistent read) or `revision`, which
   * storage must have reached. The read itself runs free of any request's deadline (it
   * serves every reader of its round), but this reader stops waiting for it at its own
   * request's deadline, as a storage call would. The deadline goes down as a time, not
   * an AbortSignal: the batcher keeps one timer for all its readers (a signal per get
   * was a tenth of a get's CPU over etcd). One async frame and the batcher's promise
   * when the cache is already there, the common case: no chain of them per get.
   */
  private async freshAtStorageRevision(
    revision: number | undefined,
    deadline: StorageDeadline | undefined,
  ): Promise<boolean> {
    let current: number;
    if (!deadline) current = await this.revisions.current();
    else {
      if (deadline.abandoned || deadline.remainingMs() === 0) throw storageTimeout(this.prefix, false);
      try {
        current = await this.revisions.current(deadline.deadlineAt);
      } catch (err) {
        if (err instanceof RevisionWaitExpired) throw storageTimeout(this.prefix, false);
        throw err;
      }
    }
    return this.freshAgainst(revision, current);
  }

  /**
   * Given storage's current revision: true (or a promise of it) once the cache has
   * reached it (`revision` undefined: a consistent read) or `revision`, which storage
   * must have reached.
   */
  private freshAgainst(revision: number | undefined, current: number): boolean | Promise<boolean> {
    if (revision === undefined) return this.isFresh(current) || this.waitFresh(current);
    if (revision > current) throw tooLargeResourceVersion(revision, current);
    return this.waitFresh(revision);
  }

  /** True when the cache has applied every change up to `revision` (or can prove it has). */
  private isFresh(revision: number): boolean {
    if (this.cache.revision >= revision) return true;
    const progress = this.options.globalProgress;
    if (!progress || this.kvWatch?.requestProgress !== undefined) return false;
    if (!progress.proves(this.prefix, this.cache.revision, this.cache.lastEventRevision, revision))
      return false;
    this.cache.observeProgress(progress.revision);
    return true;
  }

  /** Resolves true once the cache has applied everything up to `revision`; false if it cannot in time. */
  private waitFresh(revision: number): Promise<boolean> {
    if (this.isFresh(revision)) return Promise.resolve(true);
    if (!this.isReady) return Promise.resolve(false);
    const canAsk = this.kvWatch?.requestProgress !== undefined;
    if (!canAsk && !this.options.globalProgress) return Promise.resolve(false);
    // Without progress requests the proof comes from the write-order watch; should it
    // be down, wait only briefly before asking storage.
    const wait = canAsk ? this.options.freshnessTimeoutMs : (this.options.writeOrderWaitMs ?? 250);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), wait);
      const waiter: FreshWaiter = {
        revision,
        resolve: (fresh) => settle(fresh),
      };
      const settle = (fresh: boolean): void => {
        clearTimeout(timer);
        this.freshWaiters = this.freshWaiters.filter((w) => w !== waiter);
        if (this.freshWaiters.length === 0) this.stopProgressRequests();
        resolve(fresh);
      };
      this.freshWaiters.push(waiter);
      if (canAsk) this.requestProgress();
    });
  }

  /** Asks storage to confirm how far the watch has got, now and then until no read waits. */
  private requestProgress(): void {
    this.kvWatch?.requestProgress?.();
    if (this.progressTimer) return;
    this.progressTimer = setInterval(
      () => this.kvWatch?.requestProgress?.(),
      this.options.progressIntervalMs,
    );
    this.progressTimer.unref();
  }

  private stopProgressRequests(): void {
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.progressTimer = undefined;
  }

  private readonly wakeFreshWaiters = (): void => {
    if (this.freshWaiters.length === 0) return;
    for (const waiter of [...this.freshWaiters]) if (this.isFresh(waiter.revision)) waiter.resolve(true);
  };

  // ---- watch ------------------------------------------------------------------

  async watch(key: string, options: WatchOptions): Promise<Watcher> {
    const recursive = options.recursive ?? key.endsWith('/');
    const requested = parseResourceVersion(options.resourceVersion ?? '');
    const sendInitialEvents = options.sendInitialEvents;
    const initialEvents = sendInitialEvents === true || (sendInitialEvents === undefined && requested === 0);
    const config = this.watcherConfig(recursive ? directoryOf(key) : key, recursive, options);

    // "" and "0" start as of now (consistent: a watch lives long, one round trip at its
    // start is cheap, and its initial state must not miss a write the client just made);
    // N waits for the cache to reach N.
    const point: ReadPoint =
      requested > 0 ? { kind: 'notOlderThan', revision: requested } : { kind: 'latest' };
    try {
      // A watch lives long: it has no request deadline.
      if (!(await this.catchUp(point, undefined))) return this.storage.watch(key, options);
    } catch (err) {
      // A revision storage has not reached is an ERROR event, not a failed call.
      if (err instanceof StorageError && err.code === 'TooLargeResourceVersion') {
        return CacheWatcher.failed(
          config,
          newTooLargeResourceVersion(requested, err.resourceVersion).toStatus(),
        );
      }
      throw err;
    }

    // Synchronous from here: the state and the registration see the same revision.
    const revision = this.cache.revision;
    if (initialEvents) {
      const watcher = new CacheWatcher(config);
      const snapshot = this.cache.snapshot(revision);
      watcher.sendInitial(
        recursive ? snapshot.range(config.key, prefixEnd(config.key)) : optional(snapshot.get(key)),
      );
      return this.register(watcher, revision, sendInitialEvents === true);
    }
    if (requested === 0) return this.register(new CacheWatcher(config), revision, false);
    if (requested < this.cache.windowStart) {
      return CacheWatcher.failed(config, tooOldResourceVersionStatus(requested, this.cache.windowStart + 1));
    }
    const watcher = new CacheWatcher(config);
    for (const event of this.cache.eventsAfter(requested)) watcher.dispatch(event);
    return this.register(watcher, revision, false);
  }

  // What every watcher of this cache calls back: made once, not once a watch (each
  // watcher keeps them, and a closure each was heap per idle watch).
  private readonly cachedRevision = (): number => this.cache.revision;
  private readonly currentTypeMeta = (): TypeMeta | undefined => this.cache.typeMeta;
  private readonly forgetWatcher = (watcher: CacheWatcher): void => {
    this.watchers.delete(watcher);
  };

  private watcherConfig(key: string, recursive: boolean, options: WatchOptions): CacheWatcherConfig {
    return {
      key,
      recursive,
      predicate: options.predicate ?? EVERYTHING,
      allowWatchBookmarks: options.allowWatchBookmarks ?? false,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? this.options.bookmarkIntervalMs,
      queueCapacity: this.options.watchQueueCapacity,
      revision: this.cachedRevision,
      typeMeta: this.currentTypeMeta,
      onStopped: this.forgetWatcher,
    };
  }

  private register(watcher: CacheWatcher, revision: number, initialEventsEnd: boolean): CacheWatcher {
    watcher.startAt(revision, initialEventsEnd);
    if (!watcher.isStopped) this.watchers.add(watcher);
    return watcher;
  }

  // ---- the reflector ------------------------------------------------------------

  /** Lists the prefix into the cache (the reflector's list); the revision to watch after. */
  private async relist(): Promise<string> {
    const { entries, revision } = await this.listAll();
    this.written.clear();
    if (!this.stopped) this.cache.replace(entries, revision);
    this.listedObjects = entries.length;
    return formatResourceVersion(revision);
  }

  /**
   * Follows storage from the listed revision, the cache ready meanwhile. Any end but
   * stop() makes the reflector list again: the cache is marked not ready and its
   * watchers are stopped when the watch goes, so there is no state to resume on.
   */
  private async follow(revision: number, signal: AbortSignal): Promise<WatchEnd> {
    let batches = 0;
    const failure = await new Promise<unknown>((resolve) => {
      const onAbort = (): void => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) return resolve(undefined);
      this.kvWatch = this.kv.watch(this.prefix, revision + 1, {
        // The cache keeps every key's state itself: an event's previous value would be
        // read by etcd, sent and decoded for nothing.
        withoutPrevious: true,
        onEvents: (events) => {
          batches++;
          this.onEvents(events);
        },
        onProgress: (rev) => this.onProgress(rev),
        onError: (err) => resolve(err),
      });
      if (this.kvWatch.requestProgress === undefined) {
        this.options.globalProgress?.attach(this.wakeFreshWaiters, revision);
      }
      this.setReady(true);
      this.options.logger?.info('watch cache ready', {
        prefix: this.prefix,
        objects: this.listedObjects,
        revision,
      });
    });
    this.kvWatch?.cancel();
    this.kvWatch = undefined;
    this.setReady(false);
    // Their resume points may predate the next list: they re-watch (and relist if told 410).
    for (const watcher of [...this.watchers]) watcher.stop();
    return failure === undefined
      ? { events: batches, relist: true }
      : { events: batches, relist: true, error: failure };
  }

  /** Reads the whole prefix at one revision, a batch at a time. */
  private async listAll(): Promise<{ entries: CacheEntry[]; revision: number }> {
    const end = prefixEnd(this.prefix);
    const entries: CacheEntry[] = [];
    let start = this.prefix;
    let revision = 0;
    while (true) {
      const page = await this.kv.range(start, end, { revision, limit: this.options.pagingBatchSize });
      revision = page.revision;
      for (const kv of page.kvs) entries.push(this.entryOf(kv));
      const last = page.kvs[page.kvs.length - 1];
      if (!page.more || last === undefined) return { entries, revision };
      start = `${last.key}\u0000`;
    }
  }

  private entryOf(kv: KeyValue): CacheEntry {
    try {
      return new CacheEntry(kv.key, kv.modRevision, deepFreeze(decodeKeyValue(kv)));
    } catch (err) {
      // Kept as it is: reading this key fails as it would without the cache.
      return new CacheEntry(
        kv.key,
        kv.modRevision,
        undefined,
        err instanceof Error ? err : new Error(String(err)),
      );
    }
  }

  private onEvents(events: readonly KVEvent[]): void {
    if (!this.isReady) return;
    // A backend replaying history must never make the cache apply a revision twice.
    const floor = this.cache.lastEventRevision;
    for (const event of events) {
      const rev = event.kv.modRevision;
      if (rev <= floor) continue;
      const entry = event.type === 'put' ? this.entryOfEvent(event.kv) : undefined;
      const change = this.cache.apply(event.kv.key, rev, entry);
      if (change) for (const watcher of this.watchers) watcher.dispatch(change);
    }
    if (this.written.size > this.sweepWrittenAt) this.sweepWritten();
    this.wakeFreshWaiters();
  }

  /** The entry a put event brings: the object of this server's own write when it is that write, else decoded. */
  private entryOfEvent(kv: KeyValue): CacheEntry {
    const written = this.written.get(kv.key);
    if (written !== undefined && written.rev === kv.modRevision && kv.unreadable === undefined) {
      this.written.delete(kv.key);
      return written;
    }
    return this.entryOf(kv);
  }

  private onProgress(revision: number): void {
    if (this.isReady && this.cache.observeProgress(revision)) this.wakeFreshWaiters();
  }

  private setReady(ready: boolean): void {
    this.isReady = ready;
    if (ready) {
      const waiters = this.readyWaiters;
      this.readyWaiters = [];
      for (const wake of waiters) wake();
      return;
    }
    // Nobody waiting for freshness can get it from this cache now: they ask storage.
    for (const waiter of [...this.freshWaiters]) waiter.resolve(false);
    this.stopProgressRequests();
  }
}

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}
