// node dist/hack/bench/thread-cpu.js [--seconds S] [--rounds R] [--windows create@1,create@64,get@1,get@32]
//                                   [--server-flags='--v8-pool-size=0'] [--server-args='--log-level warn']
//                                   [--server-log FILE] [--profile DIR] [--perf DIR]
//
// Which threads of the server spend its CPU. process.cpuUsage(), which the harness
// reports per operation, counts every thread of the process: the main thread (the
// event loop and all JavaScript), V8's platform threads (concurrent marking, parallel
// scavenging, sweeping, background compilation) and libuv's thread pool (async fs, so
// the request log's writes; dns; async crypto). This reads each thread's user + system
// time from /proc/<pid>/task/<tid>/stat before and after each timed window (10 ms
// ticks; a window of several seconds spends hundreds), and its voluntary and
// involuntary context switches from .../status: a voluntary switch of the main thread
// is the event loop going to sleep in epoll_wait with nothing to do, so switches per
// operation count the loop's wake-ups (minus the few a system call that blocks adds).
// The roles of the threads come from thread-roles.ts (asked of the server itself).
//
// The server (server-host.ts: the same options, assembly and startServer as
// cmd/apiserver, with the server's node flags) runs on a loopback etcd of its own and
// the load in another child (load.ts: the harness's create-users and get jobs, ~1 KiB
// Users over keep-alive HTTPS with a bearer token), so the server's threads serve
// nothing but the window's requests. Windows are `<job>@<clients>`, job create or get
// (a get by name of one User), or bare: the same get's bytes from the harness's bare
// node:https server (bare-server.ts), whose threads are then the ones read; a
// `+pinned` suffix (get@1+pinned) runs that window with the server alone on CPU 0
// and the load and etcd on CPU 1 (taskset; see measure());
// each round runs every window, the order rotating by round; the median round of each
// window is printed. `--server-flags` / `--server-args` add node flags / apiserver
// flags to the server (compare two runs; the figures per thread are stable enough
// across runs on a busy machine, see docs/performance/create-at-one-client.md). `--server-log FILE`
// keeps the server's stdout and stderr (its request log; V8's traces with
// `--server-flags='--trace-deopt'`). `--profile DIR` writes a V8 CPU profile of the
// server's extra window after the rounds, one per server window (summarise with
// profile-summary.js); the rounds are not profiled. `--perf DIR` runs Linux perf on
// the server's main thread (or the bare server's) over each window of the last round
// (`perf record -e cpu-clock -t <tid>`, DIR/<window>.data; start the server with
// `--server-flags=--perf-basic-prof` for JavaScript names): unlike V8's sampler,
// which samples wall time, it samples only while the thread is on a CPU, so it
// splits CPU time, by `perf report --sort dso,sym`, into the kernel, Node's C++ and
// V8's builtins (the interpreter, the baseline tier's calls and ICs) and optimized code.

import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { etcdPidsOfThisProcess } from './process-cpu.js';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import { median } from './get-sides.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { startEtcd3Host } from './etcd3-server-host.js';
import type { ThreadRoles } from './thread-roles.js';
import { API_PATH, userBody } from './objects.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    windows: { type: 'string', default: 'create@1,create@64,get@1,get@32' },
    'server-flags': { type: 'string' },
    'server-args': { type: 'string' },
    'server-log': { type: 'string' },
    profile: { type: 'string' },
    perf: { type: 'string' },
  },
});

/** USER_HZ: the unit of utime and stime in /proc/<pid>/task/<tid>/stat. */
const TICK_US = 10_000;

interface ThreadSample {
  readonly cpuUs: number;
  /** Of cpuUs, the time in the kernel (system calls, the network stack). */
  readonly systemUs: number;
  readonly voluntary: number;
  readonly involuntary: number;
}

/** Every thread of `pid` now (threads that ended between two reads are missed). */
function sampleThreads(pid: number): Map<number, ThreadSample> {
  const out = new Map<number, ThreadSample>();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    const tid = Number(name);
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const count = (field: string): number =>
        Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      out.set(tid, {
        cpuUs: (Number(fields[11]) + Number(fields[12])) * TICK_US,
        systemUs: Number(fields[12]) * TICK_US,
        voluntary: count('voluntary_ctxt_switches'),
        involuntary: count('nonvoluntary_ctxt_switches'),
      });
    } catch {
      // The thread ended while being read.
    }
  }
  return out;
}

type Role = 'main' | 'V8 platform' | 'libuv pool';
const ROLES: readonly Role[] = ['main', 'V8 platform', 'libuv pool'];

function roleOf(tid: number, roles: ThreadRoles): Role {
  if (tid === roles.pid) return 'main';
  if (roles.pool.includes(tid)) return 'libuv pool';
  return 'V8 platform';
}

interface WindowResult {
  readonly operations: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  /** By role: CPU µs, voluntary and involuntary switches, per operation. */
  readonly byRole: Record<Role, ThreadSample>;
  readonly totalUs: number;
}

const dir = mkdtempSync(join(tmpdir(), 'thread-cpu-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

async function main(): Promise<void> {
  const ms = Number(args.seconds) * 1000;
  const rounds = Number(args.rounds);
  const perfDir = args.perf;
  if (perfDir !== undefined) mkdirSync(perfDir, { recursive: true });
  const windows = args.windows.split(',').map((w) => {
    const [job, rest = ''] = w.split('@');
    const [clients, pin] = rest.split('+');
    if ((job !== 'create' && job !== 'get' && job !== 'bare') || !(Number(clients) > 0))
      throw new Error(`bad window ${w}`);
    if (pin !== undefined && pin !== 'pinned') throw new Error(`bad window ${w}: only +pinned`);
    return { name: w, job, clients: Number(clients), pinned: pin === 'pinned' };
  });
  try {
    etcd = await startEtcd();
    const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
    children.push(load);
    const flags = args['server-flags']?.split(' ').filter((f) => f !== '');
    const serverArgs = args['server-args']?.split(' ').filter((f) => f !== '') ?? [];
    const { host, started } = await startEtcd3Host({
      logFile: args['server-log'] ?? join(dir, 'server.log'),
      dataDir: join(dir, 'data'),
      etcdEndpoint: etcd.endpoint,
      serverArgs,
      ...(flags ? { nodeFlags: flags } : {}),
    });
    children.push(host);
    const target: HttpTarget = { origin: started.origin, token: started.token };
    const getPath = `${API_PATH}/users/thread-cpu-get`;
    await load.call({
      job: {
        kind: 'request',
        target,
        method: 'POST',
        path: `${API_PATH}/users`,
        body: userBody('thread-cpu-get'),
      },
    });
    const roles = await host.call<ThreadRoles>({ threads: true });
    // The bare node:https server (the harness's get baseline) answering the same bytes,
    // for `bare@N` windows: what Node and TLS alone cost per request at N clients.
    let bare: { target: HttpTarget; roles: ThreadRoles } | undefined;
    if (windows.some((w) => w.job === 'bare')) {
      const body = String(
        (await load.call<LoadResult>({ job: { kind: 'request', target, method: 'GET', path: getPath } }))
          .extra?.['body'],
      );
      const child = Child.start('bare', 'bare-server', { logFile: join(dir, 'bare.log') });
      children.push(child);
      const { origin } = await child.call<{ origin: string }>({
        start: { certPem: started.certPem, keyPem: started.keyPem, behaviour: { mode: 'bytes', body } },
      });
      // The bare server uses no thread pool: its threads are the main one and V8's.
      bare = { target: { origin }, roles: { pid: child.pid, pool: [] } };
    }
    const jobOf = (w: (typeof windows)[number], n: string, durationMs: number): Job =>
      w.job === 'create'
        ? { kind: 'create-users', target, namePrefix: n, concurrency: w.clients, warmupMs: 0, durationMs }
        : w.job === 'get'
          ? { kind: 'get', target, paths: [getPath], concurrency: w.clients, warmupMs: 0, durationMs }
          : {
              kind: 'get',
              target: bare!.target,
              paths: ['/'],
              concurrency: w.clients,
              warmupMs: 0,
              durationMs,
            };

    const measure = async (
      w: (typeof windows)[number],
      n: string,
      durationMs: number,
    ): Promise<WindowResult> => {
      const measured = w.job === 'bare' ? bare!.roles : roles;
      // `+pinned`: the measured server on CPU 0, the load and etcd on CPU 1, for this
      // window only (taskset, every thread): whether a request's CPU depends on what
      // ran on its core between two requests. Other work on the machine still runs anywhere.
      const pin = (server: string, others: string): void => {
        for (const [pid, cpus] of [
          [measured.pid, server],
          [load.pid, others],
          ...etcdPidsOfThisProcess().map((p) => [p, others] as const),
        ] as const) {
          spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
        }
      };
      if (w.pinned) pin('0', '1');
      const recorder =
        perfDir !== undefined && n.startsWith(`r${rounds - 1}-`)
          ? spawn(
              'perf',
              [
                'record',
                '-q',
                '-e',
                'cpu-clock',
                '-F',
                '2000',
                '-t',
                String(measured.pid),
                '-o',
                join(perfDir, `${w.job}-c${w.clients}${w.pinned ? '-pinned' : ''}.data`),
              ],
              { stdio: 'ignore' },
            )
          : undefined;
      const before = sampleThreads(measured.pid);
      let r: LoadResult;
      let after: ReturnType<typeof sampleThreads>;
      try {
        r = await load.call<LoadResult>({ job: jobOf(w, n, durationMs) });
        after = sampleThreads(measured.pid);
      } finally {
        // Back on every CPU of the machine (not just two), and the recorder stopped,
        // even when the window's job failed.
        const all = `0-${availableParallelism() - 1}`;
        if (w.pinned) pin(all, all);
        if (recorder) {
          const done = new Promise((resolve) => recorder.once('exit', resolve));
          recorder.kill('SIGINT');
          await done;
        }
      }
      const byRole = Object.fromEntries(
        ROLES.map((role) => [role, { cpuUs: 0, systemUs: 0, voluntary: 0, involuntary: 0 }]),
      ) as Record<Role, { cpuUs: number; systemUs: number; voluntary: number; involuntary: number }>;
      for (const [tid, a] of after) {
        const b = before.get(tid) ?? { cpuUs: 0, systemUs: 0, voluntary: 0, involuntary: 0 };
        const sum = byRole[roleOf(tid, measured)];
        sum.cpuUs += a.cpuUs - b.cpuUs;
        sum.systemUs += a.systemUs - b.systemUs;
        sum.voluntary += a.voluntary - b.voluntary;
        sum.involuntary += a.involuntary - b.involuntary;
      }
      const ops = Math.max(1, r.operations);
      for (const role of ROLES) {
        const s = byRole[role];
        s.cpuUs /= ops;
        s.systemUs /= ops;
        s.voluntary /= ops;
        s.involuntary /= ops;
      }
      if (r.errors > 0) process.stderr.write(`${w.name}: ${r.errors} errors\n`);
      return {
        operations: r.operations,
        perSecond: r.throughput,
        p50Ms: r.latency.p50Ms,
        byRole,
        totalUs: ROLES.reduce((t, role) => t + byRole[role].cpuUs, 0),
      };
    };

    // Warm-up: JIT, connections, the pool's first use.
    for (const w of windows) await measure(w, `warm-${w.clients}${w.pinned ? 'p' : ''}`, 1500);
    const results = new Map<string, WindowResult[]>();
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < windows.length; j++) {
        const w = windows[(round + j) % windows.length]!;
        const list = results.get(w.name) ?? [];
        list.push(await measure(w, `r${round}-${w.clients}${w.pinned ? 'p' : ''}`, ms));
        results.set(w.name, list);
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }

    if (args.profile) {
      mkdirSync(args.profile, { recursive: true });
      for (const w of windows.filter((x) => x.job !== 'bare')) {
        await host.call({ profile: { start: true } });
        await load.call<LoadResult>({ job: jobOf(w, `prof-${w.clients}`, ms) });
        const file = join(args.profile, `thread-cpu-${w.job}-c${w.clients}.cpuprofile`);
        await host.call({ profile: { stop: file } });
        console.log(`profile: ${file}`);
      }
    }
    console.log(
      `threads of the server (pid ${started.pid}): main ${roles.pid}, libuv pool ${roles.pool.join(' ')}, ` +
        `V8 platform: the ${sampleThreads(started.pid).size - 1 - roles.pool.length} others`,
    );
    console.log(`${rounds} rounds of ${args.seconds} s, median round by each figure; per operation:`);
    console.log(
      'window        ops/s   p50 ms   total µs   main µs (kernel)  V8 µs  pool µs   main wake-ups (vol)  main preempted  pool switches',
    );
    for (const w of windows) {
      const rs = results.get(w.name) ?? [];
      const m = (f: (r: WindowResult) => number): number => median(rs.map(f));
      console.log(
        `${w.name.padEnd(12)} ${m((r) => r.perSecond)
          .toFixed(0)
          .padStart(6)} ${m((r) => r.p50Ms)
          .toFixed(2)
          .padStart(8)} ` +
          `${m((r) => r.totalUs)
            .toFixed(0)
            .padStart(10)} ${m((r) => r.byRole.main.cpuUs)
            .toFixed(0)
            .padStart(9)} ${`(${m((r) => r.byRole.main.systemUs).toFixed(0)})`.padStart(8)} ` +
          `${m((r) => r.byRole['V8 platform'].cpuUs)
            .toFixed(0)
            .padStart(6)} ${m((r) => r.byRole['libuv pool'].cpuUs)
            .toFixed(0)
            .padStart(8)} ` +
          `${m((r) => r.byRole.main.voluntary)
            .toFixed(2)
            .padStart(20)} ${m((r) => r.byRole.main.involuntary)
            .toFixed(2)
            .padStart(15)} ` +
          `${m((r) => r.byRole['libuv pool'].voluntary)
            .toFixed(2)
            .padStart(14)}`,
      );
      console.log(`  total µs by round: ${rs.map((r) => r.totalUs.toFixed(0)).join(', ')}`);
    }
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    await etcd?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
