// A rate-limited work queue in client-go's shape (util/workqueue): an item is
// queued at most once however often it is added, is never handed to two workers
// at once (an add while it is being processed queues it again for after), and a
// failed item comes back after a per-item exponential backoff that forget() resets
// (ItemExponentialFailureRateLimiter). shutDown() wakes every waiting worker, drops
// the pending retries, and lets the items in hand finish.

export interface WorkQueueOptions {
  /** First retry delay (client-go: 5 ms). */
  readonly baseDelayMs?: number;
  /** Longest retry delay (client-go's controller default: 1000 s; far shorter here). */
  readonly maxDelayMs?: number;
  /** Told of each item newly queued and each retry scheduled (client-go's workqueue metrics). */
  readonly metrics?: { added(): void; retried(): void };
}

export class WorkQueue<T> {
  private readonly queue: T[] = [];
  /** Items waiting in `queue` or to be re-queued once their processing ends. */
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly failures = new Map<T, number>();
  private readonly timers = new Map<T, NodeJS.Timeout>();
  private readonly waiters: ((item: T | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly metrics: WorkQueueOptions['metrics'];

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.metrics = options.metrics;
  }

  get length(): number {
    return this.queue.length;
  }

  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.metrics?.added();
    this.enqueue(item);
  }

  private enqueue(item: T): void {
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(item);
      this.processing.add(item);
      waiter(item);
      return;
    }
    this.queue.push(item);
  }

  /** Adds the item again after its backoff: base * 2^failures, capped. */
  addRateLimited(item: T): void {
    if (this.shuttingDown || this.timers.has(item)) return;
    this.metrics?.retried();
    const failures = this.failures.get(item) ?? 0;
    this.failures.set(item, failures + 1);
    const delay = Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
    const timer = setTimeout(() => {
      this.timers.delete(item);
      this.add(item);
    }, delay);
    timer.unref();
    this.timers.set(item, timer);
  }

  /** The item succeeded (or is given up on): its next failure starts from the base delay. */
  forget(item: T): void {
    this.failures.delete(item);
  }

  /** The next item, or undefined once the queue is shut down. Call done(item) when finished. */
  get(): Promise<T | undefined> {
    const item = this.queue.shift();
    if (item !== undefined) {
      this.dirty.delete(item);
      this.processing.add(item);
      return Promise.resolve(item);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(item: T): void {
    this.processing.delete(item);
    // Added again while in hand: queued now (and counted when it was added).
    if (this.dirty.has(item) && !this.shuttingDown) {
      this.dirty.delete(item);
      this.enqueue(item);
    }
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
