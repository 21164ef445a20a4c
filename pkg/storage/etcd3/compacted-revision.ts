// Learning etcd's compacted revision. etcd does not report it on reads (its
// compaction error carries no number), only on watches that start too early, so
// it is worked out from what a read can do: reads at revisions below the compacted
// revision fail, reads at or above it succeed. The tracker keeps the highest value
// it has proven (our own compactions, watch cancellations, earlier searches), checks
// that one still reads (one cheap request, normally the whole cost), and only when
// someone else compacted further does it binary search between that and the
// current revision. That stays right across restarts and with other replicas or
// operators compacting the same etcd, which remembering our own compactions would not.

/** Reads something at `revision`: true when it could, false when compacted. */
export type ReadableAt = (revision: number) => Promise<boolean>;

export class CompactedRevisionTracker {
  /** A proven lower bound of the compacted revision (0 = none seen). */
  private known = 0;
  private inFlight: Promise<number> | undefined;

  constructor(
    private readonly readableAt: ReadableAt,
    private readonly currentRevision: () => Promise<number>,
  ) {}

  /** Records a compacted revision learnt elsewhere (a compaction we ran, a watch cancellation). */
  observe(revision: number): void {
    if (revision > this.known) this.known = revision;
  }

  /** The last value proven, without asking etcd. */
  get lastKnown(): number {
    return this.known;
  }

  /**
   * The compacted revision: the oldest revision etcd can still read (0 when
   * nothing was compacted). `above` is a revision a read just failed at, so the
   * answer is known to exceed it.
   */
  async current(above = 0): Promise<number> {
    if (above > 0) this.observe(above + 1);
    // Concurrent callers share one search; a caller with a newer lower bound
    // searches again after it, which keeps the lower bound proven.
    const previous = this.inFlight;
    if (previous !== undefined && above === 0) return previous;
    const search = (async () => {
      if (previous !== undefined) await previous.catch(() => undefined);
      return this.search();
    })();
    this.inFlight = search;
    try {
      return await search;
    } finally {
      if (this.inFlight === search) this.inFlight = undefined;
    }
  }

  private async search(): Promise<number> {
    let lo = Math.max(this.known, 1);
    if (await this.readableAt(lo)) return this.known;
    // Invariant: lo is not readable, hi is (the current revision always reads).
    let hi = await this.currentRevision();
    if (hi <= lo) return this.known;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (await this.readableAt(mid)) hi = mid;
      else lo = mid;
    }
    this.observe(hi);
    return this.known;
  }
}
