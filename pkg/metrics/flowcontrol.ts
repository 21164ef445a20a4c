// The overload-protection metrics of k8s.io/apiserver (pkg/util/flowcontrol/metrics
// and the max-in-flight filter's in pkg/endpoints/metrics): the same names, labels
// and buckets, so kube-apiserver's APF dashboards and alerts read this server.
// Recorded by pkg/apiserver/filters/max-inflight.ts.

import { Counter, Gauge } from 'prom-client';

import { InflightWatermark, registerWatermarkGauge } from './apiserver.js';
import { HistogramFamily } from './families.js';
import { registry } from './registry.js';

/** upstream's requestDurationSecondsBuckets (wait and execution). */
const FLOWCONTROL_DURATION_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

const FLOW_LABELS = ['priority_level', 'flow_schema'] as const;

export const flowcontrolRejectedRequests = new Counter({
  name: 'apiserver_flowcontrol_rejected_requests_total',
  help: 'Number of requests rejected by API Priority and Fairness subsystem',
  labelNames: [...FLOW_LABELS, 'reason'],
  registers: [registry],
});

export interface FlowLabels {
  readonly priority_level: string;
  readonly flow_schema: string;
}

/** What a priority level reports at scrape time (its queue set). */
export interface PriorityLevelCounts {
  readonly waitingCount: number;
  readonly executingCount: number;
}

/**
 * The levels of the running limiter, read at scrape time rather than set on every
 * request: the hot path pays nothing for the two gauges. A newer limiter's level
 * replaces an older one of the same labels (tests build several).
 */
const levels = new Map<string, { labels: FlowLabels; counts: PriorityLevelCounts }>();

export function reportPriorityLevel(labels: FlowLabels, counts: PriorityLevelCounts): void {
  levels.set(`${labels.priority_level}\u0000${labels.flow_schema}`, { labels, counts });
}

new Gauge({
  name: 'apiserver_flowcontrol_current_inqueue_requests',
  help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
  labelNames: FLOW_LABELS,
  registers: [registry],
  collect() {
    for (const { labels, counts } of levels.values()) this.set({ ...labels }, counts.waitingCount);
  },
});

new Gauge({
  name: 'apiserver_flowcontrol_current_executing_requests',
  help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
  labelNames: FLOW_LABELS,
  registers: [registry],
  collect() {
    for (const { labels, counts } of levels.values()) this.set({ ...labels }, counts.executingCount);
  },
});

// Recorded for every request the limiter admits: a family whose series the filter resolves once.
export const flowcontrolWaitDuration = new HistogramFamily({
  name: 'apiserver_flowcontrol_request_wait_duration_seconds',
  help: 'Length of time a request spent waiting in its queue',
  labelNames: [...FLOW_LABELS, 'execute'],
  buckets: FLOWCONTROL_DURATION_BUCKETS,
  registry,
});

/** Deprecated upstream in favour of the rejected counter above; kept while kube-apiserver still records it. */
export const droppedRequests = new Counter({
  name: 'apiserver_dropped_requests_total',
  help: "Number of requests dropped with 'Try again later' response",
  labelNames: ['request_kind'],
  registers: [registry],
});

/** The most requests waiting at once since the last scrape, per kind (upstream: in the last second). */
export const inqueue = new InflightWatermark();

registerWatermarkGauge(
  'apiserver_current_inqueue_requests',
  'Maximal number of queued requests in this apiserver per request kind in last second.',
  inqueue,
);
