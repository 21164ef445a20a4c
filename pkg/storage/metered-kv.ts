// A KV that records every call in etcd_request_duration_seconds, etcd_requests_total
// and etcd_request_errors_total (k8s.io/apiserver storage/etcd3 RecordEtcdRequest),
// whatever the backend: etcd3 and SQLite report alike. Keys are
// `<prefix>/<group>/<resource>/...` (see registry/generic), so the group and
// resource labels come from the key; a key outside that layout is labelled ''.

import type { StorageDeadline } from './deadline.js';
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

interface Labels {
  readonly operation: string;
  readonly group: string;
  readonly resource: string;
}

export class MeteredKV implements KV {
  private readonly prefix: string;

  constructor(
    private readonly inner: KV,
    /** The storage prefix every key starts with (`--etcd-prefix`, e.g. `/registry`). */
    keyPrefix: string,
  ) {
    this.prefix = keyPrefix.endsWith('/') ? keyPrefix : `${keyPrefix}/`;
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

  /** `<prefix>/<group>/<resource>/...` -> group and resource. */
  private labels(operation: string, key: string): Labels {
    if (!key.startsWith(this.prefix)) return { operation, group: '', resource: '' };
    const groupEnd = key.indexOf('/', this.prefix.length);
    if (groupEnd < 0) return { operation, group: '', resource: '' };
    const resourceEnd = key.indexOf('/', groupEnd + 1);
    return {
      operation,
      group: key.slice(this.prefix.length, groupEnd),
      resource: key.slice(groupEnd + 1, resourceEnd < 0 ? key.length : resourceEnd),
    };
  }

  private async record<T>(operation: string, key: string, call: () => Promise<T>): Promise<T> {
    const labels = this.labels(operation, key);
    const started = performance.now();
    try {
      return await call();
    } catch (err) {
      etcdRequestErrorsTotal.inc(labels);
      throw err;
    } finally {
      etcdRequestDuration.observe(labels, (performance.now() - started) / 1000);
      etcdRequestsTotal.inc(labels);
    }
  }
}
