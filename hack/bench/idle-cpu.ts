// node dist/hack/bench/idle-cpu.js [--seconds S] [--rounds R] [--backend sqlite|etcd3] [--base DIR]
//                                  [--profile DIR]
//
// What an idle server burns: CPU ms per second of a server that serves nothing (the
// bench's server: server-host.ts, the same options and startServer as cmd/apiserver,
// as `npm start` runs it), measured by process.cpuUsage() over idle windows after it
// has settled. Its timers (leases, compaction, bookmarks, progress requests, metrics,
// keep-alive pings, flushes) are all that runs. `--base DIR` starts a second server
// from another build's dist/hack/bench (see get-path.ts) and alternates the windows
// of the two: an A/B of a timer change in one run. `--profile DIR` writes a CPU
// profile of each server's last window and prints its top functions by self time
// (that window is then left out of the figures: the profiler's own work is sampled).

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import { cpuOf, median } from './get-sides.js';
import { formatProfileSummary, summariseProfile, type CpuProfile } from './profile-summary.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'sqlite' },
    base: { type: 'string' },
    profile: { type: 'string' },
  },
});

const dir = mkdtempSync(join(tmpdir(), 'idle-cpu-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

async function main(): Promise<void> {
  const seconds = Number(args.seconds);
  const rounds = Number(args.rounds);
  let backendArgs = (_label: string): string[] => ['--storage-backend', 'sqlite'];
  if (args.backend === 'etcd3') {
    const endpoint = (etcd = await startEtcd()).endpoint;
    backendArgs = (label) => ['--storage-backend', 'etcd3', '--etcd-servers', endpoint, '--etcd-prefix', `/${label}`];
  }
  const servers: { label: string; host: Child }[] = [];
  const labels = args.base ? ['server', 'base'] : ['server'];
  for (const label of labels) {
    const host = Child.start(label, 'server-host', {
      logFile: join(dir, `${label}.log`),
      ...(label === 'base' ? { fromDir: args.base } : {}),
    });
    children.push(host);
    await host.call({
      start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), ...backendArgs(label)] },
    });
    servers.push({ label, host });
  }
  // Settle: start-up work (informers' first lists, the first compaction) is not idleness.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  const perSecond = new Map<string, number[]>(labels.map((l) => [l, []]));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? servers : [...servers].reverse();
    for (const { label, host } of order) {
      const profiled = args.profile !== undefined && i === rounds - 1;
      if (profiled) await host.call({ profile: { start: true } });
      const before = await cpuOf(host);
      const t0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const used = (await cpuOf(host)) - before;
      // The profiler's own work would count: a profiled window is reported, not measured.
      if (!profiled) perSecond.get(label)!.push(used / (performance.now() - t0)); // µs per ms = ms per s
      if (profiled) {
        const file = join(args.profile!, `idle-${label}.cpuprofile`);
        await host.call({ profile: { stop: file } });
        const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
        console.log(`profile of ${label}'s last window (${file}):`);
        for (const line of formatProfileSummary(summary, { top: 15, areas: 8 })) console.log(`  ${line}`);
      }
    }
  }
  console.log(`idle CPU, ${args.backend}, ${rounds} windows of ${seconds} s:`);
  for (const label of labels) {
    const xs = perSecond.get(label)!;
    console.log(
      `  ${label.padEnd(6)} ms of CPU per second: ${xs.map((x) => x.toFixed(2)).join(', ')} (median ${median(xs).toFixed(2)})`,
    );
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  await etcd?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
