// Rotated rounds: servers taking turns at the same job, round after round, and the
// figures a row takes from them. A best-of-two comparison cannot resolve 5% on a
// shared machine (the authz-scale row's null pair, nothing seeded on either side,
// read 0.94x and 1.28x): each round's ratio sees both sides under about the same
// load, and the median of several rounds' ratios drops the rounds a neighbour's
// burst fell on. See "The authorization-at-scale row, measured by rounds" in the
// performance notes.

import type { LoadResult } from './load.js';

/**
 * The order `sides` servers take their turns in, in round `round`: the rotations of
 * 0..n-1, then the same reversed, and again. Over 2n rounds every side is in every
 * position twice and, of every two sides, each goes first n times, so neither a
 * position (first after the settle, or right after another server's window) nor who
 * precedes whom favours a side.
 */
export function roundOrder(sides: number, round: number): number[] {
  const shift = round % sides;
  const order = Array.from({ length: sides }, (_, i) => (i + shift) % sides);
  return Math.floor(round / sides) % 2 === 1 ? order.reverse() : order;
}

/**
 * The median of the finite values (the mean of the middle two for an even count); NaN
 * for none. A round whose figure could not be taken (a side that answered nothing: NaN)
 * is left out rather than sorted, which a NaN would leave in an arbitrary place.
 */
export function median(xs: readonly number[]): number {
  const sorted = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The server CPU µs per operation measured() notes on a result (0 when not measured). */
export function cpuUsPerOp(r: LoadResult): number {
  const us = r.extra?.['cpuUsPerOp'];
  return typeof us === 'number' ? us : 0;
}

/** One side's figures in one round. */
export interface SideRound {
  readonly throughput: number;
  readonly cpuUsPerOp: number;
}

/**
 * One side over all rounds, as a row's figure shows it: the round with the median
 * throughput (its latencies and counts), with `cpuUsPerOp` the median of the rounds'
 * CPU per operation and every round's figures under `rounds`.
 */
export function sideOverRounds(results: readonly LoadResult[]): LoadResult {
  if (results.length === 0) throw new Error('a side with no rounds');
  const byThroughput = [...results].sort((a, b) => a.throughput - b.throughput);
  const middle = byThroughput[Math.floor((byThroughput.length - 1) / 2)] as LoadResult;
  const rounds: SideRound[] = results.map((r) => ({ throughput: r.throughput, cpuUsPerOp: cpuUsPerOp(r) }));
  return {
    ...middle,
    throughput: median(results.map((r) => r.throughput)),
    extra: { ...middle.extra, cpuUsPerOp: Math.round(median(rounds.map((r) => r.cpuUsPerOp))), rounds },
  };
}

/** A pair of sides compared round by round: the figures a row's ratio and verdict come from. */
export interface RoundRatios {
  /** Each round's throughput of the server over the baseline's, in round order. */
  readonly ratios: readonly number[];
  /** Their median: the row's ratio, which its verdict is taken on. */
  readonly ratio: number;
  /** Each round's server CPU µs per operation over the baseline's (above 1: the server is dearer). */
  readonly cpuRatios: readonly number[];
  readonly cpuRatio: number;
}

/** Round-by-round ratios of `server` against `baseline` (results in the same round order). */
export function roundRatios(server: readonly LoadResult[], baseline: readonly LoadResult[]): RoundRatios {
  if (server.length === 0 || server.length !== baseline.length) {
    throw new Error(`round ratios: ${server.length} rounds against ${baseline.length}`);
  }
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (const [i, s] of server.entries()) {
    const b = baseline[i] as LoadResult;
    ratios.push(b.throughput > 0 ? s.throughput / b.throughput : NaN);
    const cpu = cpuUsPerOp(b);
    cpuRatios.push(cpu > 0 ? cpuUsPerOp(s) / cpu : NaN);
  }
  return { ratios, ratio: median(ratios), cpuRatios, cpuRatio: median(cpuRatios) };
}
