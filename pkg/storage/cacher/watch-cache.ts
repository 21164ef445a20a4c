// The state one resource's cache holds (k8s.io/apiserver storage/cacher
// watch_cache.go): every object under the prefix as of `revision`, and the
// changes of a window before it. The window is what lets a watch resume from a
// recent revision and a list read the state at one, without storage; it holds at
// least the last 75 s of changes, 100 to 102,400 of them (event-history.ts).
//
// Objects are decoded once, frozen, and shared: a list hands out the same
// objects the next list hands out, and every watcher receives the same event.

import { newInternalError } from '../../apis/meta/errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { EventMemo } from '../interfaces.js';
import type { StorageWatchEvent } from '../interfaces.js';
import { formatResourceVersion } from '../resource-version.js';
import { EventHistory, type HistorySizing } from './event-history.js';
import { OrderedMap } from './ordered-map.js';

/** Freezes a decoded JSON value all the way down, so a shared object cannot be changed by accident. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** A shared watch event: frozen, with a memo for what layers above derive from it. */
export function sharedEvent(type: StorageWatchEvent['type'], object: KubeObject): StorageWatchEvent {
  return Object.freeze({ type, object, shared: new EventMemo() });
}

/** The object as it was, stamped with another revision (a delete's), sharing everything else. */
function stamped(obj: KubeObject, revision: number): KubeObject {
  const metadata = Object.freeze({ ...obj.metadata, resourceVersion: formatResourceVersion(revision) });
  return Object.freeze({ ...obj, metadata });
}

/** One key's state: the object at its modRevision, or why its stored bytes would not decode. */
export class CacheEntry {
  private addedEvent: StorageWatchEvent | undefined;

  constructor(
    readonly key: string,
    /** The key's modRevision. */
    readonly rev: number,
    /** Frozen, with metadata.resourceVersion = rev; undefined when `error` is set. */
    readonly obj: KubeObject | undefined,
    readonly error?: Error,
  ) {}

  /** The object, or the decode error storage would have thrown for it. */
  object(): KubeObject {
    if (this.obj === undefined) throw this.error ?? new Error(`no object at ${this.key}`);
    return this.obj;
  }

  /** The ADDED event for this state (initial events of a watch), built once for all watchers. */
  added(): StorageWatchEvent {
    this.addedEvent ??= sharedEvent('ADDED', this.object());
    return this.addedEvent;
  }
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change to one key, with the state before it: what watchers are sent and snapshots undo. */
export class CacheEvent {
  private baseEvent: StorageWatchEvent | undefined;
  private addedEvent: StorageWatchEvent | undefined;
  private leftEvent: StorageWatchEvent | undefined;

  constructor(
    readonly rev: number,
    readonly key: string,
    readonly type: ChangeType,
    /** The new state; undefined for a delete. */
    readonly cur: CacheEntry | undefined,
    /** The state before; undefined for a create. */
    readonly prev: CacheEntry | undefined,
  ) {}

  /** The event as it happened: the new object, or for a delete the last state at the delete's revision. */
  base(): StorageWatchEvent {
    if (!this.baseEvent) {
      if (this.type === 'DELETED') this.baseEvent = this.left();
      else this.baseEvent = sharedEvent(this.type, (this.cur as CacheEntry).object());
    }
    return this.baseEvent;
  }

  /** For a watcher whose selection the object just entered. */
  entered(): StorageWatchEvent {
    if (this.type === 'ADDED') return this.base();
    this.addedEvent ??= sharedEvent('ADDED', (this.cur as CacheEntry).object());
    return this.addedEvent;
  }

  /** For a watcher whose selection the object just left: the old object, at this revision. */
  left(): StorageWatchEvent {
    this.leftEvent ??= sharedEvent('DELETED', stamped((this.prev as CacheEntry).object(), this.rev));
    return this.leftEvent;
  }

  /** Whether a watcher selecting with `matches` sees this change, and as what. */
  shapeFor(matches: ((obj: KubeObject) => boolean) | undefined): StorageWatchEvent | undefined {
    try {
      if (matches === undefined) return this.base();
      switch (this.type) {
        case 'ADDED':
          return matches(this.base().object) ? this.base() : undefined;
        case 'DELETED':
          return matches((this.prev as CacheEntry).object()) ? this.base() : undefined;
        case 'MODIFIED': {
          const curPasses = matches((this.cur as CacheEntry).object());
          const oldPasses = matches((this.prev as CacheEntry).object());
          if (curPasses && oldPasses) return this.base();
          if (curPasses) return this.entered();
          if (oldPasses) return this.left();
          return undefined;
        }
      }
    } catch (err) {
      // An object whose stored bytes do not decode ends the watch, as it does without the cache.
      const message = err instanceof Error ? err.message : String(err);
      return { type: 'ERROR', object: { ...newInternalError(message, err).toStatus() } };
    }
  }
}

/** The state at one revision. Read it synchronously: the cache moves on at the next event. */
export interface Snapshot {
  readonly revision: number;
  get(key: string): CacheEntry | undefined;
  /** Entries with start <= key < end, in key order. */
  range(start: string, end: string): Iterable<CacheEntry>;
  /** How many keys lie in [start, end). */
  count(start: string, end: string): number;
}

export interface TypeMeta {
  kind?: string;
  apiVersion?: string;
}

export class WatchCache {
  private readonly store = new OrderedMap<CacheEntry>();
  private readonly history: EventHistory<CacheEvent>;
  private currentRevision = 0;
  private eventRevision = 0;
  /** The revision of the last list: the window starts there until an event leaves it. */
  private listRevision = 0;
  /** Storage compacted through this revision: no window reaches before it. */
  private compactedRevision = 0;
  private seenType: TypeMeta | undefined;

  constructor(sizing: HistorySizing) {
    this.history = new EventHistory<CacheEvent>(sizing);
  }

  /** Every change up to this revision has been applied. */
  get revision(): number {
    return this.currentRevision;
  }

  /**
   * The revision of the last change applied (or of the list). Unlike `revision` it
   * never moves on a progress notification: a change is applied if it is newer
   * than this, whatever storage said about progress before it arrived.
   */
  get lastEventRevision(): number {
    return this.eventRevision;
  }

  /**
   * A watch may resume from this revision or any later one: every event after it is
   * held. Upstream's getAllEventsSinceLocked: the list's revision while no event has
   * left the window since it, else one below the oldest event held (a watch from an
   * older revision gets "too old resource version: X (windowStart)"); never before
   * what storage compacted, nor before the last event dropped (the same revision as
   * the oldest held only if one storage transaction changed two keys, which
   * kube-apiserver never does and an operator's etcdctl txn might).
   */
  get windowStart(): number {
    const history = this.history;
    if (!history.evictedSinceClear) return Math.max(this.listRevision, this.compactedRevision);
    const belowOldest = history.length > 0 ? history.at(0).rev - 1 : 0;
    return Math.max(belowOldest, history.lastEvictedRevision, this.compactedRevision);
  }

  /** Events the window holds, and how many it can hold before it resizes or drops one (tests, metrics). */
  get historyLength(): number {
    return this.history.length;
  }

  get historyCapacity(): number {
    return this.history.capacity;
  }

  /** How many times the window doubled, and halved. */
  get historyResizes(): { readonly increases: number; readonly decreases: number } {
    return this.history.resizes;
  }

  get size(): number {
    return this.store.size;
  }

  /** kind and apiVersion of the objects cached, once one has been seen (for bookmarks). */
  get typeMeta(): TypeMeta | undefined {
    return this.seenType;
  }

  /** Starts over from a full list read at `revision`. */
  replace(entries: Iterable<CacheEntry>, revision: number): void {
    this.store.clear();
    this.history.clear();
    for (const entry of entries) {
      this.store.set(entry.key, entry);
      this.noteType(entry);
    }
    this.currentRevision = revision;
    this.eventRevision = revision;
    this.listRevision = revision;
    this.compactedRevision = 0;
  }

  /**
   * Applies a put (`entry` given) or a delete of `key` at `rev`; returns the change,
   * or undefined for the delete of a key the cache never had.
   */
  apply(key: string, rev: number, entry: CacheEntry | undefined): CacheEvent | undefined {
    const prev = this.store.get(key);
    let event: CacheEvent | undefined;
    if (entry) {
      this.store.set(key, entry);
      this.noteType(entry);
      event = new CacheEvent(rev, key, prev ? 'MODIFIED' : 'ADDED', entry, prev);
    } else if (prev) {
      this.store.delete(key);
      event = new CacheEvent(rev, key, 'DELETED', undefined, prev);
    }
    if (event) this.history.push(event);
    if (rev > this.currentRevision) this.currentRevision = rev;
    if (rev > this.eventRevision) this.eventRevision = rev;
    return event;
  }

  /** Storage says every change up to `revision` has been delivered. */
  observeProgress(revision: number): boolean {
    if (revision <= this.currentRevision) return false;
    this.currentRevision = revision;
    return true;
  }

  /** Storage dropped its history before `revision`: so does the window. */
  compact(revision: number): void {
    if (revision <= this.compactedRevision) return;
    this.compactedRevision = revision;
    this.history.dropThrough(revision);
  }

  get(key: string): CacheEntry | undefined {
    return this.store.get(key);
  }

  /** The changes after `revision` (which must be >= windowStart), oldest first. */
  eventsAfter(revision: number): CacheEvent[] {
    const out: CacheEvent[] = [];
    for (let i = this.history.firstAfter(revision); i < this.history.length; i++)
      out.push(this.history.at(i));
    return out;
  }

  /** The state at `revision`, which must lie in [windowStart, revision]. */
  snapshot(revision: number): Snapshot {
    const store = this.store;
    if (revision >= this.currentRevision) {
      return {
        revision,
        get: (key) => store.get(key),
        range: (start, end) => values(store.range(start, end)),
        count: (start, end) => store.count(start, end),
      };
    }
    // Undo the changes after `revision`: the first change to each key tells its state before.
    const before = new Map<string, CacheEntry | null>();
    for (const event of this.eventsAfter(revision)) {
      if (!before.has(event.key)) before.set(event.key, event.prev ?? null);
    }
    const get = (key: string): CacheEntry | undefined => {
      const old = before.get(key);
      return old === undefined ? store.get(key) : (old ?? undefined);
    };
    /** Keys that existed then but are gone now, in [start, end), sorted. */
    const gone = (start: string, end: string): CacheEntry[] => {
      const out: CacheEntry[] = [];
      for (const [key, old] of before) {
        if (old && !store.has(key) && key >= start && (end === '' || key < end)) out.push(old);
      }
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    };
    return {
      revision,
      get,
      *range(start, end) {
        const extra = gone(start, end);
        let i = 0;
        for (const [key, current] of store.range(start, end)) {
          while (i < extra.length && (extra[i] as CacheEntry).key < key) yield extra[i++] as CacheEntry;
          const old = before.get(key);
          if (old === undefined) yield current;
          else if (old !== null) yield old;
        }
        while (i < extra.length) yield extra[i++] as CacheEntry;
      },
      count(start, end) {
        let n = store.count(start, end) + gone(start, end).length;
        for (const [key, old] of before) {
          if (old === null && store.has(key) && key >= start && (end === '' || key < end)) n--;
        }
        return n;
      },
    };
  }

  private noteType(entry: CacheEntry): void {
    if (this.seenType !== undefined || !entry.obj) return;
    const { kind, apiVersion } = entry.obj;
    if (kind === undefined && apiVersion === undefined) return;
    this.seenType = {};
    if (kind !== undefined) this.seenType.kind = kind;
    if (apiVersion !== undefined) this.seenType.apiVersion = apiVersion;
  }
}

function* values(entries: Iterable<[string, CacheEntry]>): Generator<CacheEntry> {
  for (const [, entry] of entries) yield entry;
}
