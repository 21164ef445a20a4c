// node dist/hack/bench/etcd-get.js [--seconds S] [--rounds R] [--clients N] [--profile DIR]
//
// Why a get by name costs the server more CPU on etcd3 than on SQLite (issue 17):
// the real API server (hack/bench/server-host.ts: the same options, config and
// startServer as cmd/apiserver) runs twice, in two forked children, one over etcd
// (hack/etcd.ts, started on loopback) and one over the embedded SQLite file. The
// load generator (hack/bench/load.ts, its own child) sends `--clients` concurrent
// keep-alive HTTPS gets by name of the benchmark's ~1 KiB Users with a bearer
// access key, as the harness's get row does. The server's CPU per get is read from
// the server's own process (process.cpuUsage before and after the timed window), so
// neither the client's nor etcd's cost is in it. Rounds alternate the two backends
// so a noisy neighbour slows both alike, after one uncounted warm-up round each; the
// median round counts. It also reads the server's etcd_requests_total before and after
// to report the revision reads (and all storage calls) each get cost.
//
// --profile DIR also writes one CPU profile of each server's last round there; read
// them with hack/bench/profile-summary.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startEtcd } from '../etcd.js';
import { Child } from './children.js';
import type { LoadResult } from './load.js';
import { API_PATH } from './objects.js';
import type { HostStarted } from './server-host.js';

const USERS = 20;
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

interface Figures {
  readonly getsPerSecond: number;
  readonly serverCpuMicrosPerGet: number;
  /** Storage revision reads (etcd_requests_total, getCurrentResourceVersion) per get. */
  readonly revisionReadsPerGet: number;
  /** Every storage call (reads, writes, revision reads) per get. */
  readonly storageCallsPerGet: number;
}

interface Server {
  readonly backend: string;
  readonly host: Child;
  readonly started: HostStarted;
}

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '32' },
    profile: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const clients = Number(values.clients);

async function serverCpu(host: Child): Promise<number> {
  const u = await host.call<{ user: number; system: number }>({ cpu: true });
  return u.user + u.system;
}

/** The server's storage calls so far by operation (etcd_requests_total, SQLite's too), from its /metrics. */
async function storageCalls(server: Server): Promise<Map<string, number>> {
  const res = await request(`${server.started.origin}/metrics`, {
    headers: { authorization: `Bearer ${server.started.token}` },
    dispatcher: insecure,
  });
  const calls = new Map<string, number>();
  for (const line of (await res.body.text()).split('\n')) {
    if (!line.startsWith('etcd_requests_total{')) continue;
    const operation = /operation="([^"]*)"/.exec(line)?.[1] ?? '?';
    calls.set(operation, (calls.get(operation) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return calls;
}

async function startServer(dir: string, backend: string, args: string[]): Promise<Server> {
  const host = Child.start(`server-${backend}`, 'server-host', { logFile: join(dir, `${backend}.log`) });
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, backend), '--storage-backend', backend, ...args] },
  });
  await host.call({ seedUsers: { prefix: 'get', from: 0, count: USERS, concurrency: 4 } });
  return { backend, host, started };
}

async function measure(load: Child, server: Server, profileFile: string | undefined): Promise<Figures> {
  const paths = Array.from({ length: USERS }, (_, i) => `${API_PATH}/users/get-${i}`);
  const target = { origin: server.started.origin, token: server.started.token };
  if (profileFile) await server.host.call({ profile: { start: true } });
  const callsBefore = await storageCalls(server);
  const before = await serverCpu(server.host);
  const r = await load.call<LoadResult>({
    job: { kind: 'get', target, paths, concurrency: clients, warmupMs: 1000, durationMs: seconds * 1000 },
  });
  const used = (await serverCpu(server.host)) - before;
  const callsAfter = await storageCalls(server);
  const delta = (op: string): number => (callsAfter.get(op) ?? 0) - (callsBefore.get(op) ?? 0);
  const allCalls = [...callsAfter.keys()].reduce((sum, op) => sum + delta(op), 0);
  if (profileFile) await server.host.call({ profile: { stop: profileFile } });
  if (r.errors > 0) throw new Error(`${server.backend}: ${r.errors} failed gets (${r.firstError ?? ''})`);
  // The CPU window includes the warm-up: count its gets at the measured rate.
  const gets = r.throughput * (seconds + 1);
  return {
    getsPerSecond: r.throughput, serverCpuMicrosPerGet: used / gets,
    revisionReadsPerGet: delta('getCurrentResourceVersion') / gets,
    storageCallsPerGet: allCalls / gets,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const dir = mkdtempSync(join('/dev/shm', 'etcd-get-'));
const etcd = await startEtcd({ dataDir: join(dir, 'etcd') });
const children: Child[] = [];
try {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const servers = [
    await startServer(dir, 'etcd3', ['--etcd-servers', etcd.endpoint]),
    await startServer(dir, 'sqlite', []),
  ];
  children.push(...servers.map((s) => s.host));
  // One uncounted round each first: a fresh server's first seconds are mostly the JIT.
  for (const server of servers) await measure(load, server, undefined);
  const results = new Map<string, Figures[]>();
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) {
      const last = round === rounds - 1 && values.profile !== undefined;
      const file = last ? join(values.profile as string, `get-${server.backend}.cpuprofile`) : undefined;
      const f = await measure(load, server, file);
      results.set(server.backend, [...(results.get(server.backend) ?? []), f]);
      if (file) console.log(`profile: ${file}`);
    }
  }
  console.log(`get by name through the API server, ${clients} clients, ${seconds} s, median of ${rounds} rounds`);
  console.log(
    'backend      gets/s  server CPU µs per get  revision reads per get  storage calls per get   rounds (µs per get)',
  );
  for (const [backend, figures] of results) {
    const cpu = median(figures.map((f) => f.serverCpuMicrosPerGet));
    const each = figures.map((f) => f.serverCpuMicrosPerGet.toFixed(0)).join(', ');
    console.log(
      `${backend.padEnd(9)} ${median(figures.map((f) => f.getsPerSecond)).toFixed(0).padStart(8)}  ${cpu
        .toFixed(0)
        .padStart(21)}  ${median(figures.map((f) => f.revisionReadsPerGet))
        .toFixed(3)
        .padStart(22)}  ${median(figures.map((f) => f.storageCallsPerGet))
        .toFixed(3)
        .padStart(21)}   ${each}`,
    );
  }
} finally {
  await insecure.close();
  for (const child of children) await child.stop();
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
}
