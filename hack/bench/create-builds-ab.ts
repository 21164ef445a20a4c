// node dist/hack/bench/create-builds-ab.js --builds "old=DIR,new=DIR[,...]" [--rounds R] [--seconds S]
//                                          [--clients 64,1] [--raw] [--profile DIR]
//
// Did a build make creates dearer? Two or more builds' servers created ~1 KiB Users over
// HTTPS, as the harness's create rows do (load.ts's 'create-users': keep-alive clients with
// a bearer token, the etcd3 backend), in ONE run driven by one load generator, rounds
// visiting the builds in a rotated order (A, B, C; B, C, A; ...) so that neighbours in
// time see the same machine load. Per build and client count, the median over rounds of:
// the server's CPU µs per create (its own process.cpuUsage() over the window, divided by
// the creates answered), creates/s, p50 and p99, and its etcd's CPU µs per create (each
// server has a loopback etcd of its own, so no server's watches see another's writes).
// Then each build against the first, round by round (CPU, creates/s, p50), with the
// median and the range of those ratios: a difference inside the range is the machine's.
//
// A build is `label=DIR`, DIR a build's dist/hack/bench (its server-host.js is forked from
// there, so it runs that build's pkg/; the node flags are this build's SERVER_NODE_FLAGS).
// `this` names the build this script belongs to. To build another commit beside this
// worktree (its own node_modules hard-linked, so both run the same dependencies):
//
//   git worktree add --detach /tmp/old <commit>
//   cp -al node_modules /tmp/old/ && (cd /tmp/old && npx tsc -p tsconfig.build.json)
//   node dist/hack/bench/create-builds-ab.js --builds "old=/tmp/old/dist/hack/bench,new=this" --rounds 8
//   git worktree remove --force /tmp/old
//
// Naming the same DIR twice (`a=this,b=this`) is an A/A: the method's own spread.
// `--raw` adds raw etcd puts of the same size and concurrency on an etcd of their own
// (the harness's baseline), for each round's create/put ratio. `--profile DIR` writes a
// V8 CPU profile of each server's last window at each client count (profile-summary.js).
// `--allocations` ends with one more window of each build at the first client count under
// V8's sampling heap profiler: bytes allocated per create, and the top allocating functions
// (a create's garbage is what its scavenges cost).

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import { etcdPidsOfThisProcess, processCpuMicros } from './process-cpu.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import type { HostStarted } from './server-host.js';
import type { AllocationSummary } from './allocation-profiler.js';

/** Stored size of one bench User (objects.ts aims at ~1 KiB), as the harness puts it raw. */
const VALUE_SIZE = 1024;

const { values: args } = parseArgs({
  options: {
    builds: { type: 'string', default: 'this=this' },
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '8' },
    clients: { type: 'string', default: '64,1' },
    raw: { type: 'boolean', default: false },
    profile: { type: 'string' },
    allocations: { type: 'boolean', default: false },
  },
});

/** One side of the comparison: a build's server, or the raw puts. */
interface Side {
  readonly label: string;
  readonly etcdPid: number;
  /** The server's process; none for the raw puts, whose CPU is the load generator's. */
  readonly host?: Child;
  readonly job: (concurrency: number, ms: number, round: number) => Job;
}

/** What one timed window of one side gave. */
interface Window {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerOp: number;
  readonly etcdCpuUsPerOp: number;
  readonly errors: number;
}

const dir = mkdtempSync(join(tmpdir(), 'create-builds-ab-'));
const children: Child[] = [];
const etcds: EtcdInstance[] = [];

/** A loopback etcd of its own, and its process's pid (for its CPU over a window). */
async function ownEtcd(): Promise<{ endpoint: string; pid: number }> {
  const known = new Set(etcdPidsOfThisProcess());
  const instance = await startEtcd();
  etcds.push(instance);
  const pid = etcdPidsOfThisProcess().find((p) => !known.has(p));
  if (pid === undefined) throw new Error('cannot find the etcd process this bench started');
  return { endpoint: instance.endpoint, pid };
}

function parseBuilds(spec: string): { label: string; benchDir: string }[] {
  const thisBuild = fileURLToPath(new URL('./', import.meta.url));
  const builds = spec.split(',').map((part) => {
    const at = part.indexOf('=');
    if (at <= 0) throw new Error(`--builds: "${part}" is not label=DIR`);
    const label = part.slice(0, at);
    const benchDir = part.slice(at + 1);
    return { label, benchDir: benchDir === 'this' ? thisBuild : benchDir };
  });
  if (new Set(builds.map((b) => b.label)).size !== builds.length) throw new Error('--builds: labels repeat');
  return builds;
}

async function buildSide(label: string, benchDir: string, index: number): Promise<Side> {
  const etcd = await ownEtcd();
  const host = Child.start(label, 'server-host', { logFile: join(dir, `${label}.log`), fromDir: benchDir });
  children.push(host);
  const serverArgs = ['--secure-port', '0', '--data-dir', join(dir, label)];
  const storage = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoint];
  const started = await host.call<HostStarted>({ start: { args: [...serverArgs, ...storage] } });
  const target: HttpTarget = { origin: started.origin, token: started.token };
  return {
    label,
    etcdPid: etcd.pid,
    host,
    job: (concurrency, ms, round) => ({
      kind: 'create-users',
      target,
      // Labels are the user's (e.g. a commit's); names must be DNS labels.
      namePrefix: `build${index}-${concurrency}-r${round}`,
      concurrency,
      warmupMs: 0,
      durationMs: ms,
    }),
  };
}

async function rawSide(): Promise<Side> {
  const etcd = await ownEtcd();
  return {
    label: 'raw put',
    etcdPid: etcd.pid,
    job: (concurrency, ms) => ({
      kind: 'etcd-put',
      endpoint: etcd.endpoint,
      valueSize: VALUE_SIZE,
      concurrency,
      warmupMs: 0,
      durationMs: ms,
    }),
  };
}

async function measure(
  load: Child,
  side: Side,
  concurrency: number,
  ms: number,
  round: number,
): Promise<Window> {
  const before = side.host ? await side.host.cpuMicros() : 0;
  const etcdBefore = processCpuMicros(side.etcdPid);
  const r = await load.call<LoadResult>({ job: side.job(concurrency, ms, round) });
  if (r.operations === 0)
    throw new Error(`${side.label}: no create succeeded (${r.firstError ?? 'no error reported'})`);
  const etcdUsed = processCpuMicros(side.etcdPid) - etcdBefore;
  const used = side.host ? (await side.host.cpuMicros()) - before : NaN;
  const per = (x: number): number => (r.operations > 0 ? x / r.operations : NaN);
  return {
    perSecond: r.throughput,
    p50Ms: r.latency.p50Ms,
    p99Ms: r.latency.p99Ms,
    cpuUsPerOp: per(used),
    etcdCpuUsPerOp: per(etcdUsed),
    errors: r.errors,
  };
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** "median (low–high)" of per-round ratios. */
function ratioSummary(ratios: readonly number[]): string {
  const sorted = [...ratios].sort((a, b) => a - b);
  return `${median(ratios).toFixed(2)}× (${sorted[0]?.toFixed(2)}–${sorted[sorted.length - 1]?.toFixed(2)})`;
}

function report(
  sides: readonly Side[],
  results: Map<string, Window[]>,
  clientCounts: readonly number[],
): void {
  const key = (label: string, c: number): string => `${label}@${c}`;
  console.log(
    `creates of ~1 KiB Users over HTTPS (etcd3), ${args.rounds} rounds of ${args.seconds} s, medians:`,
  );
  console.log(
    'side         clients   creates/s   p50 ms   p99 ms   etcd CPU µs/op   server CPU µs/op (by round: µs@creates/s)',
  );
  for (const c of clientCounts) {
    for (const s of sides) {
      const ws = results.get(key(s.label, c)) ?? [];
      const errors = ws.reduce((n, w) => n + w.errors, 0);
      const m = (f: (w: Window) => number, digits: number, width: number): string =>
        median(ws.map(f)).toFixed(digits).padStart(width);
      // By round, CPU per create beside creates/s: fewer creates a second share fewer wake-ups.
      const rounds = ws.map((w) => `${w.cpuUsPerOp.toFixed(0)}@${w.perSecond.toFixed(0)}/s`).join(', ');
      const cpu = s.host ? `${m((w) => w.cpuUsPerOp, 0, 6)} (${rounds})` : '–';
      console.log(
        `${s.label.padEnd(12)} ${String(c).padStart(7)} ${m((w) => w.perSecond, 0, 11)} ${m((w) => w.p50Ms, 2, 8)} ` +
          `${m((w) => w.p99Ms, 1, 8)} ${m((w) => w.etcdCpuUsPerOp, 0, 16)}   ${cpu}${errors > 0 ? `; ${errors} errors` : ''}`,
      );
    }
    const builds = sides.filter((s) => s.host);
    const first = builds[0];
    if (!first) continue;
    const a = results.get(key(first.label, c)) ?? [];
    const byRound = (b: Window[], f: (w: Window) => number): number[] =>
      b.map((w, i) => f(w) / f(a[i] ?? w)).filter((x) => Number.isFinite(x));
    for (const s of builds.slice(1)) {
      const b = results.get(key(s.label, c)) ?? [];
      console.log(
        `  ${s.label}/${first.label} at ${c} clients, median of by-round ratios (range): ` +
          `CPU per create ${ratioSummary(byRound(b, (w) => w.cpuUsPerOp))}, ` +
          `creates/s ${ratioSummary(byRound(b, (w) => w.perSecond))}, p50 ${ratioSummary(byRound(b, (w) => w.p50Ms))}`,
      );
    }
    const raw = results.get(key('raw put', c));
    if (raw) {
      for (const s of builds) {
        const ws = results.get(key(s.label, c)) ?? [];
        const tput = ws.map((w, i) => w.perSecond / (raw[i]?.perSecond ?? NaN));
        const p50 = ws.map((w, i) => w.p50Ms / (raw[i]?.p50Ms ?? NaN));
        console.log(
          `  ${s.label} against raw puts at ${c} clients, by round: throughput ${ratioSummary(tput)}, p50 ${ratioSummary(p50)}`,
        );
      }
    }
  }
}

/** One more window of each build under the sampling heap profiler: what a create allocates. */
async function allocations(
  load: Child,
  sides: readonly Side[],
  concurrency: number,
  ms: number,
): Promise<void> {
  for (const s of sides) {
    if (!s.host) continue;
    await s.host.call({ allocations: { start: true } });
    const r = await load.call<LoadResult>({ job: s.job(concurrency, ms, -2) });
    const sampled = await s.host.call<AllocationSummary>({ allocations: { stop: true } });
    const perCreate = (bytes: number): string => (bytes / Math.max(1, r.operations)).toFixed(0);
    console.log(
      `${s.label}: ${perCreate(sampled.totalBytes)} bytes allocated a create (${r.operations} creates); by function:`,
    );
    for (const [name, bytes] of sampled.byFunction.slice(0, 25))
      console.log(`  ${perCreate(bytes).padStart(7)}  ${name}`);
  }
}

async function main(): Promise<void> {
  const ms = Number(args.seconds) * 1000;
  const rounds = Number(args.rounds);
  const clientCounts = args.clients.split(',').map(Number);
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  try {
    const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
    children.push(load);
    const sides: Side[] = [];
    for (const [i, b] of parseBuilds(args.builds).entries())
      sides.push(await buildSide(b.label, b.benchDir, i));
    if (args.raw) sides.push(await rawSide());
    // Warm every side (JIT, connections, the users cache) before measuring.
    for (const s of sides) for (const c of clientCounts) await measure(load, s, c, 2000, -1);
    const results = new Map<string, Window[]>();
    for (let round = 0; round < rounds; round++) {
      const order = sides.map((_, j) => sides[(round + j) % sides.length]!);
      for (const c of clientCounts) {
        for (const s of order) {
          const profiled = round === rounds - 1 && args.profile !== undefined && s.host !== undefined;
          if (profiled) await s.host!.call({ profile: { start: true } });
          const w = await measure(load, s, c, ms, round);
          if (profiled) {
            const file = join(args.profile!, `create-builds-${s.label}-c${c}.cpuprofile`);
            await s.host!.call({ profile: { stop: file } });
            console.log(`profile: ${file}`);
          }
          const k = `${s.label}@${c}`;
          results.set(k, [...(results.get(k) ?? []), w]);
        }
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
    report(sides, results, clientCounts);
    if (args.allocations) await allocations(load, sides, clientCounts[0] ?? 64, ms);
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    for (const e of etcds) await e.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
