// node dist/hack/bench/authz-rounds-spread.js <bench.json> [<bench.json> ...]
//
// The authz-scale row's two methods, compared on the same windows: the old one (each
// side's best of two windows, the second round in the other order: "A fair
// authorization-at-scale row" in the performance notes) and the rounds the row is now
// measured in (the median of 7 rotated rounds' ratios: "The authorization-at-scale
// row, measured by rounds"). Reads the JSON a bench run writes (`npm run bench --
// --only sqlite --out x.json`), whose authz-scale and authz-scale-floor rows keep
// every round's figures, and prints for each pair (seeded / unseeded, and the twins:
// the noise floor):
//   - every round's throughput ratio and server CPU per get ratio;
//   - the median of the rounds (what the row reports and its verdict takes);
//   - what the old method would have read from the same windows: best of two over each
//     consecutive pair of rounds (1-2, 3-4, 5-6: the seeded and unseeded sides take
//     both orders within each pair), so its spread can be set beside the median's.
// Over several runs' files it also prints the spread of each method across the runs.
// No server is started: rerun the bench for new figures, this for reading them.

import { readFileSync } from 'node:fs';
import { median } from './rounds.js';

interface SideRound {
  readonly throughput: number;
  readonly cpuUsPerOp: number;
}

interface ReportRow {
  readonly id: string;
  readonly server: { readonly detail?: { readonly extra?: { readonly rounds?: SideRound[] } } };
  readonly baseline: { readonly detail?: { readonly extra?: { readonly rounds?: SideRound[] } } } | null;
  readonly ratio: number | null;
}

const fmt = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(' ');
const spread = (xs: readonly number[]): string =>
  xs.length === 0 ? '-' : `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}x`;

/** Best of two windows per side, over rounds (0,1), (2,3), ...: the old method's figure. */
function bestOfTwo(server: readonly SideRound[], baseline: readonly SideRound[]): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < server.length && i + 1 < baseline.length; i += 2) {
    const best = (xs: readonly SideRound[]): number => Math.max(xs[i]?.throughput ?? 0, xs[i + 1]?.throughput ?? 0);
    out.push(best(server) / best(baseline));
  }
  return out;
}

const perMethod = new Map<string, { median: number[]; cpu: number[]; old: number[] }>();

for (const file of process.argv.slice(2)) {
  const report = JSON.parse(readFileSync(file, 'utf8')) as { date?: string; rows: ReportRow[] };
  console.log(`${file} (${report.date ?? 'undated'})`);
  for (const id of ['authz-scale', 'authz-scale-floor']) {
    const row = report.rows.find((r) => r.id === id);
    const server = row?.server.detail?.extra?.rounds;
    const baseline = row?.baseline?.detail?.extra?.rounds;
    if (!row || !server || !baseline) {
      console.log(`  ${id}: no rounds in this file (a run before the rounds?)`);
      continue;
    }
    const ratios = server.map((s, i) => s.throughput / (baseline[i]?.throughput ?? NaN));
    const cpu = server.map((s, i) => s.cpuUsPerOp / (baseline[i]?.cpuUsPerOp ?? NaN));
    const old = bestOfTwo(server, baseline);
    const m = { median: median(ratios), cpu: median(cpu) };
    console.log(`  ${id}`);
    console.log(`    throughput ratio by round   ${fmt(ratios)}  median ${m.median.toFixed(2)}x`);
    console.log(`    CPU µs/get ratio by round   ${fmt(cpu)}  median ${m.cpu.toFixed(2)}x`);
    console.log(
      `    CPU µs/get by round          ${server.map((s) => s.cpuUsPerOp).join(' ')}  against  ${baseline.map((b) => b.cpuUsPerOp).join(' ')}`,
    );
    console.log(`    best of two (old method)     ${fmt(old)}  (${spread(old)})`);
    const acc = perMethod.get(id) ?? { median: [], cpu: [], old: [] };
    acc.median.push(m.median);
    acc.cpu.push(m.cpu);
    acc.old.push(...old);
    perMethod.set(id, acc);
  }
}

if (process.argv.length > 3) {
  console.log('across the files');
  for (const [id, acc] of perMethod) {
    console.log(
      `  ${id}: median of rounds ${spread(acc.median)} (${acc.median.length}); CPU ${spread(acc.cpu)}; best of two ${spread(acc.old)} (${acc.old.length})`,
    );
  }
}
