// node dist/hack/bench/node-usage-ladder.js [--seconds S] [--rounds R] [--only 0,4,8,...]
//
// A ladder of how the API server uses Node's HTTPS server, from the bare baseline
// (bare-server.ts, 'bytes' mode: the harness's get baseline) to the real server
// (issue 17, the get row; "The get path, sixth pass" in the performance notes). The
// bare server gets the server's Node-level differences one at a time
// (node-usage-server.ts, NODE_USAGE_STEPS: its TLS and server options, its connection
// bookkeeping, its node flags, the request left unread, headers set before writeHead,
// a 'close' listener per response, the body written as writeParts writes it, the
// answer after a chain of awaits, the request log line; last, 100 µs of busy
// JavaScript a request, which shows what of a profile follows the server's pace), one
// child per rung, and the real server (server-host.ts on SQLite, the admin reading one
// ~1 KiB User) is the last.
// Every rung answers the same path with the same bytes to the same 32 keep-alive HTTPS
// clients (load.ts, a process of its own); a rung's CPU per get is its process's
// process.cpuUsage() over the timed window over the gets it served, and the same
// window split by thread from /proc/<pid>/task (the main thread against the others:
// V8's GC and compiler threads, which process.cpuUsage() counts too and no CPU profile
// shows, and libuv's pool). `--profile DIR` profiles each rung's last round and prints
// its main-thread busy time as µs a get by area (profile-summary.ts). Rounds visit
// the rungs in a rotated order (round r starts at rung r) so a noisy neighbour falls on
// all alike; medians count. `--only` keeps the listed rungs (0 is bare; the real server
// is the last index, NODE_USAGE_STEPS.length + 1). `--server-flags=...` adds node flags
// to the real server's (e.g. `--server-flags=--trace-deopt`); with SERVER_LOG=FILE in the
// environment its log is copied there at the end.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import { cpuOf, gets as getsOf, median, request } from './get-sides.js';
import type { HttpTarget } from './load.js';
import { NODE_FLAGS_RUNG, NODE_USAGE_STEPS } from './node-usage-server.js';
import { API_PATH, userBody } from './objects.js';
import { summariseProfile, type CpuProfile } from './profile-summary.js';
import { threadCpuMicros } from './process-cpu.js';
import type { HostStarted } from './server-host.js';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';

const CLIENTS = 32;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string' },
    profile: { type: 'string' },
    'server-flags': { type: 'string', default: '' },
  },
});

interface Rung {
  /** Its number in the ladder (0 bare, then NODE_USAGE_STEPS, then the real server). */
  readonly rung: number;
  readonly label: string;
  readonly process: Child;
  readonly target: HttpTarget;
}

interface Window {
  readonly cpuPerGet: number;
  readonly getsPerSecond: number;
  /** CPU µs a get of the main thread and of the others (from /proc; 10 ms resolution over the window). */
  readonly threads: { readonly main: number; readonly others: number };
  readonly gets: number;
}

/**
 * A profiled window's main-thread busy time as µs a get, by area (profile-summary.ts,
 * grouped by package): Node's own modules, V8's GC and (program), native, this project
 * by folder and each npm package. The shares the earlier passes quoted, put on one
 * scale across rungs, so the bare server's Node work and ours compare in µs.
 */
function profileLine(file: string, gets: number): string {
  const s = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, 'package');
  const areas = s.selfByArea
    .filter(([, us]) => us / gets >= 1)
    .map(([area, us]) => `${area} ${(us / gets).toFixed(0)}`)
    .join(', ');
  return `main-thread busy ${(s.busyUs / gets).toFixed(0)} µs a get: ${areas}`;
}

async function window(
  load: Child,
  rung: Rung,
  path: string,
  ms: number,
  profileTo?: string,
): Promise<Window> {
  if (profileTo) await rung.process.call({ profile: { start: true } });
  const before = await cpuOf(rung.process);
  const threadsBefore = threadCpuMicros(rung.process.pid);
  const r = await getsOf(load, { ...rung, paths: [path] }, ms, CLIENTS);
  const threadsAfter = threadCpuMicros(rung.process.pid);
  const used = (await cpuOf(rung.process)) - before;
  if (profileTo) await rung.process.call({ profile: { stop: profileTo } });
  if (r.errors > 0) throw new Error(`${rung.label}: ${r.errors} errors, first: ${r.firstError ?? ''}`);
  const gets = Math.max(1, r.operations);
  const threads = {
    main: (threadsAfter.main - threadsBefore.main) / gets,
    others: (threadsAfter.others - threadsBefore.others) / gets,
  };
  return { cpuPerGet: used / gets, getsPerSecond: r.operations / (ms / 1000), threads, gets };
}

const dir = mkdtempSync(join(tmpdir(), 'node-usage-ladder-'));
const children: Child[] = [];
const child = (c: Child): Child => (children.push(c), c);

async function main(): Promise<void> {
  const ms = Number(args.seconds) * 1000;
  const rounds = Number(args.rounds);
  const realIndex = NODE_USAGE_STEPS.length + 1;
  const only = args.only === undefined ? undefined : new Set(args.only.split(',').map(Number));
  const load = child(Child.start('load', 'load', { logFile: join(dir, 'load.log') }));
  const serverFlags = args['server-flags'].split(' ').filter((f) => f !== '');
  const server = child(
    Child.start('server', 'server-host', {
      logFile: join(dir, 'server.log'),
      gc: true,
      nodeFlags: serverFlags,
    }),
  );
  const started = await server.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, 'server'), '--storage-backend', 'sqlite'] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('getpath'));
  const path = `${API_PATH}/users/getpath`;
  const body = await request(load, admin, 'GET', path);
  console.log(`response body: ${Buffer.byteLength(body)} bytes`);

  const rungs: Rung[] = [];
  const labels = ['bare node:https (bare-server.ts)', ...NODE_USAGE_STEPS.map((s) => `+ ${s}`)];
  for (const [rung, label] of labels.entries()) {
    if (only && !only.has(rung)) continue;
    const p = child(
      Child.start(`rung-${rung}`, 'bare-server', {
        logFile: join(dir, `rung-${rung}.log`),
        ...(rung >= NODE_FLAGS_RUNG ? { nodeFlags: SERVER_NODE_FLAGS } : {}),
      }),
    );
    const { origin } = await p.call<{ origin: string }>({
      start: {
        certPem: started.certPem,
        keyPem: started.keyPem,
        behaviour: { mode: 'node-usage', body, rung },
      },
    });
    rungs.push({ rung, label: `${rung} ${label}`, process: p, target: { origin, token: started.token } });
  }
  if (!only || only.has(realIndex))
    rungs.push({
      rung: realIndex,
      label: `${realIndex} the real server (sqlite, admin)`,
      process: server,
      target: admin,
    });

  for (const r of rungs) await window(load, r, path, 1000); // JIT, connections
  const results: Window[][] = rungs.map(() => []);
  const profiles = new Map<number, { file: string; gets: number }>();
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < rungs.length; i++) {
      const which = (round + i) % rungs.length;
      // The last round of each rung is profiled when asked (its CPU figure then carries the profiler's cost too).
      const file =
        args.profile && round === rounds - 1
          ? join(args.profile, `node-usage-rung-${rungs[which]!.rung}.cpuprofile`)
          : undefined;
      const w = await window(load, rungs[which]!, path, ms, file);
      if (file) profiles.set(which, { file, gets: w.gets });
      else results[which]!.push(w);
    }
  }
  const bare = median(results[0]!.map((w) => w.cpuPerGet));
  console.log(
    `CPU µs a get, ${rounds} rounds of ${args.seconds} s, ${CLIENTS} clients: median; step over the rung above; × the first rung; ` +
      `by thread (main / the others: V8's GC and compiler threads, libuv's pool); gets/s; the rounds`,
  );
  let previous = 0;
  for (const [i, rung] of rungs.entries()) {
    const ws = results[i]!;
    const m = median(ws.map((w) => w.cpuPerGet));
    const byThread = (kind: 'main' | 'others'): number => median(ws.map((w) => w.threads[kind]));
    const step = i === 0 ? '' : `${m - previous >= 0 ? '+' : ''}${(m - previous).toFixed(1)}`;
    previous = m;
    console.log(
      `  ${rung.label.padEnd(72)} ${m.toFixed(1).padStart(7)} ${step.padStart(7)} ${(m / bare).toFixed(2)}x` +
        `  ${byThread('main').toFixed(0)} / ${byThread('others').toFixed(0)}` +
        `  ${Math.round(median(ws.map((w) => w.getsPerSecond)))}/s  [${ws.map((w) => w.cpuPerGet.toFixed(0)).join(', ')}]`,
    );
  }
  if (profiles.size > 0) console.log('the profiled (last) round of each rung:');
  for (const [i, rung] of rungs.entries()) {
    const p = profiles.get(i);
    if (p) console.log(`  ${rung.label}\n    ${profileLine(p.file, p.gets)}`);
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  if (process.env['SERVER_LOG']) {
    const { copyFileSync } = await import('node:fs');
    copyFileSync(join(dir, 'server.log'), process.env['SERVER_LOG']);
  }
  rmSync(dir, { recursive: true, force: true });
}
