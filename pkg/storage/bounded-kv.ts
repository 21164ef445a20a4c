// A KV whose calls cannot hang: each call has a bounded time (a frozen or
// partitioned etcd answers nothing, and the etcd client would wait on its own
// deadline of a minute), and a backend failure becomes a StorageError the registry
// turns into 503 ServiceUnavailable or 504 Timeout with Retry-After, never a 500.
// The KV contract's own errors (CompactedError, FutureRevisionError) pass through;
// anything else a backend throws is a failure to reach or use storage.
//
// A call's time is the per-call bound or what is left of its request's deadline
// (storage/deadline.ts, the call's last argument), whichever ends first; the backend
// is handed that narrowed deadline.
// A request already answered without its work (timed out, client gone) starts no
// further call: a write abandoned before its transaction never sends it. A call
// that times out is not cancelled underneath (the etcd3 client treats a gRPC
// DEADLINE_EXCEEDED as a failed host: it resets the connection, watches included,
// and opens its circuit for 5 s, which delayed recovery from a frozen etcd from
// 0.1 s to 4.5 s when tried), so a write sent before the deadline may still be
// applied, which is why its timeout says so.

import { StorageDeadline } from './deadline.js';
import { StorageError, storageTimeout, storageUnavailable } from './errors.js';
import {
  committedRevisionOf,
  CompactedError,
  FutureRevisionError,
  type DeleteResult,
  type KV,
  type KVWatch,
  type KVWatchHandlers,
  type RangeOptions,
  type RangeResult,
  type TxnResult,
} from './kv.js';

/** Per call: two calls of a write (read, then transaction) stay under the 10 s a request may wait on storage. */
export const DEFAULT_CALL_TIMEOUT_MS = 4000;

export class BoundedKV implements KV {
  constructor(
    private readonly inner: KV,
    private readonly callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS,
  ) {
    this.committedRevision = committedRevisionOf(inner);
  }

  get(key: string, revision?: number, deadline?: StorageDeadline): ReturnType<KV['get']> {
    return this.bounded(key, false, deadline, (bound) => this.inner.get(key, revision, bound));
  }

  range(
    start: string,
    end: string,
    options?: RangeOptions,
    deadline?: StorageDeadline,
  ): Promise<RangeResult> {
    return this.bounded(start, false, deadline, (bound) => this.inner.range(start, end, options, bound));
  }

  create(key: string, value: Buffer, deadline?: StorageDeadline): Promise<TxnResult> {
    return this.bounded(key, true, deadline, (bound) => this.inner.create(key, value, bound));
  }

  update(
    key: string,
    value: Buffer,
    expectedModRevision: number,
    deadline?: StorageDeadline,
  ): Promise<TxnResult> {
    return this.bounded(key, true, deadline, (bound) =>
      this.inner.update(key, value, expectedModRevision, bound),
    );
  }

  delete(key: string, expectedModRevision: number, deadline?: StorageDeadline): Promise<DeleteResult> {
    return this.bounded(key, true, deadline, (bound) => this.inner.delete(key, expectedModRevision, bound));
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    return this.inner.watch(prefix, fromRevision, handlers);
  }

  currentRevision(deadline?: StorageDeadline): Promise<number> {
    return this.bounded('', false, deadline, (bound) => this.inner.currentRevision(bound));
  }

  /** Answered in process, synchronously: it cannot hang, so there is nothing to bound. */
  readonly committedRevision: (() => number | undefined) | undefined;

  compactedRevision(): Promise<number> {
    return this.bounded('', false, undefined, () => this.inner.compactedRevision());
  }

  compact(revision: number): Promise<void> {
    return this.bounded('', true, undefined, () => this.inner.compact(revision));
  }

  sizeBytes(): Promise<number | undefined> {
    return this.inner.sizeBytes ? this.inner.sizeBytes() : Promise.resolve(undefined);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** `request` is the deadline of the request the call is made for, if any; `call` gets the call's own. */
  private bounded<T>(
    key: string,
    write: boolean,
    request: StorageDeadline | undefined,
    call: (deadline: StorageDeadline) => Promise<T>,
  ): Promise<T> {
    // Nothing was sent: the outcome is known, so no "may have succeeded".
    if (request?.abandoned) return Promise.reject(storageTimeout(key, false));
    const callDeadlineAt = Date.now() + this.callTimeoutMs;
    const deadline = request ? request.narrowed(callDeadlineAt) : new StorageDeadline(callDeadlineAt);
    // The request's timeout tells a client its write may have landed only while one is out.
    if (write && request) request.writesInFlight++;
    const settled = (): void => {
      if (write && request) request.writesInFlight--;
    };
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(storageTimeout(key, write)), deadline.remainingMs());
      call(deadline).then(
        (value) => {
          clearTimeout(timer);
          settled();
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          settled();
          if (isContractError(err)) reject(err);
          // The backend gave up at the deadline it was handed (gRPC's DEADLINE_EXCEEDED):
          // a timeout like ours, a write's outcome unknown, not storage refusing.
          else if (deadline.remainingMs() === 0) reject(storageTimeout(key, write));
          else reject(storageUnavailable(key, err));
        },
      );
    });
  }
}

function isContractError(err: unknown): boolean {
  return err instanceof StorageError || err instanceof CompactedError || err instanceof FutureRevisionError;
}
