// The request metrics of k8s.io/apiserver pkg/endpoints/metrics/metrics.go: the same
// names, label names and buckets, so kube-apiserver's dashboards, recording rules and
// alerts read this server as they read kube-apiserver. Recorded by the filter in
// pkg/apiserver/filters/metrics.ts.

import { Counter, Gauge } from 'prom-client';

import { CounterFamily, HistogramFamily } from './families.js';
import { exponentialBuckets, LATENCY_BUCKETS, registry } from './registry.js';

/** The `component` label of every request this server serves itself (upstream's APIServerComponent). */
export const APISERVER_COMPONENT = 'apiserver';

const REQUEST_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
] as const;
const RESPONSE_LABELS = [
  'verb',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
] as const;

// Recorded on every request: families whose series the filter resolves once.
export const requestTotal = new CounterFamily({
  name: 'apiserver_request_total',
  help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
  labelNames: [...REQUEST_LABELS, 'code'],
  registry,
});

export const requestDuration = new HistogramFamily({
  name: 'apiserver_request_duration_seconds',
  help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
  labelNames: REQUEST_LABELS,
  buckets: LATENCY_BUCKETS,
  registry,
});

export const responseSizes = new HistogramFamily({
  name: 'apiserver_response_sizes',
  help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
  labelNames: RESPONSE_LABELS,
  // 1 KB to 1 GB, as upstream's ExponentialBuckets(1000, 10.0, 7).
  buckets: exponentialBuckets(1000, 10, 7),
  registry,
});

// Recorded only when the server refuses or cuts off a request to protect itself:
// its overload limiter's 429 and its request deadline's 504 (upstream's
// RecordRequestTermination, an ALPHA metric). No dry_run label, as upstream.
export const requestTerminationsTotal = new CounterFamily({
  name: 'apiserver_request_terminations_total',
  help: 'Number of requests which apiserver terminated in self-defense.',
  labelNames: [...RESPONSE_LABELS, 'code'],
  registry,
});

export const longRunningRequests = new Gauge({
  name: 'apiserver_longrunning_requests',
  help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
  labelNames: RESPONSE_LABELS,
  registers: [registry],
});

export const watchEventsTotal = new Counter({
  name: 'apiserver_watch_events_total',
  help: 'Number of events sent in watch clients',
  labelNames: ['group', 'version', 'resource'],
  registers: [registry],
});

/** upstream's request kinds: reads, and everything else. */
export type RequestKind = 'readOnly' | 'mutating';

/**
 * In-flight (or queued) requests, reported as upstream reports them: the highest
 * count seen since the last scrape (upstream: in the last second), since the
 * instantaneous count of a busy server is mostly noise. Long-running requests are
 * not counted.
 */
export class InflightWatermark {
  private readonly current: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  private readonly highest: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };

  started(kind: RequestKind): void {
    const n = ++this.current[kind];
    if (n > this.highest[kind]) this.highest[kind] = n;
  }

  finished(kind: RequestKind): void {
    this.current[kind]--;
  }

  /** The count is now `n` (for a source that knows its count rather than its changes). */
  set(kind: RequestKind, n: number): void {
    this.current[kind] = n;
    if (n > this.highest[kind]) this.highest[kind] = n;
  }

  /** The highest count since the last call, and start the next window at the current count. */
  take(kind: RequestKind): number {
    const n = this.highest[kind];
    this.highest[kind] = this.current[kind];
    return n;
  }
}

export const inflight = new InflightWatermark();

/** A gauge of `watermark` per request kind, read (and its window restarted) at each scrape. */
export function registerWatermarkGauge(name: string, help: string, watermark: InflightWatermark): void {
  new Gauge({
    name,
    help,
    labelNames: ['request_kind'],
    registers: [registry],
    collect() {
      this.set({ request_kind: 'readOnly' }, watermark.take('readOnly'));
      this.set({ request_kind: 'mutating' }, watermark.take('mutating'));
    },
  });
}

registerWatermarkGauge(
  'apiserver_current_inflight_requests',
  'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
  inflight,
);
