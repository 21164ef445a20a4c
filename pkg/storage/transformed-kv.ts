// The value transformer at the storage boundary: a KV that encrypts what is
// written and decrypts what is read, wrapped around the backend's KV. KVStorage,
// its watches and the watch cache all read through it, so every one of them sees
// objects, and the backends (SQLite's log, etcd and their compaction) only ever hold
// what the transformer wrote. The storage key is the authenticated data, so a value
// moved under another key does not decrypt (aesgcm, kms).
//
// A value that no provider can read is not an exception here: it comes back marked
// `unreadable` (with an empty value), so that a read of that key fails naming it
// while a list can still say which objects are unreadable (see codec.decodeKeyValue).

import type {
  DeleteResult,
  KeyValue,
  KV,
  KVEvent,
  KVWatch,
  KVWatchHandlers,
  RangeOptions,
  RangeResult,
  TxnResult,
} from './kv.js';
import { committedRevisionOf, prefixEnd } from './kv.js';
import type { StorageDeadline } from './deadline.js';
import { StorageError } from './errors.js';
import type { Transformer } from './value/transformer.js';

/** The transformer for a key (identity for keys outside any configured resource). */
export type TransformerForKey = (key: string) => Transformer;

export class TransformedKV implements KV {
  constructor(
    private readonly inner: KV,
    private readonly transformerFor: TransformerForKey,
    /** Called once the backend is closed (stops config reloads, closes KMS connections). */
    private readonly onClose?: () => void,
  ) {
    this.committedRevision = committedRevisionOf(inner);
  }

  /**
   * A value that cannot be encrypted (a KMS plugin that gave no data key yet, or whose
   * key expired while it was down) fails the write as upstream's store does
   * (storage.NewInternalError: a 500 that says why); nothing is written.
   */
  private async toStorage(key: string, value: Buffer): Promise<Buffer> {
    try {
      return await this.transformerFor(key).transformToStorage(value, Buffer.from(key));
    } catch (err) {
      throw new StorageError('Internal', key, err instanceof Error ? err.message : String(err), 0, { cause: err });
    }
  }

  private async fromStorage(kv: KeyValue): Promise<KeyValue> {
    try {
      const { data, stale } = await this.transformerFor(kv.key).transformFromStorage(kv.value, Buffer.from(kv.key));
      return stale ? { ...kv, value: data, stale } : { ...kv, value: data };
    } catch (err) {
      return { ...kv, value: Buffer.alloc(0), unreadable: err instanceof Error ? err.message : String(err) };
    }
  }

  private async optional(kv: KeyValue | undefined): Promise<KeyValue | undefined> {
    return kv === undefined ? undefined : this.fromStorage(kv);
  }

  private async txn<T extends TxnResult>(result: T): Promise<T> {
    if (result.current === undefined) return result;
    return { ...result, current: await this.fromStorage(result.current) };
  }

  async get(
    key: string,
    revision?: number,
    deadline?: StorageDeadline,
  ): Promise<{ kv: KeyValue | undefined; revision: number }> {
    const read = await this.inner.get(key, revision, deadline);
    return { kv: await this.optional(read.kv), revision: read.revision };
  }

  async range(
    start: string,
    end: string,
    options?: RangeOptions,
    deadline?: StorageDeadline,
  ): Promise<RangeResult> {
    const page = await this.inner.range(start, end, options, deadline);
    return { ...page, kvs: await Promise.all(page.kvs.map((kv) => this.fromStorage(kv))) };
  }

  async create(key: string, value: Buffer, deadline?: StorageDeadline): Promise<TxnResult> {
    return this.txn(await this.inner.create(key, await this.toStorage(key, value), deadline));
  }

  async update(
    key: string,
    value: Buffer,
    expectedModRevision: number,
    deadline?: StorageDeadline,
  ): Promise<TxnResult> {
    return this.txn(
      await this.inner.update(key, await this.toStorage(key, value), expectedModRevision, deadline),
    );
  }

  async delete(key: string, expectedModRevision: number, deadline?: StorageDeadline): Promise<DeleteResult> {
    const result = await this.txn(await this.inner.delete(key, expectedModRevision, deadline));
    if (result.deleted === undefined) return result;
    return { ...result, deleted: await this.fromStorage(result.deleted) };
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    // Decryption may wait (a KMS plugin); one chain keeps events, progress and errors in order.
    let chain: Promise<void> = Promise.resolve();
    let cancelled = false;
    const later = (step: () => Promise<void> | void): void => {
      chain = chain.then(async () => {
        if (!cancelled) await step();
      });
    };
    const decrypt = async (event: KVEvent): Promise<KVEvent> => {
      const kv = event.type === 'put' ? await this.fromStorage(event.kv) : event.kv;
      const prevKv = await this.optional(event.prevKv);
      return prevKv ? { type: event.type, kv, prevKv } : { type: event.type, kv };
    };
    const inner = this.inner.watch(prefix, fromRevision, {
      ...(handlers.withoutPrevious ? { withoutPrevious: true } : {}),
      onEvents: (events) => later(async () => handlers.onEvents(await Promise.all(events.map(decrypt)))),
      onError: (err) => later(() => handlers.onError(err)),
      ...(handlers.onProgress ? { onProgress: (rev: number) => later(() => handlers.onProgress?.(rev)) } : {}),
    });
    const watch: KVWatch = {
      cancel: () => {
        cancelled = true;
        inner.cancel();
      },
    };
    if (inner.requestProgress) {
      const request = inner.requestProgress.bind(inner);
      return { ...watch, requestProgress: () => request() };
    }
    return watch;
  }

  currentRevision(deadline?: StorageDeadline): Promise<number> {
    return this.inner.currentRevision(deadline);
  }

  readonly committedRevision: (() => number | undefined) | undefined;

  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  async close(): Promise<void> {
    try {
      await this.inner.close();
    } finally {
      this.onClose?.();
    }
  }
}

/**
 * Rewrites every value under `prefix` that was read with a provider other than the
 * one that writes now (plain text under a cipher, an old key), so that it is stored
 * as the configuration says. `times` > 1 writes each such value again: a backend that
 * keeps the previous value beside the new one (SQLite's log) then holds only
 * ciphertext once history is compacted. A write that loses a race is skipped: whoever
 * won wrote with the current provider. Values no provider can read are counted, not
 * touched.
 */
export async function rewriteStaleValues(
  kv: KV,
  prefix: string,
  options: { batchSize?: number; times?: number } = {},
): Promise<{ rewritten: number; unreadable: number }> {
  const batchSize = options.batchSize ?? 500;
  const times = Math.max(1, options.times ?? 1);
  const end = prefixEnd(prefix);
  let start = prefix;
  let rewritten = 0;
  let unreadable = 0;
  while (true) {
    const page = await kv.range(start, end, { limit: batchSize });
    for (const item of page.kvs) {
      if (item.unreadable !== undefined) unreadable++;
      if (!item.stale) continue;
      let revision = item.modRevision;
      for (let i = 0; i < times; i++) {
        const result = await kv.update(item.key, item.value, revision);
        if (!result.ok) break;
        revision = result.revision;
      }
      rewritten++;
    }
    const last = page.kvs[page.kvs.length - 1];
    if (!page.more || last === undefined) return { rewritten, unreadable };
    start = `${last.key}\u0000`;
  }
}
