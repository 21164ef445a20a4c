// The storage contract the generic registry programs against (k8s.io/apiserver
// pkg/storage/interfaces.go, narrowed to what we use). Objects go in and come out as
// plain KubeObjects; their metadata.resourceVersion is the storage revision and is
// never part of the stored bytes. No backend is imported here.

import type { KubeObject, Preconditions, WatchEventType } from '../apis/meta/types.js';
import type { StorageDeadline } from './deadline.js';

/** Decides whether an object is selected (label and field selectors). */
export interface Predicate {
  /** True when the predicate selects everything (no selectors); enables remainingItemCount. */
  readonly empty: boolean;
  matches(obj: KubeObject): boolean;
}

export const EVERYTHING: Predicate = { empty: true, matches: () => true };

/**
 * Whether a list selects `obj`. A selector that cannot evaluate an object does not
 * select it (upstream ignores the error too), so one odd object never fails a list.
 */
export function selects(predicate: Predicate, obj: KubeObject): boolean {
  if (predicate.empty) return true;
  try {
    return predicate.matches(obj);
  } catch {
    return false;
  }
}

export type ResourceVersionMatch = '' | 'NotOlderThan' | 'Exact';

export interface GetOptions {
  /** "" = latest (consistent); "0" = any; N = not older than N. */
  readonly resourceVersion?: string;
  /** Return null instead of throwing KeyNotFound. */
  readonly ignoreNotFound?: boolean;
}

export interface ListOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch;
  readonly predicate?: Predicate;
  /** Page size (0 = everything). */
  readonly limit?: number;
  /** Continue token from a previous page. */
  readonly continue?: string;
  /** True for a prefix (collection) list; false reads the single key. */
  readonly recursive?: boolean;
}

export interface ListResult {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export interface WatchOptions {
  /** "" or "0" with sendInitialEvents unset: initial ADDED for current state, then live. N: events after N. */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch;
  readonly predicate?: Predicate;
  readonly recursive?: boolean;
  /** Watch-list: initial ADDED events, then (with bookmarks) a bookmark annotated initial-events-end. */
  readonly sendInitialEvents?: boolean;
  readonly allowWatchBookmarks?: boolean;
  /** How often to send a BOOKMARK when bookmarks are allowed (ms). Default one minute. */
  readonly bookmarkIntervalMs?: number;
}

export interface StorageWatchEvent {
  readonly type: WatchEventType;
  /** For ERROR, a Status-shaped object; for BOOKMARK, an object with only metadata.resourceVersion (and maybe annotations). */
  readonly object: KubeObject;
  /**
   * Present when this very event value goes to many watchers (the watch cache sends
   * one event to every watcher it matches). The event and its object are then shared
   * and frozen, and what a layer above derives from them (the registry's decorated
   * copy, the HTTP layer's encoded line) can be kept here, so that work is done once
   * per event however many watchers receive it.
   */
  readonly shared?: SharedEventMemo;
}

/** A per-event memo: one value per key, computed on first use. */
export interface SharedEventMemo {
  /** The value kept under `key`, computing it first if there is none. `key` is a token its user owns. */
  memo<T>(key: object, compute: () => T): T;
}

/** The plain SharedEventMemo: a tiny map, since an event rarely has more than two derived forms. */
export class EventMemo implements SharedEventMemo {
  private keys: object[] = [];
  private values: unknown[] = [];

  memo<T>(key: object, compute: () => T): T {
    const i = this.keys.indexOf(key);
    if (i >= 0) return this.values[i] as T;
    const value = compute();
    this.keys.push(key);
    this.values.push(value);
    return value;
  }
}

/** An open watch. Events arrive in revision order; after an ERROR event the watch ends. */
export interface Watcher extends AsyncIterable<StorageWatchEvent> {
  /** Ends the watch; iteration finishes after the events already queued. Idempotent. */
  stop(): void;
  /**
   * Push delivery instead of iteration (optional; a watcher that has it is either
   * iterated or given one receiver, never both). Queued events, then each new one, are
   * handed to `receiver` synchronously as they are dispatched, so a fan-out to many
   * watchers costs no promise per event and watcher. When `receiver.event` returns
   * false, later events queue (against the same bound as an iterated watch) until the
   * returned function is called.
   */
  receive?(receiver: WatchReceiver): () => void;
}

/** What a pushing watcher delivers to (see Watcher.receive). */
export interface WatchReceiver {
  /** The next event, in order. False: hold the next ones until resumed. */
  event(event: StorageWatchEvent): boolean;
  /** The watch is over, after its last event (an ERROR event, when it failed); `err` if delivering one failed. */
  end(err?: unknown): void;
}

/**
 * Called with the current object (or null when absent and ignoreNotFound) and
 * returns the object to write. Returning the same bytes as stored writes nothing.
 * Throwing aborts the update with that error.
 */
export type UpdateFunc = (current: KubeObject | null) => Promise<KubeObject> | KubeObject;

/** Checks an object before it is deleted; throwing aborts the delete. */
export type ValidateDeletion = (current: KubeObject) => Promise<void> | void;

/**
 * Objects handed out by get, getList and watch may be shared with other callers
 * and frozen (the watch cache serves one copy from memory): treat them as
 * read-only and copy (cloneObject) before changing one. Objects passed to an
 * UpdateFunc or ValidateDeletion are private copies.
 *
 * A call made for a request takes the request's deadline as its last argument
 * (./deadline.ts; upstream's storage.Interface takes ctx first): every storage call
 * it leads to is bounded by it. Work outside any request passes none; a watch, which
 * lives long, takes none.
 */
export interface Storage {
  /** Creates `obj` at `key`; fails with KeyExists. Returns the stored object with its resourceVersion. */
  create(key: string, obj: KubeObject, deadline?: StorageDeadline): Promise<KubeObject>;
  /** Throws KeyNotFound, or returns null when ignoreNotFound. */
  get(key: string, options?: GetOptions, deadline?: StorageDeadline): Promise<KubeObject | null>;
  /** Lists under `keyPrefix` (which ends with "/" for collections). */
  getList(keyPrefix: string, options?: ListOptions, deadline?: StorageDeadline): Promise<ListResult>;
  /**
   * Reads, calls `tryUpdate`, writes with a compare on the revision, retries on conflict.
   * Preconditions are checked against the current object on every try.
   * `cached` may supply a likely-current object to save a read.
   */
  guaranteedUpdate(
    key: string,
    tryUpdate: UpdateFunc,
    options?: { preconditions?: Preconditions; ignoreNotFound?: boolean; cached?: KubeObject },
    deadline?: StorageDeadline,
  ): Promise<KubeObject>;
  /** Deletes, honouring preconditions; returns the last state with the delete's revision as resourceVersion. */
  delete(
    key: string,
    options?: { preconditions?: Preconditions; validateDeletion?: ValidateDeletion; cached?: KubeObject },
    deadline?: StorageDeadline,
  ): Promise<KubeObject>;
  watch(key: string, options?: WatchOptions): Promise<Watcher>;
  /** The store's current revision (what a consistent list would carry). */
  currentResourceVersion(): Promise<number>;
  /** Drops history before `revision` (tests, and the periodic compactor). */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}
