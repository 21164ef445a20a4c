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

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH, GROUP, userBody } from './objects.js';
import type { HostStarted } from './server-host.js';

const CLIENTS = 32;
const READER_KEY = `${'g'.repeat(40)}getpathreaderkey00000000`;

interface Side {
  readonly label: string;
  readonly process: Child;
  readonly target: HttpTarget;
  readonly path: string;
}

interface Round {
  readonly getsPerSecond: number;
  readonly cpuMicrosPerGet: number;
  readonly errors: number;
}

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
  },
});
/** The limiter's A/B is a plain user's: administrators never pass through the limiter. */
const caller = args['limiter-ab'] ? 'reader' : args.caller;
const NO_LIMITER = ['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'];

const dir = mkdtempSync(join(tmpdir(), 'getpath-bench-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

function child(c: Child): Child {
  children.push(c);
  return c;
}

async function cpuOf(p: Child): Promise<number> {
  const u = await p.call<{ user: number; system: number }>({ cpu: true });
  return u.user + u.system;
}

async function job(load: Child, j: Job): Promise<LoadResult> {
  return load.call<LoadResult>({ job: j });
}

async function request(
  load: Child,
  target: HttpTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<string> {
  const r = await job(load, { kind: 'request', target, method, path, body });
  return String(r.extra?.['body']);
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
    return { label, process: host, target: admin, path: `${API_PATH}/users/getpath`, started };
  }
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(load, admin, 'POST', `${API_PATH}/ownedaccesskeys`, {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name: 'reader-key' },
    spec: { displayName: 'reader', user: 'reader', key: READER_KEY },
  });
  const reader: HttpTarget = { origin: started.origin, token: READER_KEY };
  const path = `${API_PATH}/users/reader`;
  // The key works once the identity cache has seen it.
  for (let i = 0; ; i++) {
    const r = await job(load, {
      kind: 'get',
      target: reader,
      paths: [path],
      concurrency: 1,
      warmupMs: 0,
      durationMs: 50,
    });
    if (r.errors === 0 && r.operations > 0) break;
    if (i > 100) throw new Error(`${label}: the reader key never started to work`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { label, process: host, target: reader, path, started };
}

/** One timed window of gets against `side`, with its process's CPU over the window. */
async function measure(load: Child, side: Side, ms: number): Promise<Round> {
  const before = await cpuOf(side.process);
  const r = await job(load, {
    kind: 'get',
    target: side.target,
    paths: [side.path],
    concurrency: Number(args.clients),
    warmupMs: 0,
    durationMs: ms,
  });
  const used = (await cpuOf(side.process)) - before;
  return {
    getsPerSecond: r.throughput,
    cpuMicrosPerGet: r.operations > 0 ? used / r.operations : 0,
    errors: r.errors,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const seconds = Number(args.seconds);
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  const rounds = Number(args.rounds);
  let backendArgs = (_label: string): string[] => ['--storage-backend', 'sqlite'];
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
  const sides: Side[] = [early, current, late].filter((s): s is NonNullable<typeof s> => s !== undefined);
  const first = current;
  // The bare baseline: the first server's certificate, the bytes it returns for the get.
  const body = await request(load, first.target, 'GET', first.path);
  const bare = child(Child.start('bare', 'bare-server', { gc: true }));
  const { origin } = await bare.call<{ origin: string }>({
    start: {
      certPem: first.started.certPem,
      keyPem: first.started.keyPem,
      behaviour: { mode: 'bytes', body },
    },
  });
  sides.push({ label: 'bare', process: bare, target: { origin }, path: '/' });

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
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  await etcd?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
