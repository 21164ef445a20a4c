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
//
// A reader may stop waiting at its request's deadline. Given as a time (deadlineAt),
// that costs one timer per batcher, armed for the earliest deadline waiting, not an
// AbortSignal.timeout per read: on a get served from the watch cache, a timer, a weak
// reference and an abort listener per request were a tenth of the server's CPU over
// etcd (docs/performance/get-on-etcd3.md). The read itself is made with no
// request's deadline: it serves every reader of its round.

/** A reader waiting for a round. Settled once: by the round or by its deadline. */
interface Waiter {
  readonly resolve: (revision: number) => void;
  readonly reject: (err: unknown) => void;
  /** Wall-clock ms (Date.now()) at which this reader stops waiting; Infinity: never. */
  readonly deadlineAt: number;
  settled: boolean;
}

/** A reader's deadline passed before its round answered (the caller's storage timeout). */
export class RevisionWaitExpired extends Error {
  constructor() {
    super('the wait for the current revision passed its deadline');
    this.name = 'RevisionWaitExpired';
  }
}

export interface RevisionBatcherStats {
  /** Revision reads sent to storage so far. */
  readonly rounds: number;
  /** Readers answered (or failed) by those rounds. */
  readonly served: number;
}

/** Where consistent reads get storage's current revision from. */
export interface RevisionReader {
  /** Reaching `deadlineAt` (wall-clock ms) ends the wait with RevisionWaitExpired. */
  current(deadlineAt?: number): Promise<number>;
}

export class RevisionBatcher implements RevisionReader {
  /** Readers that arrived since the round in flight began (or while idle). */
  private next: Waiter[] = [];
  /** Readers of the round in flight. */
  private round: readonly Waiter[] = [];
  private inFlight = false;
  /** The one deadline timer, and when it fires (Infinity: not armed). */
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private rounds = 0;
  private served = 0;

  /** `read` asks storage for its current revision (a linearizable read). */
  constructor(private readonly read: () => Promise<number>) {}

  /**
   * A revision at least as new as every write acknowledged before this call.
   * Reaching `deadlineAt` stops this caller's wait (with RevisionWaitExpired); the
   * round it was waiting for still answers the others.
   */
  current(deadlineAt = Infinity): Promise<number> {
    if (deadlineAt <= Date.now()) return Promise.reject(new RevisionWaitExpired());
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, deadlineAt, settled: false };
      if (deadlineAt < this.timerAt) this.armTimer(deadlineAt);
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
    this.round = waiters;
    if (waiters.length === 0) return;
    this.inFlight = true;
    this.rounds++;
    let answer: Promise<number>;
    try {
      // Shared by every reader of the round: no one request's deadline applies to it.
      answer = this.read();
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
    this.round = [];
    for (const waiter of waiters) {
      if (waiter.settled) continue;
      waiter.settled = true;
      this.served++;
      settle(waiter);
    }
    // Everyone in `next` arrived while that round was out: their round starts now.
    this.startRound();
    if (!this.inFlight) this.disarmTimer();
  }

  /**
   * One timer for every reader's deadline, armed for the earliest. It stays armed
   * while rounds follow one another (readers served by a round do not re-arm it), so
   * under load it is set about once per deadline, not per read; when it fires it fails
   * whoever is past their deadline and re-arms for the earliest deadline still
   * waiting. It is cleared once nobody waits, so it never holds the process open.
   */
  private armTimer(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // At most Node's longest timer; an earlier firing just re-arms.
    this.timer = setTimeout(this.onTimer, Math.min(Math.max(0, at - Date.now()), 0x7fffffff));
  }

  private disarmTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private readonly onTimer = (): void => {
    this.disarmTimer();
    const now = Date.now();
    let earliest = Infinity;
    for (const waiter of [...this.round, ...this.next]) {
      if (waiter.settled) continue;
      if (waiter.deadlineAt > now) {
        earliest = Math.min(earliest, waiter.deadlineAt);
        continue;
      }
      waiter.settled = true;
      waiter.reject(new RevisionWaitExpired());
    }
    // A round not yet started forgets its expired readers, so an abandoned round is never sent.
    this.next = this.next.filter((w) => !w.settled);
    if (earliest !== Infinity) this.armTimer(earliest);
  };
}
