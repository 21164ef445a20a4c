// node dist/hack/bench/hostcluster-lazy-load.js [--rounds N]
//
// Start-up CPU of a standalone server (embedded SQLite, no host cluster) with and
// without @kubernetes/client-node loaded. pkg/hostcluster imports the library only
// when a host cluster is configured; before that change every start loaded it. The
// eager start is reproduced by preloading the library (`node --import
// @kubernetes/client-node`), so both sides run the same build:
//
//   eager  node <server flags> --import @kubernetes/client-node dist/cmd/apiserver/main.js ...
//   lazy   node <server flags> dist/cmd/apiserver/main.js ...
//
// <server flags> are pkg/server/node-flags.ts's, as every launcher of the server passes them.
//
// Each start runs until /readyz answers ok; the CPU the server process used by then
// (user + system, from /proc/<pid>/stat) and the wall time are recorded, then it
// is stopped. Rounds alternate eager and lazy so a noisy neighbour slows both
// alike; the median round counts. Linux only (/proc).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');
const main = join(repoRoot, 'dist', 'cmd', 'apiserver', 'main.js');
/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat on Linux. */
const CLOCK_TICKS_PER_SECOND = 100;

interface Start {
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** CPU time (user + system) the process has used so far, in ms. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
}

function readyz(url: string): Promise<boolean> {
  return new Promise((resolveReady) => {
    const req = request(`${url}/readyz`, { rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolveReady(res.statusCode === 200 && body.trim() === 'ok'));
    });
    req.on('error', () => resolveReady(false));
    req.end();
  });
}

async function startOnce(eager: boolean): Promise<Start> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lazy-load-bench-'));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...SERVER_NODE_FLAGS,
      ...(eager ? ['--import', '@kubernetes/client-node'] : []),
      main,
      '--secure-port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--data-dir',
      dataDir,
      '--storage-backend',
      'sqlite',
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
  );
  try {
    let url: string | undefined;
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      const m =
        /"msg":"serving"[^\n]*"url":"([^"]+)"/.exec(output) ??
        /"url":"([^"]+)"[^\n]*"msg":"serving"/.exec(output);
      if (m && url === undefined) url = m[1];
    });
    child.stderr.resume();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(`the server exited (${child.exitCode}): ${output.slice(-2000)}`);
      if (url !== undefined && (await readyz(url))) {
        const cpuMs = processCpuMs(child.pid ?? 0);
        return { cpuMs, wallMs: performance.now() - started };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the server was not ready within 120 s');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function run(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
  const rounds = Number(values.rounds);
  const results: Record<'eager' | 'lazy', Start[]> = { eager: [], lazy: [] };
  for (let i = 0; i < rounds; i++) {
    for (const side of ['eager', 'lazy'] as const) {
      const start = await startOnce(side === 'eager');
      results[side].push(start);
      console.log(
        `round ${i + 1} ${side}: cpu ${start.cpuMs.toFixed(0)} ms, wall ${start.wallMs.toFixed(0)} ms`,
      );
    }
  }
  for (const side of ['eager', 'lazy'] as const) {
    const cpu = median(results[side].map((s) => s.cpuMs));
    const wall = median(results[side].map((s) => s.wallMs));
    console.log(
      `${side}: median start-up CPU ${cpu.toFixed(0)} ms, wall ${wall.toFixed(0)} ms (${rounds} starts)`,
    );
  }
  const saved = median(results.eager.map((s) => s.cpuMs)) - median(results.lazy.map((s) => s.cpuMs));
  console.log(`lazy saves ${saved.toFixed(0)} ms of CPU per start (medians)`);
}

await run();
