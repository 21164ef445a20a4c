// A KV that records every call in etcd_request_duration_seconds, etcd_requests_total
// and etcd_request_errors_total (k8s.io/apiserver storage/etcd3 RecordEtcdRequest),
// whatever the backend: etcd3 and SQLite report alike. Keys are
// `<prefix>/<group>/<resource>/...` (see registry/generic), so the group and
// resource labels come from the key; a key outside that layout is labelled ''.

import type { StorageDeadline } from './deadline.js';
import type { CounterSeries, HistogramSeries } from '../metrics/families.js';
import { etcdRequestDuration, etcdRequestErrorsTotal, etcdRequestsTotal } from '../metrics/storage.js';
import type {
  DeleteResult,
  KV,
  KVWatch,
  KVWatchHandlers,
  RangeOptions,
  RangeResult,
  TxnResult,
} from './kv.js';
import { committedRevisionOf } from './kv.js';

/**
 * The series of one (operation, group, resource): resolved on the tuple's first
 * call and kept, so recording a call is two additions and a bucket search rather
 * than prom-client's label hashing per metric. The tuples form a closed set: the
 * operations are this class's, and group and resource come from the storage key's
 * layout, which the registry builds from the resources it serves (an object's
 * name, the only part a client picks, is after them and never read).
 */
class CallSeries {
  readonly duration: HistogramSeries;
  readonly total: CounterSeries;
  private failed: CounterSeries | undefined;

  constructor(private readonly labels: Readonly<Record<string, string>>) {
    this.duration = etcdRequestDuration.series(labels);
    this.total = etcdRequestsTotal.series(labels);
  }

  /** Created on the first failure, as prom-client shows a series only once counted. */
  get errors(): CounterSeries {
    return (this.failed ??= etcdRequestErrorsTotal.series(this.labels));
  }
}

export class MeteredKV implements KV {
  private readonly prefix: string;
  private readonly calls = new Map<string, CallSeries>();

  constructor(
    private readonly inner: KV,
    /** The storage prefix every key starts with (`--etcd-prefix`, e.g. `/registry`). */
    keyPrefix: string,
  ) {
    this.prefix = keyPrefix.endsWith('/') ? keyPrefix : `${keyPrefix}/`;
    this.committedRevision = committedRevisionOf(inner);
  }

  /** The backend underneath, for what it offers beyond KV. */
  get backend(): KV {
    return this.inner;
  }

  get(key: string, revision?: number, deadline?: StorageDeadline): ReturnType<KV['get']> {
    return this.record('get', key, () => this.inner.get(key, revision, deadline));
  }

  range(
    start: string,
    end: string,
    options?: RangeOptions,
    deadline?: StorageDeadline,
  ): Promise<RangeResult> {
    return this.record(options?.count ? 'listWithCount' : 'list', start, () =>
      this.inner.range(start, end, options, deadline),
    );
  }

  create(key: string, value: Buffer, deadline?: StorageDeadline): Promise<TxnResult> {
    return this.record('create', key, () => this.inner.create(key, value, deadline));
  }

  update(
    key: string,
    value: Buffer,
    expectedModRevision: number,
    deadline?: StorageDeadline,
  ): Promise<TxnResult> {
    return this.record('update', key, () => this.inner.update(key, value, expectedModRevision, deadline));
  }

  delete(key: string, expectedModRevision: number, deadline?: StorageDeadline): Promise<DeleteResult> {
    return this.record('delete', key, () => this.inner.delete(key, expectedModRevision, deadline));
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    return this.inner.watch(prefix, fromRevision, handlers);
  }

  currentRevision(deadline?: StorageDeadline): Promise<number> {
    return this.record('getCurrentResourceVersion', '', () => this.inner.currentRevision(deadline));
  }

  /** Not a storage call (the backend knows it in process): nothing to time or count. */
  readonly committedRevision: (() => number | undefined) | undefined;

  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }

  compact(revision: number): Promise<void> {
    return this.record('compact', '', () => this.inner.compact(revision));
  }

  sizeBytes(): Promise<number | undefined> {
    return this.inner.sizeBytes ? this.inner.sizeBytes() : Promise.resolve(undefined);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The series of `operation` on `key`: `<prefix>/<group>/<resource>/...` gives group and resource. */
  private seriesFor(operation: string, key: string): CallSeries {
    let group = '';
    let resource = '';
    if (key.startsWith(this.prefix)) {
      const groupEnd = key.indexOf('/', this.prefix.length);
      if (groupEnd >= 0) {
        const resourceEnd = key.indexOf('/', groupEnd + 1);
        group = key.slice(this.prefix.length, groupEnd);
        resource = key.slice(groupEnd + 1, resourceEnd < 0 ? key.length : resourceEnd);
      }
    }
    const id = `${operation}\u0000${group}\u0000${resource}`;
    let series = this.calls.get(id);
    if (!series) this.calls.set(id, (series = new CallSeries({ operation, group, resource })));
    return series;
  }

  private async record<T>(operation: string, key: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await call();
    } catch (err) {
      this.seriesFor(operation, key).errors.inc();
      throw err;
    } finally {
      const series = this.seriesFor(operation, key);
      series.duration.observe((performance.now() - started) / 1000);
      series.total.inc();
    }
  }
}
