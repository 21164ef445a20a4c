// node dist/hack/bench/create-https.js [--base DIR] [--seconds S] [--rounds R] [--clients 64,1]
//                                     [--profile DIR] [--no-raw]
//
// What a create costs the server over HTTPS, the way the harness's create rows make
// it (suite.ts: ~1 KiB Users POSTed by keep-alive HTTPS clients with a bearer token,
// load.ts's 'create-users' job, etcd3 backend), as an A/B of two builds in one run.
// The server (server-host.ts: the same options, assembly and startServer as
// cmd/apiserver) runs in a child of its own, the load in another, so a server's CPU
// per create is its own process.cpuUsage() over the timed window divided by the
// creates it answered. Beside them, raw etcd puts of the same value size at the same
// concurrency (the harness's baseline, `etcd-put`; --no-raw leaves them out).
// The server, the load and etcd share the machine's cores, so etcd's CPU per operation
// counts too: each side (each server, and the raw puts) has a loopback etcd of its
// own, whose user + system time (/proc/<pid>/stat, 10 ms ticks) over the window is
// that side's alone (no other server's watches see its writes) and printed beside.
// Each server's garbage collection too (gc-stats.ts): pause time per operation and
// scavenges per 1,000 operations (each scavenge empties a young generation that
// fills at a fixed size, so this follows the bytes a create allocates).
//
// `--base DIR` adds a server forked from another build's dist/hack/bench (e.g. a copy
// of dist/ built from the commit before a change, kept inside the worktree so it
// resolves the same node_modules: `cp -r dist .tmp/base/`, then `--base
// .tmp/base/dist/hack/bench`). Rounds alternate the sides (A, B, raw, then B, raw, A, ...), and
// for each client count the median round counts; the CPU ratio of the two builds is
// taken round by round (neighbours in time see the same load) and its median printed.
// `--server-flags=--max-semi-space-size=64` starts this build's server with more node
// flags (with `--base` naming this same build: an A/B of the flags alone).
// `--server-args='--log-level warn'` gives this build's server more apiserver flags
// (with `--base` naming this same build: an A/B of the flags alone).
// `--kind keys` creates OwnedAccessKeys of one User instead of Users (load.ts's
// 'create-access-keys', the administrator's token): a key's create also reads its
// owner (create-calls.ts counts the calls of each kind).
// `--profile DIR` writes a V8 CPU profile of each server's last window at each client
// count (summarise with profile-summary.js).

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import type { GcStats } from './gc-stats.js';
import { etcdPidsOfThisProcess, processCpuMicros } from './process-cpu.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import type { HostStarted } from './server-host.js';
import { API_PATH, userBody } from './objects.js';

/** The User whose keys `--kind keys` creates. */
const KEY_OWNER = 'bench-key-owner';

/** Stored size of one bench User (objects.ts aims at ~1 KiB), as the harness puts it raw. */
const VALUE_SIZE = 1024;

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '64,1' },
    profile: { type: 'string' },
    'no-raw': { type: 'boolean', default: false },
    'server-flags': { type: 'string' },
    'server-args': { type: 'string' },
    kind: { type: 'string', default: 'users' },
  },
});

const keys = args.kind === 'keys';

interface Side {
  readonly label: string;
  /** The etcd this side alone writes to (so its CPU over a window is this side's). */
  readonly etcd: RunningEtcd;
  /** The server's process; none for the raw puts, whose CPU is the load's. */
  readonly host?: Child;
  readonly job: (concurrency: number, ms: number, round: number) => Job;
}

interface Window {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerOp: number;
  /** etcd's CPU (user + system, from /proc) over the window, per operation. */
  readonly etcdCpuUsPerOp: number;
  /** The server's garbage collection pauses (all kinds) over the window, per operation. */
  readonly gcUsPerOp: number;
  /** Scavenges (young-generation collections) per 1,000 operations: allocation per create. */
  readonly scavengesPer1k: number;
  readonly errors: number;
}

const dir = mkdtempSync(join(tmpdir(), 'create-https-'));
const children: Child[] = [];

interface RunningEtcd {
  readonly instance: EtcdInstance;
  readonly pid: number;
}
const etcds: RunningEtcd[] = [];

/** A loopback etcd of its own, and the pid of its process (for its CPU time). */
async function ownEtcd(): Promise<RunningEtcd> {
  const known = new Set(etcdPidsOfThisProcess());
  const instance = await startEtcd();
  const pid = etcdPidsOfThisProcess().find((p) => !known.has(p));
  if (pid === undefined) {
    await instance.stop();
    throw new Error('cannot find the etcd process this bench started');
  }
  const running = { instance, pid };
  etcds.push(running);
  return running;
}

async function serverSide(
  load: Child,
  label: string,
  benchDir?: string,
  nodeFlags?: readonly string[],
  serverArgs: readonly string[] = [],
): Promise<Side> {
  const etcd = await ownEtcd();
  const host = Child.start(label, 'server-host', {
    logFile: join(dir, `${label}.log`),
    ...(benchDir ? { fromDir: benchDir } : {}),
    ...(nodeFlags ? { nodeFlags } : {}),
  });
  children.push(host);
  const storage = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.instance.endpoint];
  const args = ['--secure-port', '0', '--data-dir', join(dir, label), ...storage, ...serverArgs];
  const started = await host.call<HostStarted>({ start: { args } });
  const target: HttpTarget = { origin: started.origin, token: started.token };
  if (keys) {
    const path = `${API_PATH}/users`;
    await load.call<LoadResult>({
      job: { kind: 'request', target, method: 'POST', path, body: userBody(KEY_OWNER) },
    });
  }
  return {
    label,
    etcd,
    host,
    job: (concurrency, ms, round) => {
      const common = {
        target,
        namePrefix: `${label}-${concurrency}-r${round}`,
        concurrency,
        warmupMs: 0,
        durationMs: ms,
      };
      return keys
        ? { kind: 'create-access-keys', user: KEY_OWNER, ...common }
        : { kind: 'create-users', ...common };
    },
  };
}

async function measure(
  load: Child,
  side: Side,
  concurrency: number,
  ms: number,
  round: number,
): Promise<Window> {
  const gcBefore = await side.host?.call<GcStats>({ gcStats: true });
  const before = side.host ? await side.host.cpuMicros() : 0;
  const etcdBefore = processCpuMicros(side.etcd.pid);
  const r = await load.call<LoadResult>({ job: side.job(concurrency, ms, round) });
  const etcdUsed = processCpuMicros(side.etcd.pid) - etcdBefore;
  const used = side.host ? (await side.host.cpuMicros()) - before : NaN;
  const gcAfter = await side.host?.call<GcStats>({ gcStats: true });
  const sum = (xs: Record<string, number> | undefined): number =>
    Object.values(xs ?? {}).reduce((a, b) => a + b, 0);
  const gcMs = gcAfter ? sum(gcAfter.ms) - sum(gcBefore?.ms) : NaN;
  const scavenges = gcAfter ? (gcAfter.counts['scavenge'] ?? 0) - (gcBefore?.counts['scavenge'] ?? 0) : NaN;
  return {
    perSecond: r.throughput,
    p50Ms: r.latency.p50Ms,
    p99Ms: r.latency.p99Ms,
    cpuUsPerOp: r.operations > 0 ? used / r.operations : NaN,
    etcdCpuUsPerOp: r.operations > 0 ? etcdUsed / r.operations : NaN,
    gcUsPerOp: r.operations > 0 ? (gcMs * 1000) / r.operations : NaN,
    scavengesPer1k: r.operations > 0 ? (scavenges * 1000) / r.operations : NaN,
    errors: r.errors,
  };
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const ms = Number(args.seconds) * 1000;
  const rounds = Number(args.rounds);
  const clientCounts = args.clients.split(',').map(Number);
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  try {
    const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
    children.push(load);
    const sides: Side[] = [];
    if (args.base) sides.push(await serverSide(load, 'base', args.base));
    const flags = args['server-flags']?.split(' ').filter((f) => f !== '');
    const serverArgs = args['server-args']?.split(' ').filter((f) => f !== '');
    sides.push(await serverSide(load, 'server', undefined, flags, serverArgs));
    if (!args['no-raw']) {
      const etcd = await ownEtcd();
      sides.push({
        label: 'raw put',
        etcd,
        job: (concurrency, ms) => ({
          kind: 'etcd-put',
          endpoint: etcd.instance.endpoint,
          valueSize: VALUE_SIZE,
          concurrency,
          warmupMs: 0,
          durationMs: ms,
        }),
      });
    }
    // Warm every side (JIT, connections, the users cache) before measuring.
    for (const s of sides) for (const c of clientCounts) await measure(load, s, c, 1000, -1);
    const results = new Map<string, Window[]>();
    const key = (label: string, c: number): string => `${label}@${c}`;
    for (let round = 0; round < rounds; round++) {
      const order = sides.map((_, j) => sides[(round + j) % sides.length]!);
      for (const c of clientCounts) {
        for (const s of order) {
          const profiled = round === rounds - 1 && args.profile !== undefined && s.host !== undefined;
          if (profiled) await s.host!.call({ profile: { start: true } });
          const w = await measure(load, s, c, ms, round);
          if (profiled) {
            const file = join(args.profile!, `create-https-${s.label}-c${c}.cpuprofile`);
            await s.host!.call({ profile: { stop: file } });
            console.log(`profile: ${file}`);
          }
          const list = results.get(key(s.label, c)) ?? [];
          list.push(w);
          results.set(key(s.label, c), list);
        }
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
    const what = args.kind === 'keys' ? `OwnedAccessKeys of one User` : '~1 KiB Users';
    console.log(`creates of ${what} over HTTPS (etcd3), ${rounds} rounds of ${args.seconds} s, median:`);
    console.log(
      'side        clients  per second   p50 ms   p99 ms   etcd CPU µs/op (by round)   server CPU µs/op (by round)',
    );
    for (const c of clientCounts) {
      for (const s of sides) {
        const ws = results.get(key(s.label, c)) ?? [];
        const errors = ws.reduce((n, w) => n + w.errors, 0);
        console.log(
          `${s.label.padEnd(10)} ${String(c).padStart(8)} ${median(ws.map((w) => w.perSecond))
            .toFixed(0)
            .padStart(11)} ` +
            `${median(ws.map((w) => w.p50Ms))
              .toFixed(2)
              .padStart(8)} ${median(ws.map((w) => w.p99Ms))
              .toFixed(1)
              .padStart(8)}   ` +
            `${median(ws.map((w) => w.etcdCpuUsPerOp)).toFixed(0)} (${ws.map((w) => w.etcdCpuUsPerOp.toFixed(0)).join(', ')})   ` +
            (s.host
              ? `${median(ws.map((w) => w.cpuUsPerOp)).toFixed(0)} (${ws.map((w) => w.cpuUsPerOp.toFixed(0)).join(', ')})` +
                `; GC ${median(ws.map((w) => w.gcUsPerOp)).toFixed(0)} µs/op, ` +
                `${median(ws.map((w) => w.scavengesPer1k)).toFixed(1)} scavenges per 1,000`
              : '–') +
            (errors > 0 ? `; ${errors} errors` : ''),
        );
      }
      if (args.base) {
        const a = results.get(key('base', c)) ?? [];
        const b = results.get(key('server', c)) ?? [];
        const ratios = b.map((w, i) => w.cpuUsPerOp / (a[i]?.cpuUsPerOp ?? NaN));
        console.log(
          `  server/base CPU per create at ${c} clients, by round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}x)`,
        );
        const p50Ratios = b.map((w, i) => w.p50Ms / (a[i]?.p50Ms ?? NaN));
        console.log(
          `  server/base p50 at ${c} clients, by round: ${p50Ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(p50Ratios).toFixed(2)}x)`,
        );
        const etcdRatios = b.map((w, i) => w.etcdCpuUsPerOp / (a[i]?.etcdCpuUsPerOp ?? NaN));
        console.log(
          `  etcd's CPU per create, server/base, at ${c} clients, by round: ${etcdRatios.map((x) => x.toFixed(2)).join(', ')} (median ${median(etcdRatios).toFixed(2)}x)`,
        );
      }
    }
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    for (const e of etcds) await e.instance.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
