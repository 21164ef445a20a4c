// Latency histograms: Node's HDR histogram (perf_hooks), recording microseconds,
// reported in milliseconds. The whole distribution goes into the JSON report, so a
// reader can look past p50 and p99.

import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

export interface LatencySummary {
  readonly count: number;
  readonly minMs: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** [percentile, ms] pairs: the HDR histogram's own percentile distribution. */
  readonly distribution: readonly (readonly [number, number])[];
}

export class Latencies {
  private readonly h: RecordableHistogram = createHistogram({ lowest: 1, highest: 600_000_000, figures: 3 });

  recordMs(ms: number): void {
    this.h.record(Math.max(1, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.h.count;
  }

  summary(): LatencySummary {
    const h = this.h;
    const ms = (us: number): number => Math.round(us) / 1000;
    if (h.count === 0) {
      return { count: 0, minMs: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0, distribution: [] };
    }
    return {
      count: h.count,
      minMs: ms(h.min),
      meanMs: ms(h.mean),
      p50Ms: ms(h.percentile(50)),
      p90Ms: ms(h.percentile(90)),
      p99Ms: ms(h.percentile(99)),
      maxMs: ms(h.max),
      distribution: [...h.percentiles.entries()].map(([p, v]) => [p, ms(v)] as const),
    };
  }
}
