// The deadline a storage call works under, carried from the request down to the
// KV by hand, as Go's context.Context is passed through kube-apiserver (k8s.io/apiserver
// storage.Interface and registry.Store take `ctx` first): the HTTP layer makes the
// request's deadline (filters/timeout.ts), the registry hands it to every storage call
// it makes for the request (RequestContext.deadline), and each storage and KV call
// takes it as its last, optional argument down to BoundedKV, which bounds the call by
// it (never past the per-call bound) and hands the narrowed deadline to the backend.
//
// Last rather than first (Go's place) so that work outside any request (the watch
// cache's list-and-watch loop, a revision read shared by concurrent requests, the
// server's own controllers) simply passes none. It is not carried implicitly in an
// AsyncLocalStorage: on Node 20 that turns on promise hooks for every promise in the
// process (docs/performance/storage-deadline-without-asynclocalstorage.md).

/**
 * Says whether the request was answered without its work: the request itself (its
 * scope answers, so no closure is made per request), or a function (tests).
 */
export type Abandonment = { readonly abandoned: boolean } | (() => boolean);

export class StorageDeadline {
  /** Writes sent to storage whose outcome is not known yet (see BoundedKV). */
  writesInFlight = 0;

  constructor(
    /** Wall-clock ms (Date.now()) by which the work must be over. */
    readonly deadlineAt: number,
    private readonly abandonment?: Abandonment,
  ) {}

  /** True once the request was answered without this work (timed out, or its client left). */
  get abandoned(): boolean {
    const source = this.abandonment;
    if (source === undefined) return false;
    return typeof source === 'function' ? source() : source.abandoned;
  }

  /** Ms left, never negative. */
  remainingMs(): number {
    return Math.max(0, this.deadlineAt - Date.now());
  }

  /** The same request, narrowed to an earlier deadline (one storage call). */
  narrowed(deadlineAt: number): StorageDeadline {
    return new StorageDeadline(Math.min(deadlineAt, this.deadlineAt), this.abandonment);
  }
}
