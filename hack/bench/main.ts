// npm run bench [-- --quick] [--out results.json] [--only group,...]
//
// `npm run bench` builds (tsc, as `npm start` does) and runs the server from dist/,
// as it runs in production: from the sources through tsx, every closure the server
// creates also gets a defineProperty('name') (esbuild's keepNames), which in heap
// snapshots was ~5 KiB of every idle watch, and every Error.stack is source-mapped.
// The CI test runs the quick run from the sources (it checks the table, not figures).
// Environment: BENCH_PROFILE=<dir> writes a CPU profile of the measured process per
// workload; BENCH_DURATION_MS overrides the timed window of each workload (the creates'
// too), and BENCH_SIZES (JSON) any other size.
//
// Runs every workload against its raw baseline (see suite.ts), prints the table and
// writes it as JSON. `--only etcd,limiter` runs only those groups of workloads (etcd,
// sqlite, memory, encryption, fairness, limiter: the order Suite.run() runs them in),
// to rerun part of the suite; the JSON then holds only their rows. --quick runs the same workloads small, in about a minute: CI
// runs it so the harness keeps working; timings from it mean little.

import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { findEtcd } from '../etcd.js';
import { table } from './report.js';
import { FULL, QUICK, Suite, WORKLOAD_GROUPS, type WorkloadGroup } from './suite.js';

function etcdVersion(): string {
  try {
    return (
      /etcd Version: (\S+)/.exec(execFileSync(findEtcd(), ['--version'], { encoding: 'utf8' }))?.[1] ?? ''
    );
  } catch {
    return '';
  }
}

/** `--only a,b`: known group names, or an error that lists them. */
function groupsOf(list: string): ReadonlySet<WorkloadGroup> {
  const names = list
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const unknown = names.filter((n) => !(WORKLOAD_GROUPS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(
      `--only: ${unknown.length > 0 ? `unknown group ${unknown.map((n) => JSON.stringify(n)).join(', ')}` : 'no group given'}; the groups are ${WORKLOAD_GROUPS.join(', ')}`,
    );
  }
  return new Set(names as WorkloadGroup[]);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { quick: { type: 'boolean' }, out: { type: 'string' }, only: { type: 'string' } },
    allowPositionals: true,
  });
  const quick = values.quick === true;
  const out = values.out ?? positionals[0] ?? (quick ? 'bench-quick.json' : 'bench-results.json');
  const started = Date.now();
  // BENCH_DURATION_MS stretches each timed window (longer CPU profiles with BENCH_PROFILE).
  const base = quick ? QUICK : FULL;
  const stretched = Number(process.env['BENCH_DURATION_MS'] ?? '') || undefined;
  const durationMs = stretched ?? base.durationMs;
  const createDurationMs = stretched ?? base.createDurationMs;
  // BENCH_SIZES='{"watchers":200}' overrides any size (iteration on one workload).
  const overrides = JSON.parse(process.env['BENCH_SIZES'] ?? '{}') as Partial<typeof base>;
  const only = values.only === undefined ? undefined : groupsOf(values.only);
  const suite = new Suite(
    { ...base, durationMs, createDurationMs, ...overrides },
    { log: (line) => console.error(line), only },
  );
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
    `${JSON.stringify({ mode: quick ? 'quick' : 'full', ...(only ? { only: [...only] } : {}), date: new Date(started).toISOString(), seconds, machine, rows }, null, 2)}\n`,
  );
  console.log(table(rows));
  console.log(`\n${rows.length} workloads in ${seconds}s (${quick ? 'quick' : 'full'} run); JSON: ${out}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
