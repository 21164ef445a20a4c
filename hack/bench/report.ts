// Rows of the benchmark report: a figure for the server, one for its raw baseline,
// their ratio, the target and whether it is met. Printed as a table and written as
// JSON (with every measurement behind the figures, histograms included).

import type { LoadResult } from './load.js';
import type { RoundRatios } from './rounds.js';

export interface Figure {
  readonly value: number;
  readonly unit: string;
  /** The measurement behind the figure. */
  readonly detail?: LoadResult;
}

export type Verdict = 'met' | 'missed' | 'no target';

export class Row {
  baseline: Figure | undefined;
  baselineLabel = '';
  op: '>=' | '<=' | undefined;
  factor: number | undefined;
  /** Set when the two figures come from rotated rounds (rounds.ts): the ratio is then their median. */
  rounds: RoundRatios | undefined;

  constructor(
    readonly id: string,
    readonly workload: string,
    readonly server: Figure,
  ) {}

  against(baseline: Figure, label: string): this {
    this.baseline = baseline;
    this.baselineLabel = label;
    return this;
  }

  target(op: '>=' | '<=', factor: number): this {
    this.op = op;
    this.factor = factor;
    return this;
  }

  /**
   * The figures were measured in rounds: the ratio (and so the verdict) is the median of
   * the rounds' ratios, not the ratio of the two figures (each side's median round).
   */
  byRounds(rounds: RoundRatios): this {
    this.rounds = rounds;
    return this;
  }

  get ratio(): number | undefined {
    if (this.rounds) return Number.isFinite(this.rounds.ratio) ? this.rounds.ratio : undefined;
    if (!this.baseline || this.baseline.value === 0) return undefined;
    return this.server.value / this.baseline.value;
  }

  get verdict(): Verdict {
    const r = this.ratio;
    if (this.op === undefined || this.factor === undefined) return 'no target';
    // A row measured in rounds none of which gave a ratio failed to measure: not met.
    if (r === undefined) return this.rounds ? 'missed' : 'no target';
    return (this.op === '>=' ? r >= this.factor : r <= this.factor) ? 'met' : 'missed';
  }

  get targetText(): string {
    return this.op === undefined ? '' : `${this.op} ${this.factor}x`;
  }

  line(): string {
    const r = this.ratio;
    const cpu = (f: Figure | undefined): string => {
      const us = f?.detail?.extra?.['cpuUsPerOp'];
      return typeof us === 'number' ? ` [${us} us CPU/op]` : '';
    };
    return `${this.workload}: ${show(this.server)}${cpu(this.server)}${this.baseline ? ` vs ${show(this.baseline)}${cpu(this.baseline)}` : ''}${
      r !== undefined ? ` = ${r.toFixed(2)}x` : ''
    }${this.roundsText()}${this.op ? ` (target ${this.targetText}: ${this.verdict})` : ''}`;
  }

  /** ", median of 7 rounds (0.91-1.04x), CPU/op 1.02x (0.97-1.10x)" for a row measured in rounds. */
  private roundsText(): string {
    const r = this.rounds;
    if (!r) return '';
    const range = (xs: readonly number[]): string =>
      `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}x`;
    return `, median of ${r.ratios.length} rounds (${range(r.ratios)}), CPU/op ${r.cpuRatio.toFixed(2)}x (${range(r.cpuRatios)})`;
  }

  toJSON(): Record<string, unknown> {
    return {
      id: this.id,
      workload: this.workload,
      server: this.server,
      baseline: this.baseline ? { ...this.baseline, label: this.baselineLabel } : null,
      ratio: this.ratio ?? null,
      target: this.targetText || null,
      verdict: this.verdict,
      ...(this.rounds ? { rounds: this.rounds } : {}),
    };
  }
}

export function show(f: Figure): string {
  const v = f.value;
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${f.unit}`;
}

/** The table: workload, server, baseline, ratio, target, verdict. */
export function table(rows: readonly Row[]): string {
  const header = ['workload', 'server', 'baseline', 'ratio', 'target', 'verdict'];
  const cells = rows.map((r) => [
    r.workload,
    show(r.server),
    r.baseline ? show(r.baseline) : '-',
    r.ratio !== undefined ? `${r.ratio.toFixed(2)}x` : '-',
    r.targetText || '-',
    r.verdict,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const fmt = (c: string[]): string => `| ${c.map((x, i) => x.padEnd(widths[i] as number)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(fmt)].join('\n');
}
