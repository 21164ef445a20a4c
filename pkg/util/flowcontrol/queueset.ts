// Fair queuing for one concurrency limit: a small form of k8s.io/apiserver's API
// Priority and Fairness queue set (pkg/util/flowcontrol/fairqueuing/queueset).
//
// Requests belong to flows (here: one per user). A flow is shuffle-sharded onto a
// hand of a few queues out of a fixed deck and joins the shortest of its hand, so a
// flooding flow fills its own few queues and rarely any other flow's whole hand.
// Queues are bounded (a full queue rejects: queue-full), a waiting request gives up
// after the wait limit (time-out) or when its client goes away (cancelled), and
// seats are handed out by virtual time: each queue carries the virtual time at which
// its next request may start, advanced by the work of every request it dispatched
// and corrected by how long that work really took, and the queue furthest behind is
// served first. So a flow that keeps many requests executing is served after a flow
// that has none, whatever their arrival rates: one caller's flood cannot starve the
// others. No queues at all means a plain concurrency limit (concurrency-limit).
//
// Pure: no HTTP, no metrics; time comes from a Clock and the observer is told of
// every change, so the filter above records the metrics and tests use a fake clock.

import { realClock, type Clock } from './clock.js';

/** upstream's rejection reasons (the `reason` label of apiserver_flowcontrol_rejected_requests_total). */
export type RejectReason = 'queue-full' | 'time-out' | 'concurrency-limit' | 'cancelled';

export interface QueueSetConfig {
  /** Requests that may execute at once. */
  readonly concurrencyLimit: number;
  /** Queues in the deck; 0 rejects at once whatever exceeds the limit. */
  readonly queues: number;
  /** Queues a flow is dealt (upstream's handSize), at most `queues`. */
  readonly handSize: number;
  /** Requests one queue holds. */
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

/** A seat: release it once the request is over (exactly once; later calls do nothing). */
export interface Seat {
  release(): void;
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
  readonly index: number;
  readonly waiting: Waiter[];
  executing: number;
  /** The virtual time at which this queue's next request starts. */
  nextDispatchR: number;
}

const DEFAULT_ESTIMATED_SERVICE_MS = 3000;

export class QueueSet {
  private readonly queues: Queue[];
  private readonly estimatedServiceMs: number;
  private executing = 0;
  private waitingTotal = 0;
  /** Virtual time: advances, per active queue, at the rate seats are shared among them. */
  private virtualTime = 0;
  private lastRealTime: number;
  /** Where the next tie among queues is broken (upstream's robinIndex). */
  private robin = 0;

  constructor(
    private readonly config: QueueSetConfig,
    private readonly observer: QueueSetObserver = {},
    private readonly clock: Clock = realClock,
  ) {
    if (config.concurrencyLimit < 1) throw new Error('concurrencyLimit must be at least 1');
    if (config.queues > 0 && (config.handSize < 1 || config.handSize > config.queues))
      throw new Error('handSize must be between 1 and the number of queues');
    this.queues = Array.from({ length: config.queues }, (_, index) => ({
      index,
      waiting: [],
      executing: 0,
      nextDispatchR: 0,
    }));
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
    this.syncTime();
    if (this.queues.length === 0) {
      if (this.executing >= this.config.concurrencyLimit) return this.reject('concurrency-limit', 0);
      return this.start(undefined, 0);
    }
    const queue = this.pickQueue(flow);
    // A free seat and nobody waiting anywhere: no need to queue.
    if (this.waitingTotal === 0 && this.executing < this.config.concurrencyLimit) {
      if (queue.executing === 0) queue.nextDispatchR = Math.max(queue.nextDispatchR, this.virtualTime);
      queue.nextDispatchR += this.estimatedServiceMs;
      return this.start(queue, 0);
    }
    if (queue.waiting.length >= this.config.queueLengthLimit) return this.reject('queue-full', 0);
    const signal = signalOf?.();
    if (signal?.aborted) return this.reject('cancelled', 0);
    // An idle queue starts at the present: it cannot save up credit while idle.
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatchR = this.virtualTime;
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

  /** upstream's shuffle sharding: the flow's hand of queues, and the least loaded of them. */
  private pickQueue(flow: string): Queue {
    const hand = dealHand(flow, this.queues.length, this.config.handSize);
    let best: Queue | undefined;
    for (const index of hand) {
      const q = this.queues[index] as Queue;
      if (!best || q.waiting.length + q.executing < best.waiting.length + best.executing) best = q;
    }
    return best as Queue;
  }

  /**
   * Advances virtual time by the real time passed, times the seats each active
   * queue gets (the limit shared among queues with requests waiting or executing).
   */
  private syncTime(): void {
    const now = this.clock.now();
    const elapsed = now - this.lastRealTime;
    this.lastRealTime = now;
    if (elapsed <= 0) return;
    let active = 0;
    for (const q of this.queues) if (q.waiting.length > 0 || q.executing > 0) active++;
    if (active === 0) return;
    const demand = Math.min(this.executing + this.waitingTotal, this.config.concurrencyLimit);
    this.virtualTime += (elapsed * demand) / active;
  }

  /** Hands free seats to waiting requests, each to the queue furthest behind in virtual time. */
  private dispatch(): void {
    const n = this.queues.length;
    while (this.executing < this.config.concurrencyLimit && this.waitingTotal > 0) {
      let best: Queue | undefined;
      for (let i = 0; i < n; i++) {
        const q = this.queues[(this.robin + i) % n] as Queue;
        if (q.waiting.length > 0 && (!best || q.nextDispatchR < best.nextDispatchR)) best = q;
      }
      if (!best) return;
      this.robin = (best.index + 1) % n;
      const waiter = best.waiting.shift() as Waiter;
      this.waitingTotal--;
      this.observer.waiting?.(this.waitingTotal);
      waiter.done = true;
      waiter.cancelTimer();
      waiter.unlisten();
      best.nextDispatchR += this.estimatedServiceMs;
      const waited = this.clock.now() - waiter.enqueuedAt;
      waiter.resolve(this.start(best, waited));
    }
  }

  private start(queue: Queue | undefined, waitedMs: number): Decision {
    this.executing++;
    if (queue) queue.executing++;
    this.observer.executing?.(this.executing);
    this.observer.dispatched?.(waitedMs);
    const startedAt = this.clock.now();
    let released = false;
    const seat: Seat = {
      release: () => {
        if (released) return;
        released = true;
        this.syncTime();
        this.executing--;
        if (queue) {
          queue.executing--;
          // The work was assumed; now it is known (upstream corrects the same way).
          const actual = this.clock.now() - startedAt;
          queue.nextDispatchR -= this.estimatedServiceMs - actual;
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
    this.waitingTotal--;
    this.observer.waiting?.(this.waitingTotal);
    waiter.resolve(this.reject(reason, this.clock.now() - waiter.enqueuedAt));
  }

  private reject(reason: RejectReason, waitedMs: number): Decision {
    this.observer.rejected?.(reason, waitedMs);
    return { admitted: false, reason };
  }
}

/**
 * The flow's hand: `handSize` distinct queue indices out of `deckSize`, the same for
 * the same flow (upstream's shufflesharding.Dealer: the hash read as a number in a
 * mixed radix, one digit per card dealt, each card picked among those left).
 */
export function dealHand(flow: string, deckSize: number, handSize: number): number[] {
  // Two 32-bit FNV-1a hashes make a 53-bit value: enough for 6 of 64 (64*63*...*59 < 2^53).
  let value = fnv1a(flow, 0x811c9dc5) * 2 ** 21 + (fnv1a(flow, 0x050c5d1f) >>> 11);
  const left = Array.from({ length: deckSize }, (_, i) => i);
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    const radix = deckSize - i;
    const digit = value % radix;
    value = Math.floor(value / radix);
    hand.push(left.splice(digit, 1)[0] as number);
  }
  return hand;
}

function fnv1a(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
