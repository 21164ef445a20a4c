// One watch over a KV, with the event semantics of k8s.io/apiserver
// storage/etcd3/watcher.go: optional initial state as ADDED events read at one
// revision R, then every change after R in revision order, each shaped by the
// predicate (entering the selection → ADDED, leaving → DELETED with the old object,
// staying → MODIFIED). Errors are delivered as one ERROR event, after which the
// watch ends. Raw backend events are queued and decoded only when the consumer pulls
// them, so a backend callback never waits for a consumer.

import { newInternalError, newResourceExpired, newTooLargeResourceVersion } from '../apis/meta/errors.js';
import type { KubeObject, Status } from '../apis/meta/types.js';
import { INITIAL_EVENTS_END_ANNOTATION } from '../apis/meta/types.js';
import { decodeKeyValue } from './codec.js';
import type { Predicate, StorageWatchEvent, Watcher } from './interfaces.js';
import type { KeyValue, KV, KVEvent, KVWatch } from './kv.js';
import { CompactedError, prefixEnd } from './kv.js';
import { formatResourceVersion } from './resource-version.js';
import { WatchQueue } from './watch-queue.js';

type QueueItem =
  | { readonly kind: 'initial'; readonly kv: KeyValue }
  | { readonly kind: 'event'; readonly event: KVEvent }
  | { readonly kind: 'bookmark'; readonly revision: number; readonly initialEventsEnd: boolean }
  | { readonly kind: 'error'; readonly status: Status };

export interface StoreWatchConfig {
  readonly kv: KV;
  /** The key (recursive: a prefix ending with "/"). */
  readonly key: string;
  readonly recursive: boolean;
  readonly predicate: Predicate;
  /** The parsed resourceVersion (0 for "" and "0"). */
  readonly resourceVersion: number;
  readonly sendInitialEvents: boolean | undefined;
  readonly allowWatchBookmarks: boolean;
  readonly bookmarkIntervalMs: number;
  /** Keys per read while sending the initial state. */
  readonly pagingBatchSize: number;
  /** Queued events beyond which the watch is closed as too slow. */
  readonly queueCapacity: number;
  /** Called once the watch has stopped, to let the owner forget it. */
  readonly onStopped?: () => void;
}

function statusObject(status: Status): KubeObject {
  return { ...status };
}

/** The Status an expired watch ends with: what the watch cache says for a too-old RV. */
export function tooOldResourceVersionStatus(requested: number, compacted: number): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${requested} (${Math.max(compacted - 1, 0)})`,
    reason: 'Expired',
    code: 410,
  };
}

export class StoreWatcher implements Watcher {
  private readonly queue: WatchQueue<QueueItem>;
  private kvWatch: KVWatch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Every change up to this revision has been queued (drives periodic bookmarks). */
  private lastRevision = 0;
  /** kind and apiVersion of the watched objects, once one has been seen, for bookmarks. */
  private typeMeta: { kind?: string; apiVersion?: string } | undefined;
  private readonly rangeEnd: string;
  /** Set by prepare() for a watch that starts at the current revision. */
  private startRevision: number | undefined;

  constructor(private readonly config: StoreWatchConfig) {
    this.queue = new WatchQueue<QueueItem>(config.queueCapacity);
    this.rangeEnd = prefixEnd(config.key);
  }

  /**
   * Fixes what must be fixed before watch() returns: a watch "from now" starts at the
   * revision current at the call, so a write made after the call is always seen.
   */
  async prepare(): Promise<void> {
    if (this.config.sendInitialEvents === false && this.config.resourceVersion === 0) {
      this.startRevision = await this.config.kv.currentRevision();
    }
  }

  /** Begins producing events in the background; failures become an ERROR event. */
  start(): void {
    this.run().catch((err: unknown) => this.fail(err));
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.kvWatch?.cancel();
    this.kvWatch = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.queue.end();
    this.config.onStopped?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    try {
      while (true) {
        const item = await this.queue.shift();
        if (item === undefined) return;
        if (item.kind === 'error') {
          yield { type: 'ERROR', object: statusObject(item.status) };
          return;
        }
        let event: StorageWatchEvent | undefined;
        try {
          event = this.transform(item);
        } catch (err) {
          yield { type: 'ERROR', object: statusObject(errorStatus(err)) };
          return;
        }
        if (event) yield event;
      }
    } finally {
      this.stop();
    }
  }

  private async run(): Promise<void> {
    const { kv, resourceVersion: rv, sendInitialEvents } = this.config;
    const initialEvents = sendInitialEvents === true || (sendInitialEvents === undefined && rv === 0);
    if (initialEvents) {
      if (rv > 0) {
        const current = await kv.currentRevision();
        if (rv > current) return this.fail(newTooLargeResourceVersion(rv, current).toStatus());
      }
      const snapshot = await this.sendInitialState();
      if (snapshot === undefined) return;
      if (sendInitialEvents === true && this.config.allowWatchBookmarks) {
        this.queue.push({ kind: 'bookmark', revision: snapshot, initialEventsEnd: true });
      }
      return this.startLive(snapshot);
    }
    if (rv === 0) return this.startLive(this.startRevision ?? (await kv.currentRevision()));
    const current = await kv.currentRevision();
    if (rv > current) return this.fail(newTooLargeResourceVersion(rv, current).toStatus());
    return this.startLive(rv);
  }

  /** Queues ADDED events for the state at one revision; returns that revision (undefined if stopped). */
  private async sendInitialState(): Promise<number | undefined> {
    const { kv, key, recursive, pagingBatchSize } = this.config;
    if (!recursive) {
      const { kv: item, revision } = await kv.get(key);
      if (item) this.queue.push({ kind: 'initial', kv: item });
      return this.stopped ? undefined : revision;
    }
    let revision = 0;
    let start = key;
    while (!this.stopped) {
      // Hold back while the consumer catches up: the read is pinned to one revision,
      // so waiting costs nothing but memory saved.
      await this.queue.waitForRoom(pagingBatchSize);
      if (this.stopped) return undefined;
      const page = await kv.range(start, this.rangeEnd, { revision, limit: pagingBatchSize });
      revision = page.revision;
      for (const item of page.kvs) this.queue.push({ kind: 'initial', kv: item });
      const last = page.kvs[page.kvs.length - 1];
      if (!page.more || last === undefined) return revision;
      start = `${last.key}\u0000`;
    }
    return undefined;
  }

  /** Subscribes to every change after `revision`. */
  private startLive(revision: number): void {
    if (this.stopped) return;
    this.lastRevision = revision;
    const { kv, key, recursive } = this.config;
    this.kvWatch = kv.watch(key, revision + 1, {
      onEvents: (events) => this.onEvents(events, recursive),
      onError: (err) => {
        if (err instanceof CompactedError)
          this.fail(tooOldResourceVersionStatus(revision, err.compactedRevision));
        else this.fail(err);
      },
      onProgress: (rev) => {
        if (rev > this.lastRevision) this.lastRevision = rev;
      },
    });
    if (this.config.allowWatchBookmarks && this.config.bookmarkIntervalMs > 0) {
      this.timer = setInterval(() => this.queueBookmark(), this.config.bookmarkIntervalMs);
      this.timer.unref();
    }
  }

  private onEvents(events: readonly KVEvent[], recursive: boolean): void {
    if (this.stopped) return;
    const floor = this.lastRevision;
    for (const event of events) {
      const rev = event.kv.modRevision;
      // A backend replaying history must never make a watcher see a revision twice.
      if (rev <= floor) continue;
      if (rev > this.lastRevision) this.lastRevision = rev;
      if (!recursive && event.kv.key !== this.config.key) continue;
      if (!this.queue.hasRoom()) {
        // Too slow: end the watch rather than buffer without bound. The client sees the
        // stream end and re-watches from the last resourceVersion it received.
        this.stop();
        return;
      }
      this.queue.push({ kind: 'event', event });
    }
  }

  private queueBookmark(): void {
    if (this.stopped) return;
    const last = this.queue.last();
    if (last?.kind === 'bookmark') return;
    this.queue.push({ kind: 'bookmark', revision: this.lastRevision, initialEventsEnd: false });
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.queue.push({ kind: 'error', status: isStatus(err) ? err : errorStatus(err) });
    // Stop producing; the consumer still receives what is queued, then the ERROR.
    this.kvWatch?.cancel();
    this.kvWatch = undefined;
    this.stop();
  }

  private decode(kv: KeyValue, revision: number): KubeObject {
    const obj = decodeKeyValue(kv, revision);
    if (this.typeMeta === undefined && (obj.kind !== undefined || obj.apiVersion !== undefined)) {
      this.typeMeta = {};
      if (obj.kind !== undefined) this.typeMeta.kind = obj.kind;
      if (obj.apiVersion !== undefined) this.typeMeta.apiVersion = obj.apiVersion;
    }
    return obj;
  }

  private matches(obj: KubeObject): boolean {
    if (this.config.predicate.empty) return true;
    try {
      return this.config.predicate.matches(obj);
    } catch {
      return false;
    }
  }

  private transform(item: Exclude<QueueItem, { kind: 'error' }>): StorageWatchEvent | undefined {
    switch (item.kind) {
      case 'initial': {
        const obj = this.decode(item.kv, item.kv.modRevision);
        return this.matches(obj) ? { type: 'ADDED', object: obj } : undefined;
      }
      case 'bookmark': {
        const metadata: KubeObject['metadata'] = { resourceVersion: formatResourceVersion(item.revision) };
        if (item.initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: 'true' };
        return { type: 'BOOKMARK', object: { ...this.typeMeta, metadata } };
      }
      case 'event':
        return this.transformEvent(item.event);
    }
  }

  private transformEvent(event: KVEvent): StorageWatchEvent | undefined {
    const rev = event.kv.modRevision;
    if (event.type === 'delete') {
      if (!event.prevKv) return undefined;
      // The old object, stamped with the delete's revision (watcher.go prepareObjs).
      const old = this.decode(event.prevKv, rev);
      return this.matches(old) ? { type: 'DELETED', object: old } : undefined;
    }
    const cur = this.decode(event.kv, rev);
    const created = !event.prevKv || event.kv.createRevision === rev;
    if (created) return this.matches(cur) ? { type: 'ADDED', object: cur } : undefined;
    if (this.config.predicate.empty) return { type: 'MODIFIED', object: cur };
    const prev = event.prevKv;
    if (!prev) return undefined;
    const old = this.decode(prev, rev);
    const curPasses = this.matches(cur);
    const oldPasses = this.matches(old);
    if (curPasses && oldPasses) return { type: 'MODIFIED', object: cur };
    if (curPasses) return { type: 'ADDED', object: cur };
    if (oldPasses) return { type: 'DELETED', object: old };
    return undefined;
  }
}

function isStatus(value: unknown): value is Status {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

function errorStatus(err: unknown): Status {
  if (isStatus(err)) return err;
  if (err instanceof CompactedError) {
    // The initial state's revision was compacted while it was being read.
    return { ...newResourceExpired('The resourceVersion for the provided watch is too old.').toStatus() };
  }
  const message = err instanceof Error ? err.message : String(err);
  return newInternalError(message, err).toStatus();
}
