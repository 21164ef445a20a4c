// The backend contract: a revisioned key-value log, the part of etcd's model that
// Kubernetes storage semantics need. A backend implements only this; the one Store
// in ./store.ts turns it into the storage.Interface semantics (predicates, paging,
// preconditions, retries, watch event shaping), so every backend behaves alike by
// construction and the conformance suite checks the primitives underneath.
//
// Revisions are one global, strictly increasing counter per backend (etcd's
// revision, the log row id in SQLite). A key's modRevision is the revision of the
// write that produced its current value.

import type { StorageDeadline } from './deadline.js';

export interface KeyValue {
  readonly key: string;
  readonly value: Buffer;
  readonly createRevision: number;
  readonly modRevision: number;
  /**
   * Set by a value transformer (./transformed-kv.ts): the value was read with a
   * provider other than the one that writes now, so an update must write it even
   * when the object is unchanged.
   */
  readonly stale?: boolean;
  /**
   * Set by a value transformer: no configured provider could read the stored bytes
   * (`value` is then empty). Says why, never with key material or data.
   */
  readonly unreadable?: string;
}

export interface RangeOptions {
  /** Read at this revision (0 = current). Throws CompactedError when compacted. */
  readonly revision?: number;
  /** At most this many keys (0 = no limit). */
  readonly limit?: number;
  /** Also return how many keys the whole range holds at that revision. */
  readonly count?: boolean;
}

export interface RangeResult {
  readonly kvs: KeyValue[];
  /** The revision the read was served at (the store's current revision when 0 was asked). */
  readonly revision: number;
  /** More keys exist in the range after the last one returned. */
  readonly more: boolean;
  /** Keys in the whole range, when asked for. */
  readonly count?: number;
}

/** Outcome of a conditional write: `ok` false means the condition failed. */
export interface TxnResult {
  readonly ok: boolean;
  /** Revision of the write when ok; the store's current revision otherwise. */
  readonly revision: number;
  /** The key's value as it stands when the condition failed (absent if no key). */
  readonly current?: KeyValue;
}

export interface DeleteResult extends TxnResult {
  /** The value removed, when ok. */
  readonly deleted?: KeyValue;
}

export interface KVEvent {
  readonly type: 'put' | 'delete';
  /** For put: the new value; for delete: key with empty value and modRevision = the delete's revision. */
  readonly kv: KeyValue;
  /** The value before this event (always present for delete, and for put on an existing key). */
  readonly prevKv?: KeyValue;
}

export interface KVWatchHandlers {
  /** Events in revision order; one call may carry several events of one revision. */
  onEvents(events: readonly KVEvent[]): void;
  /** The watch ended with an error (CompactedError when the start revision is gone). No more calls follow. */
  onError(err: Error): void;
  /** Optional progress notifications: every event up to `revision` has been delivered. */
  onProgress?(revision: number): void;
  /**
   * The consumer reads only keys and revisions (optional, additive): a backend may
   * then leave prevKv out, which saves etcd a read per event.
   */
  readonly withoutPrevious?: boolean;
}

export interface KVWatch {
  cancel(): void;
  /**
   * Asks for an onProgress call as soon as every event up to the backend's current
   * revision has been delivered (etcd's RequestProgress). A watch cache uses it to
   * prove it is as fresh as storage when the latest writes were elsewhere. Optional:
   * without it a cache cannot tell, and reads storage instead.
   */
  requestProgress?(): void;
}

/**
 * A call made for a request takes the request's deadline as its last argument
 * (./deadline.ts, as Go passes ctx): BoundedKV bounds the call by it and hands the
 * backend the narrowed one. Work outside any request passes none.
 */
export interface KV {
  /** Reads one key at `revision` (0 = current). */
  get(
    key: string,
    revision?: number,
    deadline?: StorageDeadline,
  ): Promise<{ kv: KeyValue | undefined; revision: number }>;
  /** Keys in [start, end) in byte order. */
  range(start: string, end: string, options?: RangeOptions, deadline?: StorageDeadline): Promise<RangeResult>;
  /** Writes only if the key does not exist. */
  create(key: string, value: Buffer, deadline?: StorageDeadline): Promise<TxnResult>;
  /** Writes only if the key's modRevision equals `expectedModRevision`. */
  update(
    key: string,
    value: Buffer,
    expectedModRevision: number,
    deadline?: StorageDeadline,
  ): Promise<TxnResult>;
  /** Deletes only if the key's modRevision equals `expectedModRevision` (0 = unconditionally, if it exists). */
  delete(key: string, expectedModRevision: number, deadline?: StorageDeadline): Promise<DeleteResult>;
  /** Delivers every change under `prefix` with revision >= `fromRevision`, then live changes. */
  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch;
  /** The latest revision. */
  currentRevision(deadline?: StorageDeadline): Promise<number>;
  /**
   * The latest committed revision, known in this process without a storage call, or
   * undefined when the backend cannot say now (closed). Only a backend that is the
   * sole writer of its data and commits in this process has it (SQLite: an exclusive
   * file lock, synchronous transactions); etcd has other writers, so it has none and
   * its readers ask storage. The value is what currentRevision() would answer if
   * called at the same moment. Wrappers pass it on unchanged (committedRevisionOf).
   */
  readonly committedRevision?: () => number | undefined;
  /** The oldest revision still readable (history before it is compacted). */
  compactedRevision(): Promise<number>;
  /** Drops history before `revision`. */
  compact(revision: number): Promise<void>;
  /** Bytes the database takes on disk, for apiserver_storage_size_bytes (optional). */
  sizeBytes?(): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * What a wrapper of `inner` offers as its committedRevision: the backend's own,
 * passed through, or nothing when the backend has none (so a reader of the wrapper
 * knows at once, without a call per read, that it must ask storage).
 */
export function committedRevisionOf(inner: KV): (() => number | undefined) | undefined {
  const committed = inner.committedRevision;
  return committed === undefined ? undefined : () => committed.call(inner);
}

/** History at the requested revision was compacted away. */
export class CompactedError extends Error {
  override readonly name = 'CompactedError';
  constructor(
    readonly requestedRevision: number,
    readonly compactedRevision: number,
  ) {
    super(`required revision ${requestedRevision} has been compacted (compacted revision ${compactedRevision})`);
  }
}

/** The requested revision is newer than anything the backend has. */
export class FutureRevisionError extends Error {
  override readonly name = 'FutureRevisionError';
  constructor(
    readonly requestedRevision: number,
    readonly currentRevision: number,
  ) {
    super(`required revision ${requestedRevision} is a future revision (current ${currentRevision})`);
  }
}

/**
 * The smallest key greater than every key with this prefix. Keys are ASCII paths
 * (names are DNS labels and subdomains), so incrementing the last character matches
 * etcd's byte-wise prefix end.
 */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
