// npm run bench [-- --quick] [--out results.json]
//
// `npm run bench` builds (tsc, as `npm start` does) and runs the server from dist/,
// as it runs in production: from the sources through tsx, every closure the server
// creates also gets a defineProperty('name') (esbuild's keepNames), which in heap
// snapshots was ~5 KiB of every idle watch, and every Error.stack is source-mapped.
// The CI test runs the quick run from the sources (it checks the table, not figures).
// Environment: BENCH_PROFILE=<dir> writes a CPU profile of the measured process per
// workload; BENCH_DURATION_MS overrides the timed window of each workload, and
// BENCH_SIZES (JSON) any other size.
//
// Runs every workload against its raw baseline (see suite.ts), prints the table and
// writes it as JSON. --quick runs the same workloads small, in about a minute: CI
// runs it so the harness keeps working; timings from it mean little.

import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { findEtcd } from '../etcd.js';
import { table } from './report.js';
import { FULL, QUICK, Suite } from './suite.js';

function etcdVersion(): string {
  try {
    return (
      /etcd Version: (\S+)/.exec(execFileSync(findEtcd(), ['--version'], { encoding: 'utf8' }))?.[1] ?? ''
    );
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { quick: { type: 'boolean' }, out: { type: 'string' } },
    allowPositionals: true,
  });
  const quick = values.quick === true;
  const out = values.out ?? positionals[0] ?? (quick ? 'bench-quick.json' : 'bench-results.json');
  const started = Date.now();
  // BENCH_DURATION_MS stretches each timed window (longer CPU profiles with BENCH_PROFILE).
  const base = quick ? QUICK : FULL;
  const durationMs = Number(process.env['BENCH_DURATION_MS'] ?? '') || base.durationMs;
  // BENCH_SIZES='{"watchers":200}' overrides any size (iteration on one workload).
  const overrides = JSON.parse(process.env['BENCH_SIZES'] ?? '{}') as Partial<typeof base>;
  const suite = new Suite({ ...base, durationMs, ...overrides }, { log: (line) => console.error(line) });
  const rows = await suite.run();
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    etcd: etcdVersion(),
  };
  writeFileSync(
    out,
    `${JSON.stringify({ mode: quick ? 'quick' : 'full', date: new Date(started).toISOString(), seconds, machine, rows }, null, 2)}\n`,
  );
  console.log(table(rows));
  console.log(`\n${rows.length} workloads in ${seconds}s (${quick ? 'quick' : 'full'} run); JSON: ${out}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
