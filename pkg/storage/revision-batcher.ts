// Storage's current revision for consistent reads, one storage round trip per batch
// of readers, batched the way etcd batches ReadIndex (etcd server/etcdserver
// v3_server.go: linearizableReadLoop swaps readNotifier before it asks raft for the
// read index, so a reader that arrives while a read index is out waits for the next).
//
// Why a reader may not share the read in flight: that read may have been answered by
// storage before a write the reader saw acknowledged, and handing it that answer
// would let the reader miss the write (not linearizable). So a reader joins the next
// round, which starts as soon as the one in flight settles; every reader of a round
// arrived before the round's read began. Storage therefore sees at most one revision
// read at a time from this batcher, and a reader waits at most two round trips.
//
// kube-apiserver itself sends one GetCurrentResourceVersionFromStorage per consistent
// read from cache (storage/cacher, ConsistentListFromCache) and leaves the batching to
// etcd's ReadIndex loop; doing it here also saves the gRPC call and its CPU per read.

import { withoutStorageDeadline } from './deadline.js';

/** A reader waiting for a round. Settled once, by the round or by its signal. */
interface Waiter {
  readonly resolve: (revision: number) => void;
  readonly reject: (err: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  settled: boolean;
}

export interface RevisionBatcherStats {
  /** Revision reads sent to storage so far. */
  readonly rounds: number;
  /** Readers answered (or failed) by those rounds. */
  readonly served: number;
}

/** Where consistent reads get storage's current revision from. */
export interface RevisionReader {
  current(signal?: AbortSignal): Promise<number>;
}

export class RevisionBatcher implements RevisionReader {
  /** Readers that arrived since the round in flight began (or while idle). */
  private next: Waiter[] = [];
  private inFlight = false;
  private rounds = 0;
  private served = 0;

  /** `read` asks storage for its current revision (a linearizable read). */
  constructor(private readonly read: () => Promise<number>) {}

  /**
   * A revision at least as new as every write acknowledged before this call.
   * An aborted `signal` stops this caller's wait (with the signal's reason); the
   * round it was waiting for still answers the others.
   */
  current(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<number>((resolve, reject) => {
      // Called only after `waiter` below exists.
      const onAbort =
        signal === undefined
          ? undefined
          : (): void => {
              if (waiter.settled) return;
              waiter.settled = true;
              // A round not yet started forgets it, so an abandoned round is never sent.
              this.next = this.next.filter((w) => w !== waiter);
              reject(abortReason(signal));
            };
      const waiter: Waiter = { resolve, reject, signal, onAbort, settled: false };
      if (onAbort) signal?.addEventListener('abort', onAbort, { once: true });
      this.next.push(waiter);
      if (!this.inFlight) this.startRound();
    });
  }

  /** How many revision reads storage has served, and for how many readers (metrics, benchmarks). */
  get stats(): RevisionBatcherStats {
    return { rounds: this.rounds, served: this.served };
  }

  /** Sends one revision read for every reader waiting now; later arrivals wait for the next. */
  private startRound(): void {
    const waiters = this.next;
    this.next = [];
    if (waiters.length === 0) return;
    this.inFlight = true;
    this.rounds++;
    let answer: Promise<number>;
    try {
      // Shared by every reader of the round: no one request's deadline applies to it.
      answer = withoutStorageDeadline(() => this.read());
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer.then(
      (revision) => this.finishRound(waiters, (w) => w.resolve(revision)),
      (err: unknown) => this.finishRound(waiters, (w) => w.reject(err)),
    );
  }

  private finishRound(waiters: readonly Waiter[], settle: (waiter: Waiter) => void): void {
    this.inFlight = false;
    for (const waiter of waiters) {
      if (waiter.settled) continue;
      waiter.settled = true;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.served++;
      settle(waiter);
    }
    // Everyone in `next` arrived while that round was out: their round starts now.
    this.startRound();
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
