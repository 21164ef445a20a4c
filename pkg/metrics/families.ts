// Counters and histograms for the hot path. prom-client hashes the label object
// on every inc() and observe(); a request records three of them, and that hashing
// was most of what metrics cost a get. Here a caller resolves its series once (by
// labels) and keeps the handle: recording is then an increment. The families
// speak prom-client's registry protocol (name, help, type, get()), so they are
// exposed by the same registry, in the same text format, as every other metric.

import type { Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;

interface Sample {
  readonly metricName?: string;
  readonly labels: Record<string, string | number>;
  readonly value: number;
}

interface MetricSnapshot {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly values: Sample[];
  readonly aggregator: 'sum';
}

interface FamilyOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registry: Registry;
}

abstract class Family<S> {
  readonly name: string;
  readonly help: string;
  protected readonly labelNames: readonly string[];
  private readonly members = new Map<string, { labels: Labels; series: S }>();

  constructor(options: FamilyOptions) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    // The registry only asks a metric for name and get(): see the class comment.
    options.registry.registerMetric(this as never);
  }

  /** The series of these labels (every label name given, no other), created on first use. */
  series(labels: Labels): S {
    const key = this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
    let member = this.members.get(key);
    if (!member) {
      const own: Record<string, string> = {};
      for (const n of this.labelNames) own[n] = labels[n] ?? '';
      member = { labels: own, series: this.newSeries() };
      this.members.set(key, member);
    }
    return member.series;
  }

  protected abstract newSeries(): S;

  protected each(fn: (labels: Labels, series: S) => void): void {
    for (const { labels, series } of this.members.values()) fn(labels, series);
  }
}

export class CounterSeries {
  value = 0;

  inc(n = 1): void {
    this.value += n;
  }
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = 'counter';

  protected newSeries(): CounterSeries {
    return new CounterSeries();
  }

  get(): MetricSnapshot {
    const values: Sample[] = [];
    this.each((labels, s) => values.push({ labels: { ...labels }, value: s.value }));
    return { name: this.name, help: this.help, type: 'counter', values, aggregator: 'sum' };
  }
}

export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly upperBounds: readonly number[]) {
    this.counts = new Array<number>(upperBounds.length).fill(0);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (v <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = 'histogram';
  private readonly buckets: readonly number[];

  constructor(options: FamilyOptions & { readonly buckets: readonly number[] }) {
    super(options);
    this.buckets = [...options.buckets].sort((a, b) => a - b);
  }

  protected newSeries(): HistogramSeries {
    return new HistogramSeries(this.buckets);
  }

  get(): MetricSnapshot {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    this.each((labels, s) => {
      // Exposed cumulatively, with the +Inf bucket, as the text format wants, and
      // `le` first as prom-client's Histogram writes it: a scrape cannot tell them apart.
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i] ?? 0;
        values.push({ metricName: bucket, labels: { le, ...labels }, value: cumulative });
      });
      values.push({ metricName: bucket, labels: { le: '+Inf', ...labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: s.count });
    });
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}
