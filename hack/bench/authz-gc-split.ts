// node dist/hack/bench/authz-gc-split.js [--seconds S] [--rounds R] [--clients N]
//                                       [--users N] [--keys N] [--teams N]
//                                       [--idle-seconds S] [--idle-windows N] [--perf DIR]
//                                       [--warmup-seconds S] [--server-flags="--trace-gc"] [--keep-logs DIR]
//
// Where the seeded store's extra CPU per get goes (the authz-scale row: a server seeded
// with 1,000 Users, 10,000 access keys and 100 Teams costs 12-20% more CPU a get than an
// unseeded one). Three sqlite servers started alike (server-host.ts, the server's node
// flags), each with the row's reader (a plain User with one key, in `team-0`, reading
// their own User, as suite.ts and authz-twins.ts set every side up):
//
//   seeded     then seeded as suite.ts seeds the row (the reader in team-0 among 100)
//   unseeded   nothing more
//   twin       a second unseeded server: the method's noise floor on this machine
//
// They take turns at 32 clients' gets in R rotated rounds (rounds.ts roundOrder(), all
// settled before every window) and, for every window, the script reads:
//   - CPU µs per get of the server process (process.cpuUsage), and the same window split
//     by thread from /proc/<pid>/task: the main thread, libuv's pool (thread-roles.ts)
//     and V8's platform threads (the GC's parallel and concurrent tasks, the compiler);
//   - collections per 1,000 gets by kind, and the main thread's pause by kind
//     (gc-stats.ts: perf_hooks 'gc' entries: scavenge, mark-sweep = the atomic pause of
//     a mark-compact, incremental = incremental marking's steps on the main thread);
//   - the old generation's and the heap's used bytes at the window's end (no collection
//     is forced: a full one between windows would change the next window's collections);
//     the live heap after a full collection once, at the end.
// Then idle CPU by thread: the three servers left alone together for N windows.
// `--perf DIR` adds one window per server right after the rounds (not in the figures;
// before the full collection and the idle windows, which make V8 compile the path again) under
// Linux perf (`perf record -e cpu-clock`, which samples only while a thread is on a
// CPU, unlike V8's profiler): the main thread and V8's platform threads recorded
// apart, their samples classed by symbol (scavenge, marking, sweeping, compaction,
// other heap work, the compiler, the kernel, JavaScript and the rest) and printed as
// µs per get, so the threads' GC share is split by kind.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import type { GcStats } from './gc-stats.js';
import { READER_PATH, addReader, cpuOf, job, request, seedTeamsAndKeys, settle, teamBody } from './get-sides.js';
import type { HttpTarget } from './load.js';
import { API_PATH } from './objects.js';
import { cpuByThread } from './process-cpu.js';
import { median, roundOrder } from './rounds.js';
import type { HostStarted } from './server-host.js';
import type { ThreadRoles } from './thread-roles.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '6' },
    clients: { type: 'string', default: '32' },
    users: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '10000' },
    teams: { type: 'string', default: '100' },
    'idle-seconds': { type: 'string', default: '10' },
    'idle-windows': { type: 'string', default: '3' },
    perf: { type: 'string' },
    'warmup-seconds': { type: 'string', default: '20' },
    'server-flags': { type: 'string', default: '' },
    'keep-logs': { type: 'string' },
  },
});
const ms = Number(args.seconds) * 1000;
const clients = Number(args.clients);
const dir = mkdtempSync(join(tmpdir(), 'authz-gc-split-'));
const logDir = args['keep-logs'] ?? dir;
if (args['keep-logs']) mkdirSync(args['keep-logs'], { recursive: true });
const serverFlags = args['server-flags'].split(/\s+/).filter((f) => f !== '');
const children: Child[] = [];
const readerPath = READER_PATH;

interface Server {
  readonly label: string;
  readonly host: Child;
  readonly admin: HttpTarget;
  readonly reader: HttpTarget;
  roles?: ThreadRoles;
}

/** A server with the row's reader: User and key (team-0 comes later, with or without the seeding). */
async function startServer(load: Child, label: string): Promise<Server> {
  const host = Child.start(label, 'server-host', {
    logFile: join(logDir, `${label}.log`),
    gc: true,
    nodeFlags: serverFlags,
  });
  children.push(host);
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), '--storage-backend', 'sqlite'] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  const reader = await addReader(load, admin, label);
  return { label, host, admin, reader };
}

type Role = 'main' | 'v8' | 'pool';

function byRole(before: Map<number, number>, after: Map<number, number>, roles: ThreadRoles): Record<Role, number> {
  const out: Record<Role, number> = { main: 0, v8: 0, pool: 0 };
  for (const [tid, us] of after) {
    const role: Role = tid === roles.pid ? 'main' : roles.pool.includes(tid) ? 'pool' : 'v8';
    out[role] += us - (before.get(tid) ?? 0);
  }
  return out;
}

/** One window's figures, per get (GC counts and pauses per 1,000 gets). */
interface Window {
  readonly gets: number;
  readonly getsPerSecond: number;
  readonly cpu: number;
  readonly main: number;
  readonly v8: number;
  readonly pool: number;
  readonly scavenges: number;
  readonly scavengeMs: number;
  readonly markCompacts: number;
  readonly markCompactMs: number;
  readonly incremental: number;
  readonly incrementalMs: number;
  readonly oldMb: number;
  /** The heap's used bytes at the window's end (no collection forced: that would change the next window). */
  readonly heapMb: number;
}

const delta = (a: GcStats, b: GcStats, kind: string, of: 'counts' | 'ms'): number =>
  (b[of][kind] ?? 0) - (a[of][kind] ?? 0);

async function window(load: Child, s: Server, durationMs = ms): Promise<Window> {
  const roles = s.roles!;
  const gc0 = await s.host.call<GcStats>({ gcStats: true });
  const cpu0 = await cpuOf(s.host);
  const t0 = cpuByThread(roles.pid);
  const r = await job(load, {
    kind: 'get',
    target: s.reader,
    paths: [readerPath],
    concurrency: clients,
    warmupMs: 0,
    durationMs,
  });
  const t1 = cpuByThread(roles.pid);
  const cpu = (await cpuOf(s.host)) - cpu0;
  const gc1 = await s.host.call<GcStats>({ gcStats: true });
  const n = Math.max(1, r.operations);
  const split = byRole(t0, t1, roles);
  const k = (kind: string, of: 'counts' | 'ms'): number => (delta(gc0, gc1, kind, of) * 1000) / n;
  if (r.errors > 0) process.stderr.write(`${s.label}: ${r.errors} errors\n`);
  return {
    gets: r.operations,
    getsPerSecond: r.throughput,
    cpu: cpu / n,
    main: split.main / n,
    v8: split.v8 / n,
    pool: split.pool / n,
    scavenges: k('scavenge', 'counts'),
    scavengeMs: k('scavenge', 'ms'),
    markCompacts: k('mark-sweep', 'counts'),
    markCompactMs: k('mark-sweep', 'ms'),
    incremental: k('incremental', 'counts'),
    incrementalMs: k('incremental', 'ms'),
    oldMb: (gc1.spaces['old_space'] ?? 0) / 2 ** 20,
    heapMb: gc1.usedHeapBytes / 2 ** 20,
  };
}

/** What a perf sample's symbol is doing, for the GC split by kind. */
function classOf(symbol: string): string {
  if (symbol.startsWith('[k]')) return 'kernel';
  if (/Scaveng|SemiSpace/.test(symbol)) return 'scavenge';
  if (/Sweep/.test(symbol)) return 'sweeping';
  if (/Evacuat|Compactor|PointersUpdating|UpdatingItem|RecordMigratedSlot/.test(symbol)) return 'compaction';
  if (/Mark|Marking|Ephemeron|WeakObjects|Worklist/.test(symbol)) return 'marking';
  if (/compiler::|Turbofan|Maglev|OptimizedCompilationJob|Pipeline|Compile/.test(symbol)) return 'compiler';
  if (/v8::internal::(Heap|MemoryAllocator|MemoryChunk|BasicMemoryChunk|Page|LocalHeap|Safepoint|RememberedSet|SlotSet|TypedSlot|ConcurrentAllocator|PagedSpace|LargeObjectSpace|GCTracer)/.test(symbol))
    return 'other heap';
  if (/\[\.\] (0x|Builtins_|LazyCompile|Function:|JS:)/.test(symbol) || /\[\.\] \*/.test(symbol)) return 'JavaScript';
  return 'other';
}

/** perf samples of `file` by class, as fractions of all, and the top symbols. */
function perfClasses(file: string): { total: number; byClass: Map<string, number>; top: [string, number][] } {
  const out = spawnSync('perf', ['report', '-i', file, '--sort', 'sym', '--stdio', '-q', '-F', 'period,sym'], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  }).stdout;
  const byClass = new Map<string, number>();
  const top: [string, number][] = [];
  let total = 0;
  for (const line of out.split('\n')) {
    const m = /^\s*(\d+)\s+(\[.\].*)$/.exec(line);
    if (!m) continue;
    const period = Number(m[1]);
    const symbol = (m[2] as string).trim();
    total += period;
    const c = classOf(symbol);
    byClass.set(c, (byClass.get(c) ?? 0) + period);
    top.push([symbol, period]);
  }
  return { total, byClass, top: top.sort((a, b) => b[1] - a[1]).slice(0, 12) };
}

/** One more window of `s` with perf on its main thread and on its V8 threads apart. */
async function perfWindow(load: Child, s: Server, perfDir: string): Promise<void> {
  const roles = s.roles!;
  const v8 = [...cpuByThread(roles.pid).keys()].filter((t) => t !== roles.pid && !roles.pool.includes(t));
  const record = (name: string, tids: readonly number[]): { file: string; done: Promise<unknown>; stop: () => void } => {
    const file = join(perfDir, `${s.label}-${name}.data`);
    const p = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '2000', '-t', tids.join(','), '-o', file], {
      stdio: 'ignore',
    });
    return { file, done: new Promise((r) => p.once('exit', r)), stop: () => p.kill('SIGINT') };
  };
  await settle(s.host);
  const recorders = [record('main', [roles.pid]), record('v8', v8)];
  await new Promise((r) => setTimeout(r, 300));
  const t0 = cpuByThread(roles.pid);
  const r = await job(load, { kind: 'get', target: s.reader, paths: [readerPath], concurrency: clients, warmupMs: 0, durationMs: ms });
  const split = byRole(t0, cpuByThread(roles.pid), roles);
  for (const x of recorders) x.stop();
  await Promise.all(recorders.map((x) => x.done));
  const n = Math.max(1, r.operations);
  for (const [name, x, us] of [
    ['main thread', recorders[0]!, split.main],
    ['V8 platform threads', recorders[1]!, split.v8],
  ] as const) {
    const { total, byClass, top } = perfClasses(x.file);
    const per = (period: number): string => ((total > 0 ? period / total : 0) * (us / n)).toFixed(1);
    console.log(
      `  ${s.label}, ${name}: ${(us / n).toFixed(1)} µs/get; by class (µs/get): ` +
        [...byClass.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([c, p]) => `${c} ${per(p)}`)
          .join(', '),
    );
    for (const [symbol, p] of top.slice(0, 8)) console.log(`      ${per(p).padStart(6)}  ${symbol.slice(0, 110)}`);
  }
}

const f0 = (x: number): string => x.toFixed(0);
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const sizes = { users: Number(args.users), keys: Number(args.keys), teams: Number(args.teams) };
  const servers: Server[] = [];
  for (const label of ['seeded', 'unseeded', 'twin']) servers.push(await startServer(load, label));
  const [seeded] = servers as [Server];
  // team-0 a second after the reader (managedFields are ordered in whole seconds), as suite.ts does.
  await new Promise((r) => setTimeout(r, 1100));
  for (const s of servers.slice(1)) {
    await request(load, s.admin, 'POST', `${API_PATH}/teams`, teamBody('team-0', ['reader']));
  }
  const t0 = performance.now();
  await job(load, { kind: 'create-users-count', target: seeded.admin, namePrefix: 'member', concurrency: 16, count: sizes.users });
  await seedTeamsAndKeys(load, seeded.admin, sizes, ['reader']);
  console.log(
    `seeded ${sizes.users} users, ${sizes.teams} teams, ${sizes.keys} keys in ${f0((performance.now() - t0) / 1000)} s`,
  );
  const bodies = await Promise.all(servers.map((s) => request(load, s.reader, 'GET', readerPath)));
  console.log(`the reader's get: ${bodies.map((b, i) => `${servers[i]!.label} ${b.length} bytes`).join(', ')}`);
  for (const s of servers) {
    await settle(s.host);
    s.roles = await s.host.call<ThreadRoles>({ threads: true });
  }
  // One long unmeasured window each: the JIT, the connections, and the old generation
  // brought to the state a loaded server keeps (the seeded server ends its seeding with
  // room to its next full collection that the others lack; gets fill it).
  const warmupMs = Number(args['warmup-seconds']) * 1000;
  for (const s of servers) {
    await settle(s.host);
    await window(load, s, warmupMs);
  }
  const rounds = Number(args.rounds);
  const results = new Map<string, Window[]>(servers.map((s) => [s.label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const which of roundOrder(servers.length, round)) {
      const s = servers[which]!;
      await Promise.all(servers.map((x) => settle(x.host)));
      results.get(s.label)!.push(await window(load, s));
    }
    process.stderr.write(`round ${round + 1}/${rounds}\n`);
  }

  console.log(`a plain user's get of their own User, ${clients} clients, sqlite, ${rounds} rounds of ${ms / 1000} s; medians of the rounds:`);
  console.log(
    '  server     gets/s  CPU µs/get   main    V8    pool | scav/1k  scav ms/1k  MC/1k  MC ms/1k  incr/1k  incr ms/1k | old MiB  heap MiB',
  );
  for (const s of servers) {
    const ws = results.get(s.label)!;
    const m = (f: (w: Window) => number): number => median(ws.map(f));
    console.log(
      `  ${s.label.padEnd(9)} ${f0(m((w) => w.getsPerSecond)).padStart(7)} ${f1(m((w) => w.cpu)).padStart(11)} ` +
        `${f1(m((w) => w.main)).padStart(6)} ${f1(m((w) => w.v8)).padStart(5)} ${f1(m((w) => w.pool)).padStart(6)} | ` +
        `${f2(m((w) => w.scavenges)).padStart(7)} ${f1(m((w) => w.scavengeMs)).padStart(11)} ${f2(m((w) => w.markCompacts)).padStart(6)} ` +
        `${f1(m((w) => w.markCompactMs)).padStart(9)} ${f2(m((w) => w.incremental)).padStart(8)} ${f1(m((w) => w.incrementalMs)).padStart(11)} | ` +
        `${f1(m((w) => w.oldMb)).padStart(7)} ${f1(m((w) => w.heapMb)).padStart(9)}`,
    );
    console.log(
      `    by round: CPU ${ws.map((w) => f0(w.cpu)).join(' ')}; main ${ws.map((w) => f0(w.main)).join(' ')}; ` +
        `V8 ${ws.map((w) => f0(w.v8)).join(' ')}; MC/1k ${ws.map((w) => f2(w.markCompacts)).join(' ')}`,
    );
  }
  const base = results.get('unseeded')!;
  for (const s of servers.filter((x) => x.label !== 'unseeded')) {
    const ws = results.get(s.label)!;
    const ratio = (f: (w: Window) => number): string => f2(median(ws.map((w, i) => f(w) / f(base[i]!))));
    const diff = (f: (w: Window) => number): string => f1(median(ws.map((w, i) => f(w) - f(base[i]!))));
    console.log(
      `  ${s.label} against unseeded, median of the round ratios: CPU ${ratio((w) => w.cpu)}x, main ${ratio((w) => w.main)}x, ` +
        `V8 ${ratio((w) => w.v8)}x, gets/s ${ratio((w) => w.getsPerSecond)}x; median round differences (µs/get): ` +
        `CPU ${diff((w) => w.cpu)}, main ${diff((w) => w.main)}, V8 ${diff((w) => w.v8)}, pool ${diff((w) => w.pool)}`,
    );
  }

  if (args.perf) {
    mkdirSync(args.perf, { recursive: true });
    console.log(`perf (one window each right after the rounds, before any forced collection, ${ms / 1000} s; on-CPU samples of each thread group):`);
    for (const s of servers) await perfWindow(load, s, args.perf);
  }
  for (const s of servers) {
    const live = await s.host.call<{ heapUsed: number }>({ memory: true });
    console.log(`  ${s.label}: live heap after a full collection ${f1(live.heapUsed / 2 ** 20)} MiB`);
  }

  // Idle: all three left alone together; what each burns by thread.
  const idleMs = Number(args['idle-seconds']) * 1000;
  const idle = new Map<string, Record<Role, number>[]>(servers.map((s) => [s.label, []]));
  await Promise.all(servers.map((s) => settle(s.host)));
  for (let i = 0; i < Number(args['idle-windows']); i++) {
    const before = servers.map((s) => cpuByThread(s.roles!.pid));
    await new Promise((r) => setTimeout(r, idleMs));
    for (const [j, s] of servers.entries()) {
      const split = byRole(before[j]!, cpuByThread(s.roles!.pid), s.roles!);
      idle.get(s.label)!.push({ main: split.main / idleMs, v8: split.v8 / idleMs, pool: split.pool / idleMs });
    }
  }
  console.log(`idle, ${args['idle-windows']} windows of ${idleMs / 1000} s together, ms of CPU per second (main / V8 / pool):`);
  for (const s of servers) {
    const xs = idle.get(s.label)!;
    console.log(`  ${s.label.padEnd(9)} ${xs.map((x) => `${f2(x.main)} / ${f2(x.v8)} / ${f2(x.pool)}`).join(';  ')}`);
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
