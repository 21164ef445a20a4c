// The one metrics registry of the process (k8s.io/component-base's legacyregistry):
// every metric this server exposes is registered here, under kube-apiserver's names
// where one exists, so that dashboards and alerts written for kube-apiserver work
// unchanged. Node's default process metrics (process_*, nodejs_*) are registered
// once, as the Go runtime's are upstream. Nothing here knows HTTP or storage: the
// modules beside this one define the metrics, the layers above record into them.

import { collectDefaultMetrics, Registry } from 'prom-client';

export const registry = new Registry();

/**
 * How often the event-loop delay histogram behind nodejs_eventloop_lag_{min,max,mean,
 * stddev,p50,p90,p99}_seconds samples the loop. prom-client's default, 10 ms, is a libuv
 * timer that wakes an idle server 100 times a second: 6-7 of the 8 ms of CPU an idle
 * server burnt per second (hack/bench/idle-cpu.ts,
 * docs/performance/idle-server-timers.md). Every gauge still updates at each scrape,
 * and a stall still shows as the lateness of the tick it delays, to within one
 * interval: at 100 ms a stall of 300 ms reads 200-300 ms, and one shorter than 100 ms
 * may fall between two ticks.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

/** The Prometheus text exposition of every registered metric, and its Content-Type. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/**
 * upstream's request-latency buckets (apiserver_request_duration_seconds and
 * etcd_request_duration_seconds share them, so the two can be compared).
 */
export const LATENCY_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

/** prom-client's exponentialBuckets, spelled out for the few that upstream defines that way. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  let v = start;
  for (let i = 0; i < count; i++) {
    out.push(v);
    v *= factor;
  }
  return out;
}

/** A gauge's collect() must not hang a scrape on a frozen dependency: this bounds one wait. */
export async function withinMs<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([p.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One bounded read of a dependency shared by the gauges of one scrape (they are
 * collected one after another): a read younger than the bound is reused.
 */
export class ScrapeRead<T> {
  private last: { at: number; value: Promise<T> } | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly fallback: T,
  ) {}

  get(read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    if (this.last && now - this.last.at < this.timeoutMs) return this.last.value;
    const value = withinMs(read(), this.timeoutMs, this.fallback);
    this.last = { at: now, value };
    return value;
  }

  forget(): void {
    this.last = undefined;
  }
}
