// node dist/hack/bench/raw-baseline-ab.js [--seconds S] [--rounds R] [--clients 64,1]
//
// What the harness's raw put baseline paid for our server before it had an etcd of its
// own (suite.ts, rawEtcd()): raw `etcd3` puts of a ~1 KiB value against
//   A "shared": the etcd an idle API server (etcd3 backend) is connected to, so its
//     whole-keyspace watch (pkg/storage/cacher/global-progress.ts) receives every put;
//   B "plain": a second etcd started alike that nothing watches (the harness today).
// Rounds alternate the sides (A, B, then B, A, ...) at each client count; the median
// round is printed: puts per second, p50 and p99, and CPU per put of etcd (from /proc,
// 10 ms ticks) and of the idle server beside the shared etcd (process.cpuUsage(): what
// it spends decoding the watch events the raw puts cause, on the same cores). The load
// generator runs in a child of its own, as in the harness.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import { median } from './get-sides.js';
import type { LoadResult } from './load.js';
import { etcdPidsOfThisProcess, processCpuMicros } from './process-cpu.js';

/** About the stored size of a bench User (objects.ts), as the harness puts it raw. */
const VALUE_SIZE = 1024;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '64,1' },
  },
});

interface Side {
  readonly label: string;
  readonly etcd: EtcdInstance;
  readonly etcdPid: number;
  /** The API server watching this etcd, if any. */
  readonly server?: Child;
}

interface Window {
  /** The load's figures for the window (puts per second, latencies). */
  readonly result: LoadResult;
  readonly etcdCpuUsPerPut: number;
  readonly serverCpuUsPerPut: number;
}

const dir = mkdtempSync(join(tmpdir(), 'raw-baseline-ab-'));
const children: Child[] = [];
const etcds: EtcdInstance[] = [];

async function side(label: string, withServer: boolean): Promise<Side> {
  const known = new Set(etcdPidsOfThisProcess());
  const etcd = await startEtcd();
  etcds.push(etcd);
  const etcdPid = etcdPidsOfThisProcess().find((p) => !known.has(p));
  if (etcdPid === undefined) throw new Error('cannot find the etcd process this bench started');
  if (!withServer) return { label, etcd, etcdPid };
  const server = Child.start(label, 'server-host', { logFile: join(dir, `${label}.log`) });
  children.push(server);
  const storage = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoint];
  await server.call({ start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), ...storage] } });
  return { label, etcd, etcdPid, server };
}

async function measure(load: Child, s: Side, concurrency: number, ms: number): Promise<Window> {
  const serverBefore = s.server ? await s.server.cpuMicros() : 0;
  const etcdBefore = processCpuMicros(s.etcdPid);
  const r = await load.call<LoadResult>({
    job: {
      kind: 'etcd-put',
      endpoint: s.etcd.endpoint,
      valueSize: VALUE_SIZE,
      concurrency,
      warmupMs: 0,
      durationMs: ms,
    },
  });
  // The server decodes the last events after the last put is answered: let it finish.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const etcdUsed = processCpuMicros(s.etcdPid) - etcdBefore;
  const serverUsed = s.server ? (await s.server.cpuMicros()) - serverBefore : 0;
  const n = Math.max(1, r.operations);
  return {
    result: r,
    etcdCpuUsPerPut: etcdUsed / n,
    serverCpuUsPerPut: serverUsed / n,
  };
}

/** Each side's windows at each client count, round by round (`shared@64`: [...]). */
async function rounds(load: Child, sides: readonly Side[], clientCounts: readonly number[]) {
  const ms = Number(args.seconds) * 1000;
  const results = new Map<string, Window[]>();
  for (let round = 0; round < Number(args.rounds); round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const c of clientCounts) {
      for (const s of order) {
        const w = await measure(load, s, c, ms);
        const key = `${s.label}@${c}`;
        results.set(key, [...(results.get(key) ?? []), w]);
      }
    }
  }
  return results;
}

async function main(): Promise<void> {
  const clientCounts = args.clients.split(',').map(Number);
  try {
    const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
    children.push(load);
    const sides = [await side('shared', true), await side('plain', false)];
    for (const s of sides) for (const c of clientCounts) await measure(load, s, c, 1000);
    const results = await rounds(load, sides, clientCounts);
    console.log(`raw etcd puts of ${VALUE_SIZE} B, ${args.rounds} rounds of ${args.seconds} s, median:`);
    console.log('side     clients   puts/s   p50 ms   p99 ms   etcd CPU µs/put   server CPU µs/put');
    for (const c of clientCounts) {
      for (const s of sides) {
        const ws = results.get(`${s.label}@${c}`) ?? [];
        const m = (f: (w: Window) => number): string => median(ws.map(f)).toFixed(1);
        console.log(
          `${s.label.padEnd(8)} ${String(c).padStart(7)} ${m((w) => w.result.throughput).padStart(8)} ` +
            `${m((w) => w.result.latency.p50Ms).padStart(8)} ${m((w) => w.result.latency.p99Ms).padStart(8)} ` +
            `${m((w) => w.etcdCpuUsPerPut).padStart(17)} ${m((w) => w.serverCpuUsPerPut).padStart(19)}`,
        );
      }
      const shared = results.get(`shared@${c}`) ?? [];
      const plain = results.get(`plain@${c}`) ?? [];
      const ratios = shared.map((w, i) => w.result.throughput / (plain[i]?.result.throughput ?? NaN));
      console.log(
        `  puts/s shared/plain at ${c} clients, by round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}x)`,
      );
    }
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    for (const e of etcds) await e.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
