// The deadline a storage call works under, carried from the request down to the
// KV as Go's context.Context carries it through kube-apiserver: the HTTP layer sets
// the request's deadline and BoundedKV bounds each call by it (never past the
// per-call bound), under which the backend call runs. It travels in an
// AsyncLocalStorage, so the registry and KVStorage between the two need not pass
// it along by hand.

import { AsyncLocalStorage } from 'node:async_hooks';

export class StorageDeadline {
  /** Writes sent to storage whose outcome is not known yet (see BoundedKV). */
  writesInFlight = 0;

  constructor(
    /** Wall-clock ms (Date.now()) by which the work must be over. */
    readonly deadlineAt: number,
    private readonly isAbandoned: () => boolean = () => false,
  ) {}

  /** True once the request was answered without this work (timed out, or its client left). */
  get abandoned(): boolean {
    return this.isAbandoned();
  }

  /** Ms left, never negative. */
  remainingMs(): number {
    return Math.max(0, this.deadlineAt - Date.now());
  }

  /** The same request, narrowed to an earlier deadline (one storage call). */
  narrowed(deadlineAt: number): StorageDeadline {
    return new StorageDeadline(Math.min(deadlineAt, this.deadlineAt), this.isAbandoned);
  }
}

const current = new AsyncLocalStorage<StorageDeadline>();

/** Runs `fn` (and everything it starts) under `deadline`. */
export function withStorageDeadline<T>(deadline: StorageDeadline, fn: () => T): T {
  return current.run(deadline, fn);
}

/**
 * Runs `fn` free of any request's deadline: for work a request may start but that
 * outlives it or serves others too (a watch cache's list-and-watch loop, a revision
 * read shared by concurrent requests), which would otherwise inherit the deadline
 * of whichever request happened to start it.
 */
export function withoutStorageDeadline<T>(fn: () => T): T {
  return current.exit(fn);
}

/** The deadline of the work under way, if a request or a storage call set one. */
export function storageDeadline(): StorageDeadline | undefined {
  return current.getStore();
}
