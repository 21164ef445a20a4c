// node dist/hack/bench/get-path.js [--backend sqlite|etcd3] [--seconds S] [--rounds R] [--clients N]
//                                  [--caller admin|reader] [--base DIR [--base-first]] [--profile DIR]
//                                  [--limiter-ab]
//
// What the request path costs a get by name (issue 17: "at most 2x the bare server's
// CPU per get"). The real server (server-host.ts: the same options, assembly and
// startServer as cmd/apiserver) on sqlite, or on a loopback etcd with `--backend etcd3`,
// serves one ~1 KiB User by name to 32 keep-alive HTTPS clients with a bearer access
// key; the harness's bare node:https server (bare-server.ts, 'bytes' mode) returns the
// same bytes with the same certificate. Every side runs in a child process of its own
// and the load in another (load.ts, undici), so each side's CPU per get is its own
// process.cpuUsage() over the timed window divided by the gets it served: no client
// cost to subtract.
//
// `--base DIR` adds a second server, forked from another build's dist/hack/bench (for
// example a copy of dist/ built from the commit before a change, kept inside the
// worktree, e.g. .tmp/base/dist/hack/bench, so it resolves the same node_modules):
// an A/B of two builds in one run. `--caller reader` reads as a plain user (its own
// User, authorized by the self rule) instead of the admin. `--profile DIR` writes one
// V8 CPU profile per server of its last round. `--limiter-ab` adds a server of this
// build with the overload limiter off (`--max-requests-inflight 0
// --max-mutating-requests-inflight 0`, upstream's "no limit"), 'nolimit', beside
// 'server' with the limiter at its defaults, and reads as a plain user (administrators
// are exempt from the limiter): the suite's limiter-get row, as CPU per get, in
// alternating rounds; the two servers are started in the order given by --base-first
// (nolimit first with it), so a run in each order shows whether age or order counts.
//
// Rounds alternate the sides (A, B, bare, then B, bare, A, ...) so a noisy neighbour
// slows them alike; the median of the rounds counts. Prints gets/s and server CPU
// microseconds per get for each side, and each server's CPU against the bare one's.
//
// `--aged` adds a third server of this build, aged before the rounds the way the
// harness's servers are before their get rows (suite.ts), to compare a long-lived
// server's get with a fresh one's in one run: `--age-users N` Users created over HTTPS
// (32 at a time; default 10,000, as the etcd3 list row fills), `--age-lists K` full
// lists of them (default 20, the list row's iterations), `--age-creates S` seconds of
// creates from 64 clients (the create rows; default 0), and `--age-keys N` access keys
// of those Users with `--age-teams N` Teams over them (the authorization-at-scale
// seeding on sqlite; default 0). Each server also reports its garbage collections per
// 1,000 gets (gc-stats.ts) and its live heap after each round (after a full collection,
// outside the timed window: what grows round after round is kept per request).
// `--spread N` adds a side that is the fresh server asked by the admin for N different
// Users in turn (the harness's get row reads 100), against its own one-User side. `--writes` ends with one more
// window per side under `strace` (Linux; it must be installed), counting the write and
// writev calls and bytes per get: to the client sockets, and to stdout (the log).
// `--alloc` ends with one more window per server under V8's sampling heap profiler
// (heap-sampling.ts; `--alloc-interval` bytes between samples, default 512): bytes and
// objects allocated per get, the top allocation sites, and each site charged to the
// nearest frame of this project (`--alloc-top N` lines each, default 25); `--alloc-rounds
// N` repeats those windows N times, the servers' order rotating, and prints each
// server's bytes a get by window and their median (with `--base`: the allocation A/B of
// two builds, as in "The get path, seventh pass: allocation per get"). With
// `--rounds 0` only that window runs (after the warm-up). `--audit` runs every server
// as the chart deploys it by default: its default audit policy (read from the rendered
// deploy/05-configmap-platform-apiserver-audit-policy.yaml; reads at Metadata), events
// written to stdout (here the server's log file) in blocking mode. Without it nothing
// is audited, as the bench server has no policy file.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { chartAuditPolicyFile } from './chart-audit.js';
import { Child } from './children.js';
import type { GcStats } from './gc-stats.js';
import type { AllocationSummary } from './heap-sampling.js';
import {
  gcOf,
  gets as getsOf,
  job,
  measure as measureOf,
  median,
  plainKeyBody,
  request,
  seedTeamsAndKeys,
  untilKeyWorks,
  type Round,
  type Side,
} from './get-sides.js';
import type { HttpTarget } from './load.js';
import { API_PATH, userBody } from './objects.js';
import type { HostStarted } from './server-host.js';

const CLIENTS = 32;
const READER_KEY = `${'g'.repeat(40)}getpathreaderkey00000000`;

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'sqlite' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    caller: { type: 'string', default: 'admin' },
    base: { type: 'string' },
    'base-first': { type: 'boolean', default: false },
    clients: { type: 'string', default: String(CLIENTS) },
    profile: { type: 'string' },
    'limiter-ab': { type: 'boolean', default: false },
    aged: { type: 'boolean', default: false },
    'age-users': { type: 'string', default: '10000' },
    'age-lists': { type: 'string', default: '20' },
    'age-creates': { type: 'string', default: '0' },
    'age-keys': { type: 'string', default: '0' },
    'age-teams': { type: 'string', default: '0' },
    spread: { type: 'string', default: '0' },
    writes: { type: 'boolean', default: false },
    alloc: { type: 'boolean', default: false },
    audit: { type: 'boolean', default: false },
    'alloc-interval': { type: 'string', default: '512' },
    'alloc-top': { type: 'string', default: '25' },
    'alloc-rounds': { type: 'string', default: '1' },
  },
});
/** The limiter's A/B is a plain user's: administrators never pass through the limiter. */
const caller = args['limiter-ab'] ? 'reader' : args.caller;
const NO_LIMITER = ['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'];

/**
 * The chart's default audit set-up (`--audit`), its policy file written into `dir`:
 * events to stdout, the chart's default destination (the harness's audited row writes
 * them to a file instead: chartAuditArgs).
 */
function auditArgs(dir: string): string[] {
  const policyFile = chartAuditPolicyFile(dir);
  return ['--audit-policy-file', policyFile, '--audit-log-mode', 'blocking', '--audit-log-path', '-'];
}

const dir = mkdtempSync(join(tmpdir(), 'getpath-bench-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

function child(c: Child): Child {
  children.push(c);
  return c;
}

/** Starts one server (from this build or `benchDir`'s), seeds the User and, for a reader, its key. */
async function startServer(
  label: string,
  load: Child,
  backendArgs: string[],
  benchDir?: string,
): Promise<Side & { readonly started: HostStarted }> {
  const host = child(
    Child.start(label, 'server-host', {
      logFile: join(dir, `${label}.log`),
      gc: true,
      ...(benchDir ? { fromDir: benchDir } : {}),
    }),
  );
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), ...backendArgs] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  if (caller !== 'reader') {
    await request(load, admin, 'POST', `${API_PATH}/users`, userBody('getpath'));
    return { label, process: host, target: admin, paths: [`${API_PATH}/users/getpath`], started };
  }
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(load, admin, 'POST', `${API_PATH}/ownedaccesskeys`, plainKeyBody('reader-key', 'reader', READER_KEY));
  const reader: HttpTarget = { origin: started.origin, token: READER_KEY };
  const path = `${API_PATH}/users/reader`;
  await untilKeyWorks(load, reader, path, label);
  return { label, process: host, target: reader, paths: [path], started };
}

const gets = (load: Child, side: Side, ms: number): ReturnType<typeof getsOf> =>
  getsOf(load, side, ms, Number(args.clients));
const measure = (load: Child, side: Side, ms: number): Promise<Round> =>
  measureOf(load, side, ms, Number(args.clients));

/**
 * Ages `side`'s server as the harness's servers are aged before their get rows: Users
 * created over HTTPS, full lists of them, a window of creates, access keys and Teams.
 */
async function age(load: Child, side: Side & { readonly started: HostStarted }): Promise<void> {
  const admin: HttpTarget = { origin: side.started.origin, token: side.started.token };
  const users = Number(args['age-users']);
  const t0 = performance.now();
  if (users > 0) {
    await job(load, { kind: 'create-users-count', target: admin, namePrefix: 'member', concurrency: 32, count: users });
  }
  const lists = Number(args['age-lists']);
  if (lists > 0) {
    await job(load, { kind: 'list', target: admin, path: `${API_PATH}/users`, warmup: 0, iterations: lists });
  }
  const creates = Number(args['age-creates']);
  if (creates > 0) {
    await job(load, {
      kind: 'create-users',
      target: admin,
      namePrefix: 'ct',
      concurrency: 64,
      warmupMs: 0,
      durationMs: creates * 1000,
    });
  }
  const teams = Number(args['age-teams']);
  const keys = Number(args['age-keys']);
  // As suite.ts: the plain reader belongs to the first team.
  await seedTeamsAndKeys(load, admin, { users, teams, keys }, args.caller === 'reader' ? ['reader'] : []);
  const gc = await side.process.call<GcStats>({ gcStats: true });
  console.log(
    `aged ${side.label} in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${users} users, ${lists} lists, ` +
      `${creates} s of creates, ${teams} teams, ${keys} keys; heap ${(gc.usedHeapBytes / 2 ** 20).toFixed(0)} MiB`,
  );
}

/**
 * One window of gets against `side` with strace attached to its process: write and
 * writev calls and bytes per get, to sockets (any descriptor but stdout and stderr;
 * the few IPC messages that bracket the window are noise), to the log, and the 8-byte
 * eventfd writes with which libuv's thread pool wakes the loop (the log's async writes).
 */
async function traceWrites(load: Child, side: Side, ms: number): Promise<string> {
  const out = join(dir, `strace-${side.label}.txt`);
  const strace = spawn('strace', ['-f', '-qq', '-s', '0', '-e', 'trace=write,writev', '-o', out, '-p', String(side.process.pid)], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => strace.once('exit', () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 1000)); // attached
  const r = await gets(load, side, ms);
  strace.kill('SIGINT');
  await exited;
  let socketCalls = 0;
  let socketBytes = 0;
  let logCalls = 0;
  let wakeups = 0;
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const m = /(?:^|\s)(write|writev)\((\d+),.*\)\s+=\s+(\d+)/.exec(line);
    if (!m) continue;
    const fd = Number(m[2]);
    if (fd === 1 || fd === 2) logCalls++;
    else if (m[3] === '8') wakeups++;
    else {
      socketCalls++;
      socketBytes += Number(m[3]);
    }
  }
  const n = Math.max(1, r.operations);
  return (
    `${side.label.padEnd(6)} ${r.operations} gets: socket writes per get ${(socketCalls / n).toFixed(2)}, ` +
    `bytes per get ${(socketBytes / n).toFixed(0)}, log writes per get ${(logCalls / n).toFixed(3)}, ` +
    `wake-ups per get ${(wakeups / n).toFixed(3)}`
  );
}

/** One window of gets against a server under the sampling heap profiler: what a get allocates, and where. */
async function allocation(load: Child, side: Side, ms: number): Promise<{ text: string; bytesPerGet: number }> {
  await side.process.call({ heapSampling: { start: { intervalBytes: Number(args['alloc-interval']) } } });
  const r = await gets(load, side, ms);
  const a = await side.process.call<AllocationSummary>({ heapSampling: { stop: { topSites: Number(args['alloc-top']) } } });
  const n = Math.max(1, r.operations);
  const lines = (title: string, sites: AllocationSummary['bySite']): string =>
    `    ${title}:\n` +
    sites
      .map((x) => `      ${(x.bytes / n).toFixed(0).padStart(7)} B/get ${((100 * x.bytes) / a.bytes).toFixed(1).padStart(5)}%  ${x.site}`)
      .join('\n');
  const text =
    `  ${side.label.padEnd(6)} ${r.operations} gets: ${(a.bytes / n).toFixed(0)} bytes and ~${(a.objects / n).toFixed(0)} objects ` +
    `allocated per get (${a.samples} samples)\n` +
    `${lines('by allocating function', a.bySite)}\n${lines('by nearest frame of this project', a.byProjectFrame)}`;
  return { text, bytesPerGet: a.bytes / n };
}

async function main(): Promise<void> {
  const seconds = Number(args.seconds);
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  const rounds = Number(args.rounds);
  const audit = args.audit ? auditArgs(dir) : [];
  let backendArgs = (_label: string): string[] => ['--storage-backend', 'sqlite', ...audit];
  if (args.backend === 'etcd3') {
    const endpoint = (etcd = await startEtcd()).endpoint;
    // Each server under a prefix of its own in the one etcd, as two installations would be.
    backendArgs = (label) => [
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      endpoint,
      '--etcd-prefix',
      `/${label}`,
      ...audit,
    ];
  }
  const load = child(Child.start('load', 'load', { logFile: join(dir, 'load.log') }));
  // --base-first starts (and lists) the base first: on a busy machine a run should be
  // repeated in both orders before a difference of a few percent is believed.
  const base = async (): Promise<Side & { readonly started: HostStarted }> =>
    startServer('base', load, backendArgs('base'), args.base);
  const other = async (): Promise<(Side & { readonly started: HostStarted }) | undefined> => {
    if (args.base) return base();
    if (args['limiter-ab']) return startServer('nolimit', load, [...backendArgs('nolimit'), ...NO_LIMITER]);
    return undefined;
  };
  const early = args['base-first'] ? await other() : undefined;
  const current = await startServer('server', load, backendArgs('server'));
  const late = !args['base-first'] ? await other() : undefined;
  const sides: Side[] = [];
  const spread = Number(args.spread);
  if (spread > 0) {
    // The same server, asked by the admin for `spread` different Users in turn.
    const admin: HttpTarget = { origin: current.started.origin, token: current.started.token };
    await job(load, { kind: 'create-users-count', target: admin, namePrefix: 'spread', concurrency: 16, count: spread });
    const paths = Array.from({ length: spread }, (_, i) => `${API_PATH}/users/spread-${i}`);
    sides.push({ label: 'spread', process: current.process, target: admin, paths });
  }
  const aged = args.aged ? await startServer('aged', load, backendArgs('aged')) : undefined;
  if (aged) await age(load, aged);
  sides.push(...[early, current, late, aged].filter((s): s is NonNullable<typeof s> => s !== undefined));
  // The GC observers start before the first round.
  for (const s of sides) await gcOf(s);
  const first = current;
  // The bare baseline: the first server's certificate, the bytes it returns for the get.
  const body = await request(load, first.target, 'GET', first.paths[0]!);
  console.log(`response body: ${Buffer.byteLength(body)} bytes`);
  const bare = child(Child.start('bare', 'bare-server', { gc: true }));
  const { origin } = await bare.call<{ origin: string }>({
    start: {
      certPem: first.started.certPem,
      keyPem: first.started.keyPem,
      behaviour: { mode: 'bytes', body },
    },
  });
  sides.push({ label: 'bare', process: bare, target: { origin }, paths: ['/'] });

  // Warm every side (JIT, connections) before measuring.
  for (const s of sides) await measure(load, s, 1000);
  const results = new Map<string, Round[]>(sides.map((s) => [s.label, []]));
  for (let i = 0; i < rounds; i++) {
    const order = sides.map((_, j) => sides[(i + j) % sides.length]!);
    const last = i === rounds - 1;
    for (const s of order) {
      const profiled = last && args.profile && s.label !== 'bare';
      if (profiled) await s.process.call({ profile: { start: true } });
      results.get(s.label)!.push(await measure(load, s, seconds * 1000));
      if (profiled) {
        const file = join(args.profile!, `getpath-${s.label}-${args.backend}.cpuprofile`);
        await s.process.call({ profile: { stop: file } });
        console.log(`profile: ${file}`);
      }
    }
  }
  console.log(
    `get by name, ${args.clients} clients, ${args.backend}, caller ${caller}, ${rounds} rounds of ${seconds} s (median):`,
  );
  for (const s of sides) {
    const rs = results.get(s.label)!;
    const errors = rs.reduce((n, r) => n + r.errors, 0);
    console.log(
      `  ${s.label.padEnd(6)} gets/s ${rs.map((r) => r.getsPerSecond.toFixed(0)).join(', ')} (median ${median(rs.map((r) => r.getsPerSecond)).toFixed(0)}); ` +
        `server CPU us/get ${rs.map((r) => r.cpuMicrosPerGet.toFixed(0)).join(', ')} (median ${median(rs.map((r) => r.cpuMicrosPerGet)).toFixed(0)})` +
        (errors > 0 ? `; ${errors} errors` : ''),
    );
    const gcs = rs.map((r) => r.gc).filter((g) => g !== undefined);
    if (gcs.length > 0) {
      console.log(
        `         per 1,000 gets: scavenges ${median(gcs.map((g) => g.scavenges)).toFixed(1)}, ` +
          `mark-sweeps ${median(gcs.map((g) => g.majors)).toFixed(2)}, GC ms ${median(gcs.map((g) => g.ms)).toFixed(1)} (medians); ` +
          `live heap after each round ${gcs.map((g) => g.heapMb.toFixed(0)).join(', ')} MiB`,
      );
    }
  }
  // Load on a shared machine drifts within seconds, and CPU per request grows when a
  // process is starved (fewer requests share each wake-up): compare sides measured
  // next to each other, round by round, and take the median of those ratios.
  const paired = (a: string, b: string): string => {
    const ra = results.get(a)!;
    const rb = results.get(b)!;
    const ratios = ra.map((r, i) => r.cpuMicrosPerGet / (rb[i]?.cpuMicrosPerGet ?? NaN));
    return `${a}/${b} CPU per get, by round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}x)`;
  };
  for (const s of sides) if (s.label !== 'bare') console.log(`  ${paired(s.label, 'bare')}`);
  if (args.base) console.log(`  ${paired('server', 'base')}`);
  if (args['limiter-ab']) console.log(`  ${paired('server', 'nolimit')} (the limiter on against off)`);
  if (aged) console.log(`  ${paired('aged', 'server')}`);
  if (spread > 0) console.log(`  ${paired('spread', 'server')}`);
  if (args.alloc) {
    console.log(`allocation per get (${args.clients} clients, one window of ${seconds} s each, sampling heap profiler):`);
    // A base build older than heap-sampling.ts would take the unknown message for a stop.
    const samples = (s: Side): boolean =>
      s.label !== 'bare' && (s.label !== 'base' || existsSync(join(args.base!, 'heap-sampling.js')));
    const measured = sides.filter(samples);
    const bytes = new Map<string, number[]>(measured.map((s) => [s.label, []]));
    // `--alloc-rounds N`: N windows per server, the servers' order rotating by round;
    // the sites are printed for the last window, the bytes a get for every one.
    const rounds = Math.max(1, Number(args['alloc-rounds']));
    for (let round = 0; round < rounds; round++) {
      const order = measured.map((_, i) => measured[(i + round) % measured.length]!);
      for (const s of order) {
        const a = await allocation(load, s, seconds * 1000);
        bytes.get(s.label)!.push(a.bytesPerGet);
        if (round === rounds - 1) console.log(a.text);
      }
    }
    if (rounds > 1) {
      for (const [label, b] of bytes) {
        console.log(`  ${label} bytes a get, by window: ${b.map((x) => x.toFixed(0)).join(', ')} (median ${median(b).toFixed(0)})`);
      }
    }
  }
  if (args.writes) {
    console.log(`writes under strace (${args.clients} clients, one window of ${seconds} s each):`);
    for (const s of sides) console.log(`  ${await traceWrites(load, s, seconds * 1000)}`);
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  await etcd?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
