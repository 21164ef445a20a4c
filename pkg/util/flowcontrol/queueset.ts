// Fair queuing for one concurrency limit: a small form of k8s.io/apiserver's API
// Priority and Fairness queue set (pkg/util/flowcontrol/fairqueuing/queueset).
//
// Requests belong to flows (here: one per user), and each flow waiting or executing
// has its own queue. (Upstream shuffle-shards flows onto a fixed deck of queues, a
// hand of several per flow, to bound memory with thousands of flows; a flooding flow
// then spreads over its whole hand and outweighs a light flow six to one when they
// meet. One queue per flow, created when the flow arrives and dropped when it has
// nothing waiting or executing, isolates flows fully; the total waiting over all
// flows is bounded instead.) Queues are bounded (a full queue, or all queues holding
// their total, rejects: queue-full), a waiting request gives up
// after the wait limit (time-out) or when its client goes away (cancelled), and
// seats are handed out by virtual time: each queue carries the virtual time at which
// its next request may start, advanced by the work of every request it dispatched
// and corrected by how long that work really took, and the queue furthest behind is
// served first. So a flow that keeps many requests executing is served after a flow
// that has none, whatever their arrival rates: one caller's flood cannot starve the
// others. A total queue limit of 0 means a plain concurrency limit (concurrency-limit).
//
// Pure: no HTTP, no metrics; time comes from a Clock and the observer is told of
// every change, so the filter above records the metrics and tests use a fake clock.

import { realClock, type Clock } from './clock.js';

/** upstream's rejection reasons (the `reason` label of apiserver_flowcontrol_rejected_requests_total). */
export type RejectReason = 'queue-full' | 'time-out' | 'concurrency-limit' | 'cancelled';

export interface QueueSetConfig {
  /** Requests that may execute at once. */
  readonly concurrencyLimit: number;
  /** Requests all queues hold together; 0 = no queuing: whatever exceeds the limit is rejected at once. */
  readonly totalQueueLimit: number;
  /** Requests one flow's queue holds. */
  readonly queueLengthLimit: number;
  /** How long a request may wait for a seat before it is rejected. */
  readonly queueWaitLimitMs: number;
  /**
   * The work a request is assumed to be when it starts (upstream assumes a few
   * seconds), corrected when it finishes. Only the ordering depends on it.
   */
  readonly estimatedServiceMs?: number;
}

/** What the filter records: every change in waiting and executing counts, and outcomes. */
export interface QueueSetObserver {
  waiting?(count: number): void;
  executing?(count: number): void;
  dispatched?(waitedMs: number): void;
  rejected?(reason: RejectReason, waitedMs: number): void;
}

/**
 * A seat: release it once the request is over (later calls do nothing). `release`
 * needs no `this`: it may be handed on as it is, as a listener.
 */
export interface Seat {
  readonly release: () => void;
}

export type Decision =
  | { readonly admitted: true; readonly seat: Seat }
  | { readonly admitted: false; readonly reason: RejectReason };

interface Waiter {
  readonly queue: Queue;
  readonly enqueuedAt: number;
  readonly resolve: (d: Decision) => void;
  cancelTimer: () => void;
  unlisten: () => void;
  done: boolean;
}

interface Queue {
  readonly flow: string;
  readonly waiting: Waiter[];
  executing: number;
  /** The virtual time at which this queue's next request starts. */
  nextDispatchR: number;
}

const DEFAULT_ESTIMATED_SERVICE_MS = 3000;

export class QueueSet {
  /** The queues of flows with requests waiting or executing, in arrival order. */
  private readonly queues = new Map<string, Queue>();
  private readonly estimatedServiceMs: number;
  private executing = 0;
  private waitingTotal = 0;
  /** Virtual time: advances, per active queue, at the rate seats are shared among them. */
  private virtualTime = 0;
  private lastRealTime: number;

  constructor(
    private readonly config: QueueSetConfig,
    private readonly observer: QueueSetObserver = {},
    private readonly clock: Clock = realClock,
  ) {
    if (config.concurrencyLimit < 1) throw new Error('concurrencyLimit must be at least 1');
    this.estimatedServiceMs = config.estimatedServiceMs ?? DEFAULT_ESTIMATED_SERVICE_MS;
    this.lastRealTime = clock.now();
  }

  /** Requests executing now. */
  get executingCount(): number {
    return this.executing;
  }

  /** Requests waiting now. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  /**
   * A seat for a request of `flow`, now or once one is fair to give; or the reason
   * it was refused. The signal (asked for only if the request must wait: most never
   * do) aborting while the request waits removes it (cancelled).
   */
  admit(flow: string, signalOf?: () => AbortSignal): Decision | Promise<Decision> {
    const now = this.syncTime();
    if (this.config.totalQueueLimit <= 0) {
      if (this.executing >= this.config.concurrencyLimit) return this.reject('concurrency-limit', 0);
      return this.start(undefined, 0, now);
    }
    // A free seat and nobody waiting anywhere: no need to queue.
    const free = this.waitingTotal === 0 && this.executing < this.config.concurrencyLimit;
    const existing = this.queues.get(flow);
    if (
      !free &&
      ((existing?.waiting.length ?? 0) >= this.config.queueLengthLimit ||
        this.waitingTotal >= this.config.totalQueueLimit)
    )
      return this.reject('queue-full', 0);
    const signal = free ? undefined : signalOf?.();
    if (signal?.aborted) return this.reject('cancelled', 0);
    // A new flow (every idle flow is new: its queue is dropped) starts at the present,
    // so it cannot save up credit while idle.
    const queue: Queue = existing ?? { flow, waiting: [], executing: 0, nextDispatchR: this.virtualTime };
    if (!existing) this.queues.set(flow, queue);
    if (free) {
      queue.nextDispatchR += this.estimatedServiceMs;
      return this.start(queue, 0, now);
    }
    return new Promise<Decision>((resolve) => {
      const waiter: Waiter = {
        queue,
        enqueuedAt: this.clock.now(),
        resolve,
        cancelTimer: () => undefined,
        unlisten: () => undefined,
        done: false,
      };
      waiter.cancelTimer = this.clock.setTimer(this.config.queueWaitLimitMs, () =>
        this.giveUp(waiter, 'time-out'),
      );
      if (signal) {
        const onAbort = (): void => this.giveUp(waiter, 'cancelled');
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      queue.waiting.push(waiter);
      this.waitingTotal++;
      this.observer.waiting?.(this.waitingTotal);
      this.dispatch();
    });
  }

  /**
   * Advances virtual time by the real time passed, times the seats each active
   * queue gets (the limit shared among queues with requests waiting or executing).
   * Returns the present, so that a request's admission or release reads the clock once.
   */
  private syncTime(): number {
    const now = this.clock.now();
    const elapsed = now - this.lastRealTime;
    this.lastRealTime = now;
    if (elapsed <= 0) return now;
    // Every queue kept has requests waiting or executing.
    const active = this.queues.size;
    if (active === 0) return now;
    const demand = Math.min(this.executing + this.waitingTotal, this.config.concurrencyLimit);
    this.virtualTime += (elapsed * demand) / active;
    return now;
  }

  /** Hands free seats to waiting requests, each to the queue furthest behind in virtual time. */
  private dispatch(): void {
    while (this.executing < this.config.concurrencyLimit && this.waitingTotal > 0) {
      // Ties go to the flow that arrived first (the map keeps arrival order).
      let best: Queue | undefined;
      for (const q of this.queues.values()) {
        if (q.waiting.length > 0 && (!best || q.nextDispatchR < best.nextDispatchR)) best = q;
      }
      if (!best) return;
      const waiter = best.waiting.shift() as Waiter;
      this.waitingTotal--;
      this.observer.waiting?.(this.waitingTotal);
      waiter.done = true;
      waiter.cancelTimer();
      waiter.unlisten();
      best.nextDispatchR += this.estimatedServiceMs;
      const now = this.clock.now();
      waiter.resolve(this.start(best, now - waiter.enqueuedAt, now));
    }
  }

  /** A seat from `startedAt` (the clock's present, read by the caller). */
  private start(queue: Queue | undefined, waitedMs: number, startedAt: number): Decision {
    this.executing++;
    if (queue) queue.executing++;
    this.observer.executing?.(this.executing);
    this.observer.dispatched?.(waitedMs);
    let released = false;
    const seat: Seat = {
      release: () => {
        if (released) return;
        released = true;
        const now = this.syncTime();
        this.executing--;
        if (queue) {
          queue.executing--;
          // The work was assumed; now it is known (upstream corrects the same way).
          const actual = now - startedAt;
          queue.nextDispatchR -= this.estimatedServiceMs - actual;
          this.dropIfIdle(queue);
        }
        this.observer.executing?.(this.executing);
        this.dispatch();
      },
    };
    return { admitted: true, seat };
  }

  private giveUp(waiter: Waiter, reason: RejectReason): void {
    if (waiter.done) return;
    waiter.done = true;
    waiter.cancelTimer();
    waiter.unlisten();
    const at = waiter.queue.waiting.indexOf(waiter);
    if (at >= 0) waiter.queue.waiting.splice(at, 1);
    this.dropIfIdle(waiter.queue);
    this.waitingTotal--;
    this.observer.waiting?.(this.waitingTotal);
    waiter.resolve(this.reject(reason, this.clock.now() - waiter.enqueuedAt));
  }

  /** A flow with nothing waiting or executing has no queue: memory follows the flows present. */
  private dropIfIdle(queue: Queue): void {
    if (queue.waiting.length === 0 && queue.executing === 0) this.queues.delete(queue.flow);
  }

  private reject(reason: RejectReason, waitedMs: number): Decision {
    this.observer.rejected?.(reason, waitedMs);
    return { admitted: false, reason };
  }
}
