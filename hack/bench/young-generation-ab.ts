// node dist/hack/bench/young-generation-ab.js [--rounds R] [--seconds S] [--clients N]
//        [--create-clients N] [--rows get-sqlite,get-etcd3,create,authz,idle] [--idle-seconds S]
//        [--users N] [--keys N] [--teams N] [--candidates "label=flags;label=flags;..."]
//
// Which V8 young-generation setting the server should run with: one run, every candidate
// a set of node flags given to servers that are otherwise alike (server-host.ts, the
// same options and startServer as cmd/apiserver), rows measured in rounds that visit
// the candidates in a rotated order (neighbours in time see the same machine load).
// A server host starts with the server's own flags (SERVER_NODE_FLAGS, pkg/server/
// node-flags.ts) and then a candidate's, which override them (a V8 flag's last value
// wins; 0 is V8's "unset"). The default candidates:
//
//   default         --min-semi-space-size=0 --max-semi-space-size=0 (0 is V8's "unset"):
//                   V8's own sizing: a semi-space starts at 1 MiB and doubles after a
//                   scavenge once more bytes have survived since the last growth than it
//                   holds (up to 16 MiB); a full collection at low allocation throughput
//                   (or the memory reducer's, once idle) shrinks it back
//   fixed-8         --min-semi-space-size=8 --max-semi-space-size=8
//   fixed-16        --min-semi-space-size=16 --max-semi-space-size=16 (16 = V8's default
//                   maximum): the server's flags since this comparison
//   max-32          --min-semi-space-size=0 --max-semi-space-size=32 (grows further,
//                   starts and shrinks as default)
//   min-16-max-64   --min-semi-space-size=16 --max-semi-space-size=64
//
// Rows, each a server of every candidate (an etcd of its own per etcd3 server):
//
//   get-sqlite  a plain user's get of their own User (suite.ts's get rows), N clients
//   get-etcd3   the same on etcd3
//   create      ~1 KiB Users POSTed by 64 clients (the create row), on the etcd3 servers
//   authz       suite.ts's authorization-at-scale pair: a server seeded with 1,000 Users,
//               10,000 access keys and 100 Teams (the reader in the first) against the
//               candidate's unseeded get-sqlite server, windows back to back; the row's
//               figure is the seeded server's CPU per get over the unseeded one's
//   idle        every server left alone for --idle-seconds after the rows: RSS, heap and
//               CPU ms per second
//
// Per window: the server's own process.cpuUsage() over the window per operation,
// scavenges and GC pause per 1,000 operations (gc-stats.ts), and the young
// generation's capacity (one semi-space) at the window's end. No full collection is
// forced between windows (a production server has none; a forced one shrinks V8's own
// young generation and would bias the default). RSS is read from /proc without a
// collection; the live heap (after a full one) only at the very end.

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
import { cpuOf, job, median, seedTeamsAndKeys } from './get-sides.js';
import type { Job } from './load.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '32' },
    'create-clients': { type: 'string', default: '64' },
    rows: { type: 'string', default: 'get-sqlite,get-etcd3,create,authz,idle' },
    'idle-seconds': { type: 'string', default: '20' },
    users: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '10000' },
    teams: { type: 'string', default: '100' },
    candidates: {
      type: 'string',
      default:
        'default=--min-semi-space-size=0 --max-semi-space-size=0;fixed-8=--min-semi-space-size=8 --max-semi-space-size=8;' +
        'fixed-16=--min-semi-space-size=16 --max-semi-space-size=16;max-32=--min-semi-space-size=0 --max-semi-space-size=32;' +
        'min-16-max-64=--min-semi-space-size=16 --max-semi-space-size=64',
    },
  },
});

const candidates = parseCandidates(args.candidates);
const rows = new Set(args.rows.split(','));
const rounds = Number(args.rounds);
const ms = Number(args.seconds) * 1000;
const clients = Number(args.clients);
const createClients = Number(args['create-clients']);
const dir = mkdtempSync(join(tmpdir(), 'young-gen-'));
const children: Child[] = [];
const etcds: EtcdInstance[] = [];

const startServer = (label: string, flags: readonly string[], storage: string[]): Promise<Server> =>
  startFlaggedServer(dir, children, label, flags, storage);

interface Window {
  readonly ops: number;
  readonly perSecond: number;
  readonly cpuUsPerOp: number;
  readonly scavengesPer1k: number;
  readonly gcMsPer1k: number;
  /** One semi-space's capacity at the window's end, MiB. */
  readonly semiSpaceMb: number;
  readonly errors: number;
  readonly firstError?: string;
}

const sum = (xs: Record<string, number> | undefined): number =>
  Object.values(xs ?? {}).reduce((a, b) => a + b, 0);

const semiSpaceMb = (g: GcStats): number => g.semiSpaceBytes / 2 ** 20;

async function window(load: Child, server: Server, j: Job): Promise<Window> {
  const g0 = await server.host.call<GcStats>({ gcStats: true });
  const c0 = await cpuOf(server.host);
  const r = await job(load, j);
  const used = (await cpuOf(server.host)) - c0;
  const g1 = await server.host.call<GcStats>({ gcStats: true });
  const ops = r.operations;
  const per1k = (n: number): number => (ops > 0 ? (n * 1000) / ops : NaN);
  return {
    ops,
    perSecond: r.throughput,
    cpuUsPerOp: ops > 0 ? used / ops : NaN,
    scavengesPer1k: per1k((g1.counts['scavenge'] ?? 0) - (g0.counts['scavenge'] ?? 0)),
    gcMsPer1k: per1k(sum(g1.ms) - sum(g0.ms)),
    semiSpaceMb: semiSpaceMb(g1),
    errors: r.errors,
    ...(r.firstError !== undefined ? { firstError: r.firstError } : {}),
  };
}

const getJob = (s: Server): Job => readerGetJob(s, clients, ms);

// Every window creates names of its own (a window reusing another's would only conflict).
let createWindows = 0;
const createJob = (s: Server): Job => ({
  kind: 'create-users',
  target: s.admin,
  namePrefix: `${s.label}-w${createWindows++}`,
  concurrency: createClients,
  warmupMs: 0,
  durationMs: ms,
});

function report(title: string, results: Map<string, Window[]>, unit: string): void {
  console.log(`\n${title}`);
  console.log(
    `  ${'candidate'.padEnd(14)} ${`CPU µs/${unit}`.padStart(12)} ${'× default'.padStart(9)} ${`${unit}/s`.padStart(8)} ` +
      `${'scav/1k'.padStart(8)} ${'GC ms/1k'.padStart(9)}  semi-space MiB at windows' end`,
  );
  const base = results.get(candidates[0]!.label) ?? [];
  for (const c of candidates) {
    const ws = results.get(c.label) ?? [];
    const ratios = ws.map((w, i) => w.cpuUsPerOp / (base[i]?.cpuUsPerOp ?? NaN));
    const errors = ws.reduce((n, w) => n + w.errors, 0);
    const firstError = ws.find((w) => w.firstError !== undefined)?.firstError;
    console.log(
      `  ${c.label.padEnd(14)} ${fmt(median(ws.map((w) => w.cpuUsPerOp))).padStart(12)} ` +
        `${fmt(median(ratios), 2).padStart(9)} ${fmt(median(ws.map((w) => w.perSecond))).padStart(8)} ` +
        `${fmt(median(ws.map((w) => w.scavengesPer1k)), 1).padStart(8)} ${fmt(median(ws.map((w) => w.gcMsPer1k)), 1).padStart(9)}  ` +
        `${ws.map((w) => fmt(w.semiSpaceMb, 0)).join(',')}` +
        `  (CPU by round: ${ws.map((w) => fmt(w.cpuUsPerOp)).join(', ')})` +
        (errors > 0 ? `; ${errors} errors (first: ${firstError ?? '?'})` : ''),
    );
  }
}

/** Rounds over `servers`, a one-second warm-up window each first. */
const alternate = (
  load: Child,
  servers: readonly Server[],
  jobOf: (s: Server) => Job,
  label: string,
): Promise<Map<string, Window[]>> =>
  alternateCandidates(
    candidates,
    servers,
    rounds,
    (s, warmUp) => window(load, s, warmUp ? ({ ...jobOf(s), durationMs: 1000 } as Job) : jobOf(s)),
    label,
  );

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  console.log(
    `young-generation A/B, ${rounds} rounds of ${args.seconds} s; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  for (const c of candidates) console.log(`  ${c.label}: ${c.flags.join(' ') || '(V8 defaults)'}`);
  const all: Server[] = [];
  const sqlite: Server[] = [];
  const etcd3: Server[] = [];
  const seeded: Server[] = [];
  const wantSqlite = rows.has('get-sqlite') || rows.has('authz');
  const wantEtcd = rows.has('get-etcd3') || rows.has('create');
  for (const c of candidates) {
    if (wantSqlite)
      sqlite.push(await startServer(`${c.label}-sqlite`, c.flags, ['--storage-backend', 'sqlite']));
    if (wantEtcd) {
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
    if (rows.has('authz'))
      seeded.push(await startServer(`${c.label}-seeded`, c.flags, ['--storage-backend', 'sqlite']));
  }
  all.push(...sqlite, ...etcd3, ...seeded);
  for (const s of [...sqlite, ...etcd3, ...seeded]) await addReader(load, s, 'younggenkey0000000000000000');
  if (rows.has('authz')) {
    const t0 = performance.now();
    const sizes = { users: Number(args.users), keys: Number(args.keys), teams: Number(args.teams) };
    await Promise.all(
      seeded.map(async (s) => {
        await job(load, {
          kind: 'create-users-count',
          target: s.admin,
          namePrefix: 'member',
          concurrency: 16,
          count: sizes.users,
        });
        await seedTeamsAndKeys(load, s.admin, sizes, ['reader']);
      }),
    );
    console.log(
      `seeded ${seeded.length} servers (${sizes.users} users, ${sizes.keys} keys, ${sizes.teams} teams each) in ${fmt((performance.now() - t0) / 1000)} s`,
    );
  }
  const startRss = new Map(all.map((s) => [s.label, rssMb(s.host.pid)]));

  if (rows.has('get-sqlite'))
    report(`get, sqlite, ${clients} clients`, await alternate(load, sqlite, getJob, 'get-sqlite'), 'get');
  if (rows.has('get-etcd3'))
    report(`get, etcd3, ${clients} clients`, await alternate(load, etcd3, getJob, 'get-etcd3'), 'get');
  if (rows.has('create'))
    report(
      `create, etcd3, ${createClients} clients`,
      await alternate(load, etcd3, createJob, 'create'),
      'create',
    );
  if (rows.has('authz')) {
    // The pair back to back, in alternating order, every candidate's pair in a rotated order.
    const pairs = candidates.map((_, i) => [sqlite[i]!, seeded[i]!] as const);
    for (const [u, s] of pairs)
      for (const x of [u, s]) await window(load, x, { ...getJob(x), durationMs: 1000 } as Job);
    const un = new Map<string, Window[]>(candidates.map((c) => [c.label, []]));
    const se = new Map<string, Window[]>(candidates.map((c) => [c.label, []]));
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < pairs.length; j++) {
        const k = (i + j) % pairs.length;
        const [u, s] = pairs[k]!;
        const label = candidates[k]!.label;
        const order = i % 2 === 0 ? [u, s] : [s, u];
        for (const x of order) (x === u ? un : se).get(label)!.push(await window(load, x, getJob(x)));
      }
      process.stderr.write(`authz: round ${i + 1}/${rounds}\n`);
    }
    report(
      'authorization at scale: unseeded sqlite servers (the pair, measured beside the seeded)',
      un,
      'get',
    );
    report('authorization at scale: seeded sqlite servers', se, 'get');
    console.log('  the row (seeded CPU per get over unseeded, by round; throughput unseeded over seeded):');
    for (const c of candidates) {
      const u = un.get(c.label)!;
      const s = se.get(c.label)!;
      const cpu = s.map((w, i) => w.cpuUsPerOp / (u[i]?.cpuUsPerOp ?? NaN));
      const tput = s.map((w, i) => w.perSecond / (u[i]?.perSecond ?? NaN));
      console.log(
        `  ${c.label.padEnd(14)} CPU ${cpu.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median(cpu), 2)}×); ` +
          `seeded/unseeded gets/s median ${fmt(median(tput), 2)}×`,
      );
    }
  }
  console.log(
    '\nmemory per server: RSS after start-up (and seeding) → after the rows → after idle; CPU idle; live heap last',
  );
  const afterRows = new Map(all.map((s) => [s.label, rssMb(s.host.pid)]));
  const idleCpu = new Map<string, number>();
  if (rows.has('idle')) {
    const c0 = new Map<string, number>();
    for (const s of all) c0.set(s.label, await cpuOf(s.host));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, Number(args['idle-seconds']) * 1000));
    const seconds = (performance.now() - t0) / 1000;
    for (const s of all) idleCpu.set(s.label, ((await cpuOf(s.host)) - c0.get(s.label)!) / 1000 / seconds);
  }
  for (const s of all) {
    const g = await s.host.call<GcStats>({ gcStats: true });
    const rssIdle = rssMb(s.host.pid);
    const live = await s.host.call<{ heapUsed: number; rss: number }>({ memory: true });
    console.log(
      `  ${s.label.padEnd(22)} RSS ${fmt(startRss.get(s.label)!)} → ${fmt(afterRows.get(s.label)!)} → ${fmt(rssIdle)} MiB; ` +
        `heap total ${fmt(g.totalHeapBytes / 2 ** 20)} MiB, semi-space ${fmt(semiSpaceMb(g))} MiB; ` +
        (idleCpu.has(s.label) ? `idle CPU ${fmt(idleCpu.get(s.label)!, 2)} ms/s; ` : '') +
        `live heap ${fmt(live.heapUsed / 2 ** 20, 1)} MiB`,
    );
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  for (const e of etcds) await e.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
