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

import { CompactedError, type KV, type KVEvent, type KVWatch } from '../kv.js';
import type { Logger } from '../../util/log/index.js';

const RETRY_MS = 1000;

export class GlobalProgress {
  private watch: KVWatch | undefined;
  /** Every write up to this revision has been seen. */
  private seen = 0;
  /** The first revision the current watch delivers: it proves nothing about earlier ones. */
  private from = 0;
  private readonly lastWrite = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
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
  }

  /** Starts a watch from `from`; `resume` keeps what the previous watch proved (no gap). */
  private start(from: number, resume = false): void {
    this.watch?.cancel();
    const epoch = ++this.epoch;
    if (!resume) {
      this.from = from;
      this.lastWrite.clear();
    }
    this.seen = from - 1;
    this.watch = this.kv.watch('', from, {
      withoutPrevious: true,
      onEvents: (events) => {
        if (epoch === this.epoch) this.onEvents(events);
      },
      onProgress: (revision) => {
        if (epoch !== this.epoch || revision <= this.seen) return;
        this.seen = revision;
        this.notify();
      },
      onError: (err) => {
        if (epoch !== this.epoch) return;
        this.watch = undefined;
        if (this.stopped) return;
        this.logger?.warn('watch cache: the write-order watch failed; restarting it', { error: err.message });
        if (!(err instanceof CompactedError)) {
          // Resume where it stopped: every write since is replayed, so what it proved
          // still holds, and quiet resources keep their proof. (Not at once: storage
          // that is down would fail it again in a tight loop.)
          this.retry = setTimeout(() => {
            this.retry = undefined;
            if (!this.stopped && !this.watch) this.start(this.seen + 1, true);
          }, RETRY_MS);
          return;
        }
        // History is gone: start over at the current revision (caches that listed
        // before it cannot be proven current until they see an event or relist).
        const again = (): void => {
          this.retry = undefined;
          if (this.stopped || this.watch) return;
          this.kv.currentRevision().then(
            (current) => {
              // A cache may have attached (and started a watch) while this read was out.
              if (!this.stopped && !this.watch) this.start(current + 1);
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
      if (prefix !== undefined) this.lastWrite.set(prefix, revision);
      if (revision > this.seen) this.seen = revision;
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}
