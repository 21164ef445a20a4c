// Proving a resource's cache current when storage cannot report progress per
// watch (etcd before 3.4.31/3.5.13 answers a progress request out of order with
// events: etcd-io/etcd#15220). One more watch sees every write in revision order;
// for each resource prefix it remembers the last revision that touched it. A
// cache that has applied that revision is then current as of everything this
// watch has seen: no write between its last event and that revision concerned it.
//
// The watch covers the whole keyspace, not just the root: a consistent read waits
// for storage's current revision, and a write outside the root (another user of
// the same etcd, or a raw benchmark) would otherwise leave that revision unseen and
// send every read to storage after a wait. It asks for no previous values, so etcd
// does no extra read per event.
//
// Since this watch sees every write anyway, it also feeds the caches (feed(): the
// KV's watch contract for one prefix): each write then reaches this server once,
// not once for its cache's watch and again here (etcd sent, and we received and
// decoded, every created object twice). A cache fed this way is current as of this
// watch by construction: it is handed each of its prefix's events in the same call
// that records the event here, before anyone is told of the step. Only caches over
// KVs whose watches lack ordered progress requests use it (sharesWatch()); the
// others keep their own watches, and this watch is not started for them at all.
//
// A feed may start at a revision this watch has already passed (a cache lists at
// revision L while the watch delivered L+1..seen): the watch is then restarted from
// L+1, keeping what it proved (every write up to `seen` was seen, and a prefix's
// last write only ever rises), and etcd replays the gap; every feed drops what it
// was handed before. Splitting the watch instead (one watch per cache plus one over
// what no cache covers) would lose the proof: separate streams are not ordered with
// each other, so a write seen on one says nothing of a quiet cache's stream.

import { CompactedError, type KV, type KVEvent, type KVWatch, type KVWatchHandlers } from '../kv.js';
import type { Logger } from '../../util/log/index.js';

const RETRY_MS = 1000;
/** A key no resource lives under: the probe watch that asks the KV whether it orders progress requests. */
const PROBE_PREFIX = '/\u0000write-order-probe/';

/** One cache's watch of its prefix, served from the write-order watch. */
interface Feed {
  readonly prefix: string;
  /** Events before this revision were handed over already (or precede the feed's start). */
  next: number;
  readonly handlers: KVWatchHandlers;
}

export class GlobalProgress {
  private watch: KVWatch | undefined;
  /** Every write up to this revision has been seen. */
  private seen = 0;
  /** The first revision the current watch delivers: it proves nothing about earlier ones. */
  private from = 0;
  private readonly lastWrite = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private readonly feeds = new Set<Feed>();
  /** Whether the KV's watches answer progress requests in order (then caches keep their own). */
  private progressRequests: boolean | undefined;
  /** While the watch is down: the earliest revision a feed that arrived meanwhile needs. */
  private feedFrom: number | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  /**
   * Which watch is the current one: a replaced watch's late callbacks must not touch
   * the state (an older watch replaying an old write would lower a prefix's last
   * write, and prove a cache current that has not applied a newer one).
   */
  private epoch = 0;

  constructor(
    private readonly kv: KV,
    private readonly prefixOf: (key: string) => string | undefined,
    private readonly logger?: Logger,
  ) {}

  /** Starts following writes (after `listRevision`, if not started yet); `onAdvance` hears of each step. */
  attach(onAdvance: () => void, listRevision: number): void {
    this.listeners.add(onAdvance);
    if (this.stopped || this.retry !== undefined) return;
    if (!this.watch) this.start(listRevision + 1);
    else if (listRevision + 1 < this.from) {
      // A cache that listed before this watch began could never be proven current
      // (the writes between are unseen): start over from its revision (etcd replays them).
      this.start(listRevision + 1);
    }
  }

  detach(onAdvance: () => void): void {
    this.listeners.delete(onAdvance);
  }

  /**
   * True when caches over this KV should be fed by feed() below: its watches cannot
   * answer progress requests in order, so this watch runs for them anyway. Asked of
   * the KV once, by opening and cancelling one watch (as a cache's own watch would
   * tell, by lacking requestProgress).
   */
  sharesWatch(): boolean {
    if (this.progressRequests === undefined) {
      const probe = this.kv.watch(PROBE_PREFIX, 0, {
        withoutPrevious: true,
        onEvents: () => undefined,
        onError: () => undefined,
      });
      this.progressRequests = probe.requestProgress !== undefined;
      probe.cancel();
    }
    return !this.progressRequests;
  }

  /**
   * The KV's watch of `prefix` from `fromRevision` (its contract: events in order,
   * each once; onError ends it), served from this watch. A lost history (compaction)
   * ends every feed with the CompactedError; a broken stream does not: the watch
   * resumes where it stopped and the feeds go on. No requestProgress: a cache fed
   * here proves itself current through proves().
   */
  feed(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    const feed: Feed = { prefix, next: fromRevision, handlers };
    if (this.stopped) {
      queueMicrotask(() => handlers.onError(new Error('the write-order watch was stopped')));
      return { cancel: () => undefined };
    }
    this.feeds.add(feed);
    this.cover(fromRevision);
    return { cancel: () => this.feeds.delete(feed) };
  }

  /** Makes the watch deliver every event from `from` on (starting, or restarting it earlier). */
  private cover(from: number): void {
    if (this.watch) {
      // Already handed over: etcd replays them to a watch restarted there.
      if (from <= this.seen) this.start(from, true);
      return;
    }
    if (this.retry !== undefined) {
      this.feedFrom = Math.min(this.feedFrom ?? from, from);
      return;
    }
    this.start(from);
  }

  /** Every write up to this revision has been seen. */
  get revision(): number {
    return this.watch ? this.seen : 0;
  }

  /**
   * True when a cache of `prefix` that has applied every change up to
   * `cacheRevision` (its last change being at `lastEvent`) is current at `revision`.
   */
  proves(prefix: string, cacheRevision: number, lastEvent: number, revision: number): boolean {
    if (!this.watch || this.seen < revision) return false;
    // The cache must be current up to where this watch starts: before it, nothing is known.
    if (cacheRevision + 1 < this.from) return false;
    return lastEvent >= (this.lastWrite.get(prefix) ?? 0);
  }

  stop(): void {
    this.stopped = true;
    this.epoch++;
    clearTimeout(this.retry);
    this.watch?.cancel();
    this.watch = undefined;
    this.failFeeds(new Error('the write-order watch was stopped'));
  }

  /**
   * Starts a watch from `from`. `resume` keeps what the previous watch proved: it
   * starts no later than the revision after `seen` (no gap), so every write up to
   * `seen` is still known, and a restart earlier than that only replays them.
   */
  private start(from: number, resume = false): void {
    this.watch?.cancel();
    const epoch = ++this.epoch;
    this.feedFrom = undefined;
    if (resume) {
      this.from = Math.min(this.from, from);
    } else {
      this.from = from;
      this.lastWrite.clear();
      this.seen = from - 1;
    }
    this.watch = this.kv.watch('', from, {
      withoutPrevious: true,
      onEvents: (events) => {
        if (epoch === this.epoch) this.onEvents(events);
      },
      onProgress: (revision) => {
        if (epoch !== this.epoch || revision <= this.seen) return;
        this.seen = revision;
        if (this.feeds.size > 0) this.progressFeeds(revision);
        this.notify();
      },
      onError: (err) => {
        if (epoch !== this.epoch) return;
        this.watch = undefined;
        if (this.stopped) return;
        this.logger?.warn('watch cache: the write-order watch failed; restarting it', { error: err.message });
        if (!(err instanceof CompactedError)) {
          // Resume where it stopped: every write since is replayed, so what it proved
          // still holds, quiet resources keep their proof, and the feeds go on. (Not at
          // once: storage that is down would fail it again in a tight loop.)
          this.retry = setTimeout(() => {
            this.retry = undefined;
            if (!this.stopped && !this.watch) this.start(Math.min(this.seen + 1, this.feedFrom ?? Infinity), true);
          }, RETRY_MS);
          return;
        }
        // The feeds' next events are gone: their caches relist (and feed again from there).
        this.failFeeds(err);
        // History is gone: start over at the current revision (caches that listed
        // before it cannot be proven current until they see an event or relist).
        const again = (): void => {
          this.retry = undefined;
          if (this.stopped || this.watch) return;
          this.kv.currentRevision().then(
            (current) => {
              // A cache may have attached or fed (and started a watch) while this read was
              // out; a feed that arrived meanwhile needs its events from where it listed.
              if (!this.stopped && !this.watch) this.start(Math.min(current + 1, this.feedFrom ?? Infinity));
            },
            () => {
              this.retry = setTimeout(again, RETRY_MS);
            },
          );
        };
        this.retry = setTimeout(again, 0);
      },
    });
  }

  private onEvents(events: readonly KVEvent[]): void {
    for (const event of events) {
      const revision = event.kv.modRevision;
      const prefix = this.prefixOf(event.kv.key);
      // Only ever up: a restarted watch replays writes older than ones already recorded.
      if (prefix !== undefined && revision > (this.lastWrite.get(prefix) ?? 0)) {
        this.lastWrite.set(prefix, revision);
      }
      if (revision > this.seen) this.seen = revision;
    }
    // Before anyone hears of the step: a cache fed here is current when told.
    if (this.feeds.size > 0) this.feedEvents(events);
    this.notify();
  }

  /** Hands each feed the events of its prefix it has not had yet. */
  private feedEvents(events: readonly KVEvent[]): void {
    for (const feed of [...this.feeds]) {
      let mine: KVEvent[] | undefined;
      for (const event of events) {
        if (event.kv.modRevision >= feed.next && event.kv.key.startsWith(feed.prefix)) {
          (mine ??= []).push(event);
        }
      }
      if (mine === undefined || !this.feeds.has(feed)) continue;
      feed.next = mine[mine.length - 1]!.kv.modRevision + 1;
      this.handOver(feed, () => feed.handlers.onEvents(mine));
    }
  }

  /** Every event up to `revision` was handed over: feeds past their start hear so. */
  private progressFeeds(revision: number): void {
    for (const feed of [...this.feeds]) {
      if (revision + 1 < feed.next || !this.feeds.has(feed)) continue;
      feed.next = revision + 1;
      this.handOver(feed, () => feed.handlers.onProgress?.(revision));
    }
  }

  /** Calls a feed's handler; one that throws ends that feed alone, as it would end its own watch. */
  private handOver(feed: Feed, call: () => void): void {
    try {
      call();
    } catch (err) {
      this.feeds.delete(feed);
      feed.handlers.onError(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private failFeeds(err: Error): void {
    const feeds = [...this.feeds];
    this.feeds.clear();
    for (const feed of feeds) feed.handlers.onError(err);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}
