// KVStorage: the Kubernetes storage semantics (k8s.io/apiserver storage/etcd3/store.go)
// over any revisioned KV. Backends implement only the KV; everything a client can
// observe — resourceVersion handling, preconditions, optimistic-concurrency retries,
// no-op update detection, paging and continue tokens, watch event shaping — lives
// here once, so every backend behaves alike by construction.

import type { KubeObject, Preconditions } from '../apis/meta/types.js';
import {
  cloneObject,
  decodeKeyValue,
  decodeObject,
  encodeObject,
  encodeWithObject,
  writtenObject,
} from './codec.js';
import { encodeContinue } from './continue.js';
import {
  CorruptObjects,
  expired,
  expiredContinue,
  invalidObj,
  keyExists,
  keyNotFound,
  resourceVersionSetOnCreate,
  tooLargeResourceVersion,
} from './errors.js';
import type {
  GetOptions,
  ListOptions,
  ListResult,
  Storage,
  UpdateFunc,
  ValidateDeletion,
  Watcher,
  WatchOptions,
} from './interfaces.js';
import { EVERYTHING, selects } from './interfaces.js';
import { listReadPoint } from './list-read-point.js';
import type { KeyValue, KV, RangeResult } from './kv.js';
import { CompactedError, FutureRevisionError, prefixEnd } from './kv.js';
import { formatResourceVersion, parseResourceVersion } from './resource-version.js';
import { StoreWatcher } from './store-watcher.js';
import type { StorageDeadline } from './deadline.js';

export { decodeContinue, encodeContinue } from './continue.js';
export type { DecodedContinue } from './continue.js';
export { parseResourceVersion } from './resource-version.js';

export interface KVStorageOptions {
  /** Keys per KV read when a list or a watch's initial state spans many keys. Default 1000. */
  readonly pagingBatchSize?: number;
  /** Default interval between periodic BOOKMARK events (ms). Default one minute. */
  readonly bookmarkIntervalMs?: number;
  /** Queued events per watch beyond which a slow watch is closed. Default 100 000. */
  readonly watchQueueCapacity?: number;
}

const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list ' +
  'without the continue parameter, or use the continue token in this response to retrieve the remainder of the ' +
  'results. Continuing with the provided token results in an inconsistent list - objects that were created, ' +
  'modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** What one read of a key yields: the decoded object and its bytes and revision, or absence. */
interface ObjState {
  /** null when the key is absent (only with ignoreNotFound). */
  readonly obj: KubeObject | null;
  readonly data: Buffer | undefined;
  /** The key's modRevision; 0 when absent. */
  readonly rev: number;
  /**
   * Read with an encryption provider other than the one that writes now: an update
   * writes even an unchanged object (upstream's stale read), re-encrypting it.
   */
  readonly stale?: boolean;
}

function checkPreconditions(
  key: string,
  preconditions: Preconditions | undefined,
  obj: KubeObject | null,
): void {
  if (!preconditions) return;
  const meta = obj?.metadata;
  if (preconditions.uid !== undefined && preconditions.uid !== (meta?.uid ?? '')) {
    throw invalidObj(
      key,
      0,
      `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta?.uid ?? ''}`,
    );
  }
  if (
    preconditions.resourceVersion !== undefined &&
    preconditions.resourceVersion !== (meta?.resourceVersion ?? '')
  ) {
    throw invalidObj(
      key,
      0,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${meta?.resourceVersion ?? ''}`,
    );
  }
}


/** The list prefix for a recursive read: always a directory, so `/x/ns` never matches `/x/ns-other`. */
function directoryOf(key: string): string {
  return key.endsWith('/') ? key : `${key}/`;
}

export class KVStorage implements Storage {
  private readonly pagingBatchSize: number;
  private readonly bookmarkIntervalMs: number;
  private readonly watchQueueCapacity: number;
  private readonly watchers = new Set<StoreWatcher>();

  constructor(
    private readonly kv: KV,
    options: KVStorageOptions = {},
  ) {
    this.pagingBatchSize = Math.max(1, options.pagingBatchSize ?? 1000);
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    this.watchQueueCapacity = Math.max(1, options.watchQueueCapacity ?? 100_000);
  }

  async create(key: string, obj: KubeObject, deadline?: StorageDeadline): Promise<KubeObject> {
    const rv = obj.metadata?.resourceVersion;
    // Upstream only refuses a version it can read as non-zero; anything else is just dropped.
    if (rv !== undefined && /^[0-9]+$/.test(rv) && Number(rv) !== 0) throw resourceVersionSetOnCreate(key);
    // The stored bytes and the object they decode to, from one walk: the result is not reparsed.
    const encoded = encodeWithObject(obj);
    const result = await this.kv.create(key, encoded.data, deadline);
    if (!result.ok) throw keyExists(key, 0);
    return writtenObject(key, encoded, result.revision);
  }

  async get(key: string, options: GetOptions = {}, deadline?: StorageDeadline): Promise<KubeObject | null> {
    const minimum = parseResourceVersion(options.resourceVersion ?? '');
    const { kv, revision } = await this.kv.get(key, undefined, deadline);
    if (minimum > revision) throw tooLargeResourceVersion(minimum, revision);
    if (!kv) {
      if (options.ignoreNotFound) return null;
      throw keyNotFound(key, 0);
    }
    return decodeKeyValue(kv);
  }

  async getList(key: string, options: ListOptions = {}, deadline?: StorageDeadline): Promise<ListResult> {
    const recursive = options.recursive ?? key.endsWith('/');
    const predicate = options.predicate ?? EVERYTHING;
    const limit = Math.max(0, options.limit ?? 0);
    const keyPrefix = recursive ? directoryOf(key) : key;
    const read = listReadPoint(options, keyPrefix, recursive, limit);
    const { continueKey, minimum } = read;
    // Pinned to the first batch's revision below when the options do not pin it.
    let withRev = read.exact;

    const readError = (err: unknown): unknown =>
      this.listReadError(err, withRev, keyPrefix, continueKey, deadline);

    if (!recursive) {
      let read: { kv: KeyValue | undefined; revision: number };
      try {
        read = await this.kv.get(key, withRev, deadline);
      } catch (err) {
        throw await readError(err);
      }
      if (minimum > read.revision) throw tooLargeResourceVersion(minimum, read.revision);
      const items: KubeObject[] = [];
      if (read.kv) {
        const obj = decodeKeyValue(read.kv);
        if (selects(predicate, obj)) items.push(obj);
      }
      return { items, resourceVersion: formatResourceVersion(read.revision) };
    }

    const end = prefixEnd(keyPrefix);
    const items: KubeObject[] = [];
    const paging = limit > 0;
    let batch = paging ? limit : this.pagingBatchSize;
    const maxBatch = Math.max(this.pagingBatchSize, limit);
    let start = continueKey ?? keyPrefix;
    let lastKey: string | undefined;
    let hasMore = false;
    let count: number | undefined;
    let first = true;
    const corrupt = new CorruptObjects();

    while (true) {
      let page: RangeResult;
      try {
        // Only an unfiltered page reports remainingItemCount, so only then is a count worth its cost.
        page = await this.kv.range(
          start,
          end,
          { revision: withRev, limit: batch, count: first && paging && predicate.empty },
          deadline,
        );
      } catch (err) {
        throw await readError(err);
      }
      if (first) {
        if (withRev === 0) {
          if (minimum > page.revision) throw tooLargeResourceVersion(minimum, page.revision);
          // Every later batch (and every later page, via the token) reads at this revision.
          withRev = page.revision;
        }
        count = page.count;
        first = false;
      }
      let limitReached = false;
      for (const kv of page.kvs) {
        if (paging && items.length >= limit) {
          limitReached = true;
          break;
        }
        lastKey = kv.key;
        let obj: KubeObject;
        try {
          obj = decodeKeyValue(kv);
        } catch (err) {
          if (!corrupt.add(err)) throw err;
          continue;
        }
        if (selects(predicate, obj)) items.push(obj);
      }
      hasMore = page.more || limitReached;
      if (limitReached || !page.more) break;
      if (paging && items.length >= limit) break;
      const last = page.kvs[page.kvs.length - 1];
      if (last === undefined) break;
      start = `${last.key}\u0000`;
      // A selector dropped items: read bigger batches to fill the page in fewer reads.
      if (paging) batch = Math.min(batch * 2, maxBatch);
    }

    corrupt.throwIfAny();
    const result: {
      items: KubeObject[];
      resourceVersion: string;
      continue?: string;
      remainingItemCount?: number;
    } = {
      items,
      resourceVersion: formatResourceVersion(withRev),
    };
    if (hasMore && lastKey !== undefined) {
      result.continue = encodeContinue(`${lastKey}\u0000`, keyPrefix, withRev);
      if (predicate.empty && count !== undefined) result.remainingItemCount = Math.max(count - limit, 0);
    }
    return result;
  }

  /** Maps a KV read failure to what GetList reports (etcd3/errors.go interpretListError). */
  private async listReadError(
    err: unknown,
    withRev: number,
    keyPrefix: string,
    continueKey: string | undefined,
    deadline: StorageDeadline | undefined,
  ): Promise<unknown> {
    if (err instanceof FutureRevisionError) {
      let current = err.currentRevision;
      try {
        current = await this.kv.currentRevision(deadline);
      } catch {
        // keep what the backend told us
      }
      return tooLargeResourceVersion(withRev || err.requestedRevision, current);
    }
    if (err instanceof CompactedError) {
      if (continueKey === undefined) return expired(LIST_TOO_OLD);
      // rv -1: "continue at the latest revision", distinct from a token with no rv at all.
      return expiredContinue(CONTINUE_TOO_OLD, encodeContinue(continueKey, keyPrefix, -1));
    }
    return err;
  }

  /** Reads the key's current state. */
  private async readState(
    key: string,
    ignoreNotFound: boolean,
    deadline: StorageDeadline | undefined,
  ): Promise<ObjState> {
    const { kv } = await this.kv.get(key, undefined, deadline);
    return this.stateOf(key, kv, ignoreNotFound);
  }

  private stateOf(key: string, kv: KeyValue | undefined, ignoreNotFound: boolean): ObjState {
    if (!kv) {
      if (!ignoreNotFound) throw keyNotFound(key, 0);
      return { obj: null, data: undefined, rev: 0 };
    }
    return { obj: decodeKeyValue(kv), data: kv.value, rev: kv.modRevision, stale: kv.stale === true };
  }

  /** The state a caller-supplied (possibly stale) object claims the key is in. */
  private stateFromCached(cached: KubeObject): ObjState {
    const rev = parseResourceVersion(cached.metadata?.resourceVersion ?? '');
    // Only read here (preconditions); whoever changes it gets a copy (tryUpdate, validateDeletion).
    return { obj: cached, data: encodeObject(cached), rev };
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: UpdateFunc,
    options: { preconditions?: Preconditions; ignoreNotFound?: boolean; cached?: KubeObject } = {},
    deadline?: StorageDeadline,
  ): Promise<KubeObject> {
    const ignoreNotFound = options.ignoreNotFound ?? false;
    let state: ObjState;
    let isCurrent: boolean;
    if (options.cached) {
      state = this.stateFromCached(options.cached);
      isCurrent = false;
    } else {
      state = await this.readState(key, ignoreNotFound, deadline);
      isCurrent = true;
    }

    while (true) {
      try {
        checkPreconditions(key, options.preconditions, state.obj);
      } catch (err) {
        if (isCurrent) throw err;
        // The cached object may just be stale: decide on fresh data.
        state = await this.readState(key, ignoreNotFound, deadline);
        isCurrent = true;
        continue;
      }

      let updated: KubeObject;
      try {
        updated = await tryUpdate(state.obj === null ? null : cloneObject(state.obj));
      } catch (err) {
        if (isCurrent) throw err;
        const cachedRev = state.rev;
        state = await this.readState(key, ignoreNotFound, deadline);
        isCurrent = true;
        // The cached object was current after all: its error stands.
        if (state.rev === cachedRev) throw err;
        continue;
      }

      const encoded = encodeWithObject(updated);
      const data = encoded.data;
      if (state.data !== undefined && data.equals(state.data) && state.stale !== true) {
        // Nothing changes: write nothing, so the resourceVersion stays and no watch event fires.
        // A cached object must first be confirmed against storage (which also tells staleness).
        if (!isCurrent) {
          state = await this.readState(key, ignoreNotFound, deadline);
          isCurrent = true;
          if (state.data === undefined || !data.equals(state.data) || state.stale === true) continue;
        }
        return decodeObject(key, state.data, state.rev);
      }

      const result =
        state.rev === 0
          ? await this.kv.create(key, data, deadline)
          : await this.kv.update(key, data, state.rev, deadline);
      if (!result.ok) {
        // Someone else wrote first: retry on what they wrote.
        state = this.stateOf(key, result.current, ignoreNotFound);
        isCurrent = true;
        continue;
      }
      return writtenObject(key, encoded, result.revision);
    }
  }

  async delete(
    key: string,
    options: { preconditions?: Preconditions; validateDeletion?: ValidateDeletion; cached?: KubeObject } = {},
    deadline?: StorageDeadline,
  ): Promise<KubeObject> {
    let state: ObjState;
    let isCurrent: boolean;
    if (options.cached) {
      state = this.stateFromCached(options.cached);
      isCurrent = false;
    } else {
      state = await this.readState(key, false, deadline);
      isCurrent = true;
    }

    while (true) {
      const obj = state.obj;
      if (obj === null) throw keyNotFound(key, 0);
      try {
        checkPreconditions(key, options.preconditions, obj);
        await options.validateDeletion?.(cloneObject(obj));
      } catch (err) {
        if (isCurrent) throw err;
        const cachedRev = state.rev;
        state = await this.readState(key, false, deadline);
        isCurrent = true;
        if (state.rev === cachedRev) throw err;
        continue;
      }

      const result = await this.kv.delete(key, state.rev, deadline);
      if (!result.ok) {
        state = this.stateOf(key, result.current, false);
        isCurrent = true;
        continue;
      }
      // The last state, stamped with the delete's revision (what watchers see in DELETED).
      if (result.deleted) return decodeKeyValue(result.deleted, result.revision);
      if (state.data === undefined) throw keyNotFound(key, 0);
      return decodeObject(key, state.data, result.revision);
    }
  }

  async watch(key: string, options: WatchOptions = {}): Promise<Watcher> {
    const recursive = options.recursive ?? key.endsWith('/');
    const resourceVersion = parseResourceVersion(options.resourceVersion ?? '');
    const watcher: StoreWatcher = new StoreWatcher({
      kv: this.kv,
      key: recursive ? directoryOf(key) : key,
      recursive,
      predicate: options.predicate ?? EVERYTHING,
      resourceVersion,
      sendInitialEvents: options.sendInitialEvents,
      allowWatchBookmarks: options.allowWatchBookmarks ?? false,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? this.bookmarkIntervalMs,
      pagingBatchSize: this.pagingBatchSize,
      queueCapacity: this.watchQueueCapacity,
      onStopped: () => this.watchers.delete(watcher),
    });
    await watcher.prepare();
    this.watchers.add(watcher);
    watcher.start();
    return watcher;
  }

  currentResourceVersion(): Promise<number> {
    return this.kv.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.kv.compact(revision);
  }

  async close(): Promise<void> {
    for (const watcher of [...this.watchers]) watcher.stop();
    await this.kv.close();
  }
}
