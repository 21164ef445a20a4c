// node dist/hack/bench/gc-threads-ab.js [--rounds R] [--seconds S] [--clients N]
//        [--create-clients N] [--rows get-sqlite,get-etcd3,create,create-1,memory]
//        [--objects N] [--candidates "label=flags;label=flags;..."]
//
// Does the server spend less CPU per operation with fewer of V8's GC helper threads on
// a 2-core machine? "The get path, sixth pass" (in the performance notes) found the
// server spending ~24 µs a get on threads other than the main one, V8's platform
// threads (parallel scavenge, concurrent marking, concurrent sweeping), which
// process.cpuUsage() counts. On two cores shared with the load and etcd, handing GC
// work to helper threads may cost more in wake-ups and synchronisation than it saves.
//
// One run; every candidate is a set of node flags given to servers otherwise alike
// (server-host.ts: the same options and startServer as cmd/apiserver). A server host
// runs with the server's own flags first (SERVER_NODE_FLAGS, pkg/server/node-flags.ts)
// and then the candidate's. Rounds visit the candidates in a rotated order, so
// neighbours in time see the same machine load; each figure is the median over the
// rounds unless said otherwise. The default candidates:
//
//   today                   the server's flags alone
//   single-threaded-gc      --single-threaded-gc: no background GC task at all (it
//                           implies no parallel scavenge, marking, compaction or pointer
//                           update and no concurrent marking or sweeping)
//   no-parallel-scavenge    --no-parallel-scavenge: the main thread scavenges alone
//   no-concurrent-marking   --no-concurrent-marking: the old generation is marked
//                           incrementally on the main thread only
//   pool-1                  --v8-pool-size=1: Node's platform worker pool at one thread
//                           (default 4; 0 means "available parallelism - 1", also 1 here)
//   no-scavenge+no-marking  --no-parallel-scavenge --no-concurrent-marking
//
// Rows (an etcd of its own for every etcd3 server):
//
//   get-sqlite  a plain user's get of their own User, --clients (32) clients
//   get-etcd3   the same on etcd3
//   create      ~1 KiB Users POSTed by --create-clients (64) clients, on the etcd3 servers
//   create-1    the same by one client: its p50 is the latency row
//   memory      after the rows: --objects (100,000) Users created on each candidate's
//               sqlite server (the watch cache holds them), the live heap per object
//               after a full collection, and RSS (from /proc) before and after
//
// Per window: the server process's process.cpuUsage() per operation, the same window
// split from /proc/<pid>/task into the main thread and all others (threadCpuMicros,
// 10 ms ticks), throughput, the client's p50 and p99, and every GC pause the server
// recorded (gc-stats.ts: perf_hooks 'gc' entries): pauses and GC ms per 1,000
// operations, and, pooled over all rounds of a candidate's row, the longest pause and
// the p99 of pauses.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import {
  addReader,
  alternateCandidates,
  fmt,
  parseCandidates,
  readerGetJob,
  rssMb,
  startFlaggedServer,
  type FlaggedServer as Server,
} from './flag-candidates.js';
import type { GcStats } from './gc-stats.js';
import { cpuOf, job, median } from './get-sides.js';
import type { Job } from './load.js';
import type { MemoryUsage } from './memory.js';
import { threadCpuMicros } from './process-cpu.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '32' },
    'create-clients': { type: 'string', default: '64' },
    rows: { type: 'string', default: 'get-sqlite,get-etcd3,create,create-1,memory' },
    objects: { type: 'string', default: '100000' },
    candidates: {
      type: 'string',
      default:
        'today=;single-threaded-gc=--single-threaded-gc;no-parallel-scavenge=--no-parallel-scavenge;' +
        'no-concurrent-marking=--no-concurrent-marking;pool-1=--v8-pool-size=1;' +
        'no-scavenge+no-marking=--no-parallel-scavenge --no-concurrent-marking',
    },
  },
});

const candidates = parseCandidates(args.candidates);
const rows = new Set(args.rows.split(','));
const rounds = Number(args.rounds);
const ms = Number(args.seconds) * 1000;
const clients = Number(args.clients);
const createClients = Number(args['create-clients']);
const objects = Number(args.objects);
const dir = mkdtempSync(join(tmpdir(), 'gc-threads-'));
const children: Child[] = [];
const etcds: EtcdInstance[] = [];

const startServer = (label: string, flags: readonly string[], storage: string[]): Promise<Server> =>
  startFlaggedServer(dir, children, label, flags, storage);

interface Window {
  readonly ops: number;
  readonly perSecond: number;
  readonly cpuUsPerOp: number;
  readonly mainUsPerOp: number;
  readonly othersUsPerOp: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly pausesPer1k: number;
  readonly gcMsPer1k: number;
  readonly pausesMs: readonly number[];
  readonly errors: number;
  readonly firstError?: string;
}

async function window(load: Child, server: Server, j: Job): Promise<Window> {
  await server.host.call<GcStats>({ gcStats: true }); // drains the pauses before the window
  const c0 = await cpuOf(server.host);
  const t0 = threadCpuMicros(server.host.pid);
  const r = await job(load, j);
  const t1 = threadCpuMicros(server.host.pid);
  const used = (await cpuOf(server.host)) - c0;
  const g = await server.host.call<GcStats>({ gcStats: true });
  const ops = r.operations;
  const per = (n: number): number => (ops > 0 ? n / ops : NaN);
  return {
    ops,
    perSecond: r.throughput,
    cpuUsPerOp: per(used),
    mainUsPerOp: per(t1.main - t0.main),
    othersUsPerOp: per(t1.others - t0.others),
    p50Ms: r.latency.p50Ms,
    p99Ms: r.latency.p99Ms,
    pausesPer1k: per(g.pausesMs.length * 1000),
    gcMsPer1k: per(g.pausesMs.reduce((a, b) => a + b, 0) * 1000),
    pausesMs: g.pausesMs,
    errors: r.errors,
    ...(r.firstError !== undefined ? { firstError: r.firstError } : {}),
  };
}

const getJob = (s: Server): Job => readerGetJob(s, clients, ms);

// Every window creates names of its own (a window reusing another's would only conflict).
let createWindows = 0;
const createJob =
  (concurrency: number) =>
  (s: Server): Job => ({
    kind: 'create-users',
    target: s.admin,
    // A label may hold characters a name may not ('+'): the prefix keeps a name's form.
    namePrefix: `${s.label.replace(/[^a-z0-9-]/g, '-')}-w${createWindows++}`,
    concurrency,
    warmupMs: 0,
    durationMs: ms,
  });

/** The q-th quantile (0..1) of `xs`, nearest rank. */
function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function report(title: string, results: Map<string, Window[]>, unit: string): void {
  console.log(`\n${title}`);
  console.log(
    `  ${'candidate'.padEnd(24)} ${`CPU µs/${unit}`.padStart(12)} ${'× today'.padStart(8)} ${'main'.padStart(6)} ` +
      `${'others'.padStart(6)} ${`${unit}/s`.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
      `${'GCs/1k'.padStart(7)} ${'GC ms/1k'.padStart(9)} ${'pause p99'.padStart(9)} ${'longest'.padStart(8)}`,
  );
  const base = results.get(candidates[0]!.label) ?? [];
  for (const c of candidates) {
    const ws = results.get(c.label) ?? [];
    const m = (f: (w: Window) => number): number => median(ws.map(f));
    const ratios = ws.map((w, i) => w.cpuUsPerOp / (base[i]?.cpuUsPerOp ?? NaN));
    const pauses = ws.flatMap((w) => w.pausesMs);
    const errors = ws.reduce((n, w) => n + w.errors, 0);
    const firstError = ws.find((w) => w.firstError !== undefined)?.firstError;
    console.log(
      `  ${c.label.padEnd(24)} ${fmt(m((w) => w.cpuUsPerOp)).padStart(12)} ${fmt(median(ratios), 2).padStart(8)} ` +
        `${fmt(m((w) => w.mainUsPerOp)).padStart(6)} ${fmt(m((w) => w.othersUsPerOp)).padStart(6)} ` +
        `${fmt(m((w) => w.perSecond)).padStart(8)} ${fmt(
          m((w) => w.p50Ms),
          2,
        ).padStart(7)} ` +
        `${fmt(
          m((w) => w.p99Ms),
          1,
        ).padStart(7)} ${fmt(
          m((w) => w.pausesPer1k),
          1,
        ).padStart(7)} ` +
        `${fmt(
          m((w) => w.gcMsPer1k),
          1,
        ).padStart(9)} ${fmt(quantile(pauses, 0.99), 2).padStart(9)} ` +
        `${fmt(pauses.length > 0 ? Math.max(...pauses) : NaN, 2).padStart(8)}` +
        `  (CPU by round: ${ws.map((w) => fmt(w.cpuUsPerOp)).join(', ')}; × today by round: ${ratios.map((x) => fmt(x, 2)).join(', ')})` +
        (errors > 0 ? `; ${errors} errors (first: ${firstError ?? '?'})` : ''),
    );
  }
}

/** Rounds over `servers`, a full-length warm-up window each first (the optimising compiler's background work settles). */
const alternate = (
  load: Child,
  servers: readonly Server[],
  jobOf: (s: Server) => Job,
  label: string,
): Promise<Map<string, Window[]>> =>
  alternateCandidates(candidates, servers, rounds, (s) => window(load, s, jobOf(s)), label);

const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  console.log(`GC helper threads A/B, ${rounds} rounds of ${args.seconds} s; load average ${loadAverage()}`);
  for (const c of candidates)
    console.log(`  ${c.label}: ${c.flags.join(' ') || "(the server's flags only)"}`);
  const sqlite: Server[] = [];
  const etcd3: Server[] = [];
  for (const c of candidates) {
    if (rows.has('get-sqlite') || rows.has('memory'))
      sqlite.push(await startServer(`${c.label}-sqlite`, c.flags, ['--storage-backend', 'sqlite']));
    if (rows.has('get-etcd3') || rows.has('create') || rows.has('create-1')) {
      const e = await startEtcd();
      etcds.push(e);
      etcd3.push(
        await startServer(`${c.label}-etcd3`, c.flags, [
          '--storage-backend',
          'etcd3',
          '--etcd-servers',
          e.endpoint,
        ]),
      );
    }
  }
  const all = [...sqlite, ...etcd3];
  for (const s of all) await addReader(load, s, 'gcthreadskey000000000000000');
  const startRss = new Map(all.map((s) => [s.label, rssMb(s.host.pid)]));

  if (rows.has('get-sqlite'))
    report(`get, sqlite, ${clients} clients`, await alternate(load, sqlite, getJob, 'get-sqlite'), 'get');
  if (rows.has('get-etcd3'))
    report(`get, etcd3, ${clients} clients`, await alternate(load, etcd3, getJob, 'get-etcd3'), 'get');
  if (rows.has('create'))
    report(
      `create, etcd3, ${createClients} clients`,
      await alternate(load, etcd3, createJob(createClients), 'create'),
      'create',
    );
  if (rows.has('create-1'))
    report('create, etcd3, 1 client', await alternate(load, etcd3, createJob(1), 'create-1'), 'create');
  console.log(`\nload average ${loadAverage()}`);
  console.log('RSS per server (MiB, from /proc, no collection): after start-up → after the rows');
  for (const s of all)
    console.log(`  ${s.label.padEnd(32)} ${fmt(startRss.get(s.label)!)} → ${fmt(rssMb(s.host.pid))}`);

  if (rows.has('memory')) {
    console.log(
      `\nmemory: ${objects} Users created on each sqlite server (16 clients), cached by its watch cache`,
    );
    for (const s of sqlite) {
      const before = await s.host.call<MemoryUsage>({ memory: true });
      const rssBefore = rssMb(s.host.pid);
      const r = await job(load, {
        kind: 'create-users-count',
        target: s.admin,
        namePrefix: 'cached',
        concurrency: 16,
        count: objects,
      });
      const after = await s.host.call<MemoryUsage>({ memory: true });
      console.log(
        `  ${s.label.padEnd(32)} heap per object ${fmt((after.heapUsed - before.heapUsed) / objects)} B; ` +
          `live heap ${fmt(after.heapUsed / 2 ** 20, 1)} MiB; RSS ${fmt(rssBefore)} → ${fmt(rssMb(s.host.pid))} MiB` +
          (r.errors > 0 ? `; ${r.errors} errors (first: ${r.firstError ?? '?'})` : ''),
      );
    }
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  for (const e of etcds) await e.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
