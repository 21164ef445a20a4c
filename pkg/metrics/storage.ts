// Storage metrics, as k8s.io/apiserver pkg/storage/etcd3/metrics/metrics.go names
// them. Both backends report under these names (the embedded SQLite backend too:
// `etcd_request_duration_seconds` then measures SQLite calls), so one dashboard
// serves either. Counts and sizes are read when scraped, each bounded so a frozen
// etcd cannot hold a scrape.

import { Gauge } from 'prom-client';

import { CounterFamily, HistogramFamily } from './families.js';
import { LATENCY_BUCKETS, registry, ScrapeRead, withinMs } from './registry.js';

const OPERATION_LABELS = ['operation', 'group', 'resource'] as const;

// Recorded on every storage call, so as resolved-series families (families.ts):
// the caller keeps each label tuple's series and recording skips prom-client's
// per-call label hashing. Exposed exactly as prom-client's Histogram and Counter.
export const etcdRequestDuration = new HistogramFamily({
  name: 'etcd_request_duration_seconds',
  help: 'Etcd request latency in seconds for each operation and object type.',
  labelNames: OPERATION_LABELS,
  buckets: LATENCY_BUCKETS,
  registry,
});

export const etcdRequestsTotal = new CounterFamily({
  name: 'etcd_requests_total',
  help: 'Etcd request counts for each operation and object type.',
  labelNames: OPERATION_LABELS,
  registry,
});

export const etcdRequestErrorsTotal = new CounterFamily({
  name: 'etcd_request_errors_total',
  help: 'Etcd failed request counts for each operation and object type.',
  labelNames: OPERATION_LABELS,
  registry,
});

/** One resource's stored object count; -1 when it could not be read (as upstream). */
export interface ObjectCount {
  readonly group: string;
  readonly resource: string;
  readonly count: number;
}

/** What the storage layer tells the scrape: object counts and the database's size. */
export interface StorageStatsSource {
  objectCounts(): Promise<readonly ObjectCount[]>;
  /** Bytes the database file takes; undefined when the backend cannot say. */
  sizeBytes(): Promise<number | undefined>;
}

/** How long a scrape waits for storage before it reports what it has (upstream's monitor uses 1 s). */
const STATS_TIMEOUT_MS = 1000;

let statsSource: StorageStatsSource | undefined;

/** Sets (or with undefined, clears) where counts and sizes come from: the server's open storage. */
export function setStorageStatsSource(source: StorageStatsSource | undefined): void {
  statsSource = source;
  lastCounts.forget();
}

/** One read serves both count gauges of a scrape. */
const lastCounts = new ScrapeRead<readonly ObjectCount[]>(STATS_TIMEOUT_MS, []);

function objectCounts(): Promise<readonly ObjectCount[]> {
  const source = statsSource;
  if (!source) return Promise.resolve([]);
  return lastCounts.get(() => source.objectCounts());
}

new Gauge({
  name: 'apiserver_resource_objects',
  help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
  labelNames: ['group', 'resource'],
  registers: [registry],
  async collect() {
    this.reset();
    for (const c of await objectCounts()) this.set({ group: c.group, resource: c.resource }, c.count);
  },
});

new Gauge({
  name: 'apiserver_storage_objects',
  help: '[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
  labelNames: ['resource'],
  registers: [registry],
  async collect() {
    this.reset();
    // Upstream's label is the GroupResource's String(): `<resource>.<group>`.
    for (const c of await objectCounts()) {
      this.set({ resource: c.group ? `${c.resource}.${c.group}` : c.resource }, c.count);
    }
  },
});

new Gauge({
  name: 'apiserver_storage_size_bytes',
  help: 'Size of the storage database file physically allocated in bytes.',
  labelNames: ['storage_cluster_id'],
  registers: [registry],
  async collect() {
    this.reset();
    const source = statsSource;
    if (!source) return;
    const size = await withinMs(source.sizeBytes(), STATS_TIMEOUT_MS, undefined);
    // Upstream names its storage clusters etcd-<index>; there is one here.
    if (size !== undefined) this.set({ storage_cluster_id: 'etcd-0' }, size);
  },
});
