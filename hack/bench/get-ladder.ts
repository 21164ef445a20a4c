// node dist/hack/bench/get-ladder.js [--seconds S] [--rounds R] [--in-process-only]
//
// A cost ladder from the bare server to ours (issue 17, the get row): what the
// mandatory steps of an authenticated, authorized, audited, logged, metered get cost
// in Node on this machine. The bare server's 'bytes' handler (bare-server.ts) gets
// the steps one at a time (ladder-handler.ts: our response headers, SHA-256 of the
// bearer token and a Map look-up, the project's request-info parser, a pino log line
// like ours, the project's request metrics, an audit ID, a promise and an await per
// filter of our chain), one child per rung, and the real server (server-host.ts on
// sqlite, the admin reading one ~1 KiB User) is the last rung. Every rung answers the
// same path with the same bytes to the same 32 keep-alive HTTPS clients with the same
// bearer token (load.ts, in a process of its own), so each rung's CPU per get is its
// own process.cpuUsage() over the timed window divided by the gets it served. Rounds
// visit the rungs in a rotated order (round r starts at rung r) so a noisy neighbour
// falls on all alike; the medians count. Prints each rung's CPU us per get, its step
// over the rung below, and its ratio to the bare rung. First it prints each step's own
// CPU per call measured in this process without HTTP (`--in-process-only`: just that),
// since through HTTPS a step of a few µs drowns in the machine's noise.

import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import { LADDER_STEPS, stepCostsInProcess } from './ladder-handler.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH, userBody } from './objects.js';
import type { HostStarted } from './server-host.js';

const CLIENTS = 32;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    'in-process-only': { type: 'boolean', default: false },
  },
});

const dir = mkdtempSync(join(tmpdir(), 'getladder-bench-'));
const children: Child[] = [];
const child = (c: Child): Child => (children.push(c), c);

const job = (load: Child, j: Job): Promise<LoadResult> => load.call<LoadResult>({ job: j });

/** The real server's response headers for `path`, less what Node writes itself. */
function responseHeaders(target: HttpTarget, path: string): Promise<Record<string, string>> {
  const skip = new Set(['date', 'content-length', 'connection', 'keep-alive', 'content-type']);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${target.origin}${path}`,
      { headers: { authorization: `Bearer ${target.token ?? ''}` }, rejectUnauthorized: false },
      (res) => {
        res.resume();
        const out: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (!skip.has(name) && typeof value === 'string') out[name] = value;
        }
        res.on('end', () => resolve(out));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Rung {
  readonly label: string;
  readonly process: Child;
  readonly target: HttpTarget;
}

async function cpuPerGet(load: Child, rung: Rung, path: string, ms: number): Promise<number> {
  const cpu = async (): Promise<number> => {
    const u = await rung.process.call<{ user: number; system: number }>({ cpu: true });
    return u.user + u.system;
  };
  const before = await cpu();
  const r = await job(load, {
    kind: 'get',
    target: rung.target,
    paths: [path],
    concurrency: CLIENTS,
    warmupMs: 0,
    durationMs: ms,
  });
  const used = (await cpu()) - before;
  if (r.errors > 0) throw new Error(`${rung.label}: ${r.errors} errors, first: ${r.firstError ?? ''}`);
  return r.operations > 0 ? used / r.operations : 0;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  console.log(
    'each step alone, in this process (CPU ns per call, median of 7 alternating rounds of 100,000):',
  );
  for (const [step, ns] of await stepCostsInProcess(100_000, 7))
    console.log(`  ${step.padEnd(50)} ${ns.toFixed(0).padStart(7)}`);
  if (args['in-process-only']) return;
  const ms = Number(args.seconds) * 1000;
  const rounds = Number(args.rounds);
  const load = child(Child.start('load', 'load', { logFile: join(dir, 'load.log') }));
  const server = child(Child.start('server', 'server-host', { logFile: join(dir, 'server.log'), gc: true }));
  const started = await server.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, 'server'), '--storage-backend', 'sqlite'] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  await job(load, {
    kind: 'request',
    target: admin,
    method: 'POST',
    path: `${API_PATH}/users`,
    body: userBody('getpath'),
  });
  const path = `${API_PATH}/users/getpath`;
  const body = String(
    (await job(load, { kind: 'request', target: admin, method: 'GET', path })).extra?.['body'],
  );
  const headers = await responseHeaders(admin, path);
  console.log(
    `response body: ${Buffer.byteLength(body)} bytes; our headers: ${Object.keys(headers).join(', ')}`,
  );

  const rungs: Rung[] = [];
  const labels = ['bare', ...LADDER_STEPS.map((s) => `+ ${s}`)];
  for (const [rung, label] of labels.entries()) {
    // Each rung logs to a file of its own, as the server's log goes to one.
    const bare = child(
      Child.start(`rung-${rung}`, 'bare-server', { gc: true, logFile: join(dir, `rung-${rung}.log`) }),
    );
    const { origin } = await bare.call<{ origin: string }>({
      start: {
        certPem: started.certPem,
        keyPem: started.keyPem,
        behaviour: { mode: 'ladder', body, rung, headers, token: started.token },
      },
    });
    rungs.push({ label, process: bare, target: { origin, token: started.token } });
  }
  rungs.push({ label: 'the real server (sqlite, admin)', process: server, target: admin });

  // Warm every rung (JIT, connections) before measuring.
  for (const r of rungs) await cpuPerGet(load, r, path, 1000);
  const results: number[][] = rungs.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < rungs.length; i++) {
      const which = (round + i) % rungs.length;
      const rung = rungs[which];
      if (rung) results[which]?.push(await cpuPerGet(load, rung, path, ms));
    }
  }
  const medians = results.map(median);
  const bare = medians[0] ?? 1;
  console.log(
    `CPU us per get, ${rounds} rounds of ${args.seconds} s, ${CLIENTS} clients (median; step over the rung below; x bare):`,
  );
  for (const [i, rung] of rungs.entries()) {
    const m = medians[i] ?? 0;
    const step = i === 0 ? 0 : m - (medians[i - 1] ?? 0);
    console.log(
      `  ${rung.label.padEnd(50)} ${m.toFixed(1).padStart(7)}  ${(i === 0 ? '' : (step >= 0 ? '+' : '') + step.toFixed(1)).padStart(7)}  ${(m / bare).toFixed(2)}x` +
        `   rounds: ${(results[i] ?? []).map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
