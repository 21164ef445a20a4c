// node dist/hack/bench/heap-growth-ab.js [--seconds S] [--rounds R] [--clients N]
//                                       [--users N] [--keys N] [--teams N]
//                                       [--warmup-seconds S] [--idle-seconds S]
//                                       [--settings="--heap-growing-percent=0;--heap-growing-percent=100;--heap-growing-percent=50"]
// node dist/hack/bench/heap-growth-ab.js --cached 100000 [--idle-seconds S] [--settings ...]
//
// A fixed old-generation growth factor against V8's own growing modes, in one run
// (docs/performance/fixed-old-generation-growth-factor.md). For every setting (`;`-separated; `default` = the
// server's node flags alone, anything else is added after them, so the last of a V8
// flag wins: `--heap-growing-percent=0` gives V8's own growing back), two sqlite servers started alike (server-host.ts), each with the
// authz-scale row's reader (a plain User with one key, in team-0, reading their own
// User, as suite.ts sets every side up):
//
//   <setting>/seeded     then seeded as suite.ts seeds the row (1,000 Users, 10,000
//                        access keys, 100 Teams; the three seeded servers at once)
//   <setting>/unseeded   nothing more
//
// After one unmeasured window each, all servers take turns at 32 clients' gets in R
// rotated rounds (rounds.ts roundOrder(), all settled before every window). Per window:
// CPU µs per get of the server process (process.cpuUsage), gets/s, collections per
// 1,000 gets by kind and their pause (gc-stats.ts), every collection's pause for a p99,
// and the old generation's used bytes at the window's end (no collection forced).
// Then per setting, on the unseeded server: R rotated windows of User creates (CPU µs a
// create). Then RSS and old generation after the load, and again after an idle spell of
// all servers together (no collection forced: what V8's memory reducer gives back).
//
// `--cached N` measures only memory with N cached objects instead, as the memory group
// seeds them (suite.ts: Users created through the registry in the server's process):
// one server per setting, seeded at once; RSS, committed heap and old generation after
// the seeding and after the idle spell (no collection forced), then the live heap and
// RSS after two full collections (memory.ts).
//
// Reported per setting: the authz row (seeded over unseeded, median of the round
// ratios of CPU per get and of gets/s), CPU per get on the unseeded server (the plain
// get row's shape), CPU per create, mark-compacts per 1,000 gets, pauses, memory.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import type { GcStats } from './gc-stats.js';
import { READER_PATH, addReader, cpuOf, job, request, seedTeamsAndKeys, settle, teamBody } from './get-sides.js';
import type { HttpTarget, LoadResult } from './load.js';
import { API_PATH } from './objects.js';
import { median, roundOrder } from './rounds.js';
import type { HostStarted } from './server-host.js';
import type { ThreadRoles } from './thread-roles.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '4' },
    clients: { type: 'string', default: '32' },
    users: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '10000' },
    teams: { type: 'string', default: '100' },
    'warmup-seconds': { type: 'string', default: '10' },
    'idle-seconds': { type: 'string', default: '30' },
    cached: { type: 'string', default: '0' },
    settings: { type: 'string', default: '--heap-growing-percent=0;--heap-growing-percent=100;--heap-growing-percent=50' },
  },
});
const ms = Number(args.seconds) * 1000;
const clients = Number(args.clients);
const rounds = Number(args.rounds);
const settings = args.settings.split(';').map((s) => s.trim());
const dir = mkdtempSync(join(tmpdir(), 'heap-growth-ab-'));
const children: Child[] = [];
const readerPath = READER_PATH;

interface Server {
  readonly label: string;
  readonly host: Child;
  readonly admin: HttpTarget;
  readonly reader: HttpTarget;
  readonly pid: number;
}

async function startServer(load: Child, label: string, setting: string): Promise<Server> {
  const nodeFlags = setting === 'default' ? [] : setting.split(/\s+/);
  const host = Child.start(label, 'server-host', { logFile: join(dir, `${label.replace('/', '-')}.log`), gc: true, nodeFlags });
  children.push(host);
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, label.replace(/\W/g, '-')), '--storage-backend', 'sqlite'] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  const reader = await addReader(load, admin, label);
  const { pid } = await host.call<ThreadRoles>({ threads: true });
  return { label, host, admin, reader, pid };
}

interface Window {
  readonly ops: number;
  readonly perSecond: number;
  readonly cpu: number;
  readonly markCompacts: number;
  readonly markCompactMs: number;
  readonly scavenges: number;
  readonly pauses: readonly number[];
  readonly oldMb: number;
}

const perThousand = (a: GcStats, b: GcStats, kind: string, of: 'counts' | 'ms', n: number): number =>
  (((b[of][kind] ?? 0) - (a[of][kind] ?? 0)) * 1000) / n;

async function window(load: Child, s: Server, kind: 'get' | 'create', durationMs: number, tag = ''): Promise<Window> {
  const gc0 = await s.host.call<GcStats>({ gcStats: true });
  const cpu0 = await cpuOf(s.host);
  const r: LoadResult =
    kind === 'get'
      ? await job(load, { kind: 'get', target: s.reader, paths: [readerPath], concurrency: clients, warmupMs: 0, durationMs })
      : await job(load, { kind: 'create-users', target: s.admin, namePrefix: `c${tag}-`, concurrency: clients, warmupMs: 0, durationMs });
  const cpu = (await cpuOf(s.host)) - cpu0;
  const gc1 = await s.host.call<GcStats>({ gcStats: true });
  if (r.errors > 0) process.stderr.write(`${s.label}: ${r.errors} errors\n`);
  const n = Math.max(1, r.operations);
  return {
    ops: r.operations,
    perSecond: r.throughput,
    cpu: cpu / n,
    markCompacts: perThousand(gc0, gc1, 'mark-sweep', 'counts', n),
    markCompactMs: perThousand(gc0, gc1, 'mark-sweep', 'ms', n) + perThousand(gc0, gc1, 'incremental', 'ms', n),
    scavenges: perThousand(gc0, gc1, 'scavenge', 'counts', n),
    pauses: gc1.pausesMs,
    oldMb: (gc1.spaces['old_space'] ?? 0) / 2 ** 20,
  };
}

/** The process's resident set now, MiB (no collection forced). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

async function memoryNow(s: Server): Promise<string> {
  const gc = await s.host.call<GcStats>({ gcStats: true });
  return `old ${f1((gc.spaces['old_space'] ?? 0) / 2 ** 20)} MiB, heap ${f1(gc.totalHeapBytes / 2 ** 20)} MiB committed, RSS ${f1(rssMb(s.pid))} MiB`;
}

const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
const p99 = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? 0;
const spread = (xs: readonly number[]): string => `${f1(Math.min(...xs))}-${f1(Math.max(...xs))}`;

/** `--cached N`: memory with N cached objects on one server per setting. */
async function cachedMemory(load: Child, count: number): Promise<void> {
  const servers = await Promise.all(settings.map((setting) => startServer(load, `${setting}/cached`, setting)));
  const t0 = performance.now();
  await Promise.all(servers.map((s) => s.host.call({ seedUsers: { prefix: 'scale', from: 0, count, concurrency: 8 } })));
  console.log(`seeded ${count} Users on ${servers.length} servers in ${f1((performance.now() - t0) / 1000)} s`);
  const seededNow = await Promise.all(servers.map(memoryNow));
  await new Promise((r) => setTimeout(r, Number(args['idle-seconds']) * 1000));
  const idle = await Promise.all(servers.map(memoryNow));
  console.log(`memory with ${count} cached objects (no collection forced): after the seeding / after ${args['idle-seconds']} s idle / after two full collections:`);
  for (const [i, s] of servers.entries()) {
    const live = await s.host.call<{ heapUsed: number; rss: number }>({ memory: true });
    console.log(`  ${s.label.padEnd(36)} ${seededNow[i]} / ${idle[i]} / live ${f1(live.heapUsed / 2 ** 20)} MiB, RSS ${f1(live.rss / 2 ** 20)} MiB`);
  }
}

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  if (Number(args.cached) > 0) return cachedMemory(load, Number(args.cached));
  const sizes = { users: Number(args.users), keys: Number(args.keys), teams: Number(args.teams) };
  const pairs: { setting: string; seeded: Server; unseeded: Server }[] = [];
  for (const setting of settings) {
    const seeded = await startServer(load, `${setting}/seeded`, setting);
    const unseeded = await startServer(load, `${setting}/unseeded`, setting);
    pairs.push({ setting, seeded, unseeded });
  }
  // team-0 a second after the reader (managedFields are ordered in whole seconds), as suite.ts does.
  await new Promise((r) => setTimeout(r, 1100));
  for (const p of pairs) await request(load, p.unseeded.admin, 'POST', `${API_PATH}/teams`, teamBody('team-0', ['reader']));
  const t0 = performance.now();
  await Promise.all(
    pairs.map(async ({ seeded }) => {
      await job(load, { kind: 'create-users-count', target: seeded.admin, namePrefix: 'member', concurrency: 8, count: sizes.users });
      await seedTeamsAndKeys(load, seeded.admin, sizes, ['reader']);
    }),
  );
  console.log(`seeded ${sizes.users} users, ${sizes.teams} teams, ${sizes.keys} keys on ${pairs.length} servers in ${f1((performance.now() - t0) / 1000)} s`);
  const servers = pairs.flatMap((p) => [p.seeded, p.unseeded]);
  for (const s of servers) {
    await settle(s.host);
    await window(load, s, 'get', Number(args['warmup-seconds']) * 1000);
  }
  const gets = new Map<string, Window[]>(servers.map((s) => [s.label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const which of roundOrder(servers.length, round)) {
      const s = servers[which]!;
      await Promise.all(servers.map((x) => settle(x.host)));
      gets.get(s.label)!.push(await window(load, s, 'get', ms));
    }
    process.stderr.write(`get round ${round + 1}/${rounds}\n`);
  }
  const afterLoad = new Map<string, string>();
  for (const s of servers) afterLoad.set(s.label, await memoryNow(s));
  const creates = new Map<string, Window[]>(pairs.map((p) => [p.setting, []]));
  for (let round = 0; round < rounds; round++) {
    for (const which of roundOrder(pairs.length, round)) {
      const p = pairs[which]!;
      await settle(p.unseeded.host);
      creates.get(p.setting)!.push(await window(load, p.unseeded, 'create', ms, String(round)));
    }
    process.stderr.write(`create round ${round + 1}/${rounds}\n`);
  }
  const afterCreates = new Map<string, string>();
  for (const p of pairs) afterCreates.set(p.setting, await memoryNow(p.unseeded));
  await new Promise((r) => setTimeout(r, Number(args['idle-seconds']) * 1000));
  const afterIdle = new Map<string, string>();
  for (const s of servers) afterIdle.set(s.label, await memoryNow(s));

  console.log(`gets of the reader's own User, ${clients} clients, sqlite, ${rounds} rotated rounds of ${ms / 1000} s; medians (spread):`);
  for (const s of servers) {
    const ws = gets.get(s.label)!;
    const m = (f: (w: Window) => number): number => median(ws.map(f));
    console.log(
      `  ${s.label.padEnd(38)} ${f1(m((w) => w.perSecond)).padStart(7)} gets/s, CPU ${f1(m((w) => w.cpu))} µs/get ` +
        `(${spread(ws.map((w) => w.cpu))}); MC/1k ${f2(m((w) => w.markCompacts))} (${ws.map((w) => f2(w.markCompacts)).join(' ')}), ` +
        `MC+incr ms/1k ${f1(m((w) => w.markCompactMs))}, scav/1k ${f2(m((w) => w.scavenges))}; pause p99 ` +
        `${f1(p99(ws.flatMap((w) => w.pauses)))} ms, max ${f1(Math.max(0, ...ws.flatMap((w) => w.pauses)))} ms; old at window end ${f1(m((w) => w.oldMb))} MiB`,
    );
  }
  console.log('the authz row per setting (seeded over unseeded, median of the round ratios):');
  for (const p of pairs) {
    const a = gets.get(p.seeded.label)!;
    const b = gets.get(p.unseeded.label)!;
    const ratio = (f: (w: Window) => number): string => f2(median(a.map((w, i) => f(w) / f(b[i]!))));
    console.log(`  ${p.setting.padEnd(30)} CPU ${ratio((w) => w.cpu)}x, gets/s ${ratio((w) => w.perSecond)}x (by round CPU ${a.map((w, i) => f2(w.cpu / b[i]!.cpu)).join(' ')})`);
  }
  console.log(`User creates on the unseeded servers, ${clients} clients, ${rounds} rotated rounds of ${ms / 1000} s:`);
  for (const p of pairs) {
    const ws = creates.get(p.setting)!;
    console.log(
      `  ${p.setting.padEnd(30)} ${f1(median(ws.map((w) => w.perSecond)))} creates/s, CPU ${f1(median(ws.map((w) => w.cpu)))} µs/create ` +
        `(${spread(ws.map((w) => w.cpu))}); MC/1k ${f2(median(ws.map((w) => w.markCompacts)))}; pause p99 ${f1(p99(ws.flatMap((w) => w.pauses)))} ms`,
    );
  }
  console.log(`memory (no collection forced): after the gets / after the creates (unseeded) / after ${args['idle-seconds']} s idle:`);
  for (const s of servers) {
    const setting = s.label.slice(0, s.label.lastIndexOf('/'));
    const created = s.label.endsWith('/unseeded') ? ` / ${afterCreates.get(setting)}` : '';
    console.log(`  ${s.label.padEnd(38)} ${afterLoad.get(s.label)}${created} / ${afterIdle.get(s.label)}`);
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
