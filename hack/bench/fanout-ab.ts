// node dist/hack/bench/fanout-ab.js [--watchers N[,M...]] [--rate W] [--seconds S] [--rounds R]
//                                  [--backend sqlite|etcd3] [--profile DIR] [--compare DIR]
//
// The watch fan-out against its fair baseline (issue 17), small enough for a shared
// machine: the API server (a forked server host, etcd3 by default) and the bare
// broadcast server (hack/bench/bare-server.ts `broadcast` mode: the same event bytes,
// framed once, written to every TLS stream) each hold `--watchers` HTTPS watches of
// Users while one writer creates a User `--rate` times a second (the bench's
// `watch-fanout` job, from one forked load generator for both sides, so both pay the
// same client-side TLS decryption on the same cores). Rounds alternate server, bare,
// server, bare ...; the median round counts. Reports per side: p99 delivery latency
// (write answered → last watcher has the event), the server process's CPU µs per
// event per watcher (`process.cpuUsage()` over the writes' window, first write to last
// event, sampled every 50 ms / (writes × watchers); the server's side includes its
// create path, the bare side its bare POST), and the ratio. With --profile, one extra server round is CPU-profiled into DIR.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import type { HostStarted } from './server-host.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH, userBody } from './objects.js';

interface Round {
  readonly p99Ms: number;
  readonly cpuUsPerWrite: number;
  readonly incomplete: number;
}

const { values } = parseArgs({
  options: {
    watchers: { type: 'string', default: '300' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'etcd3' },
    profile: { type: 'string' },
    compare: { type: 'string' },
  },
});
/** One count, or several (`100,300`): with two or more, also the cost of each added watcher. */
const watcherCounts = (values.watchers ?? '').split(',').map(Number);
const rate = Number(values.rate);
const durationMs = Number(values.seconds) * 1000;
const rounds = Number(values.rounds);
// Two servers on one etcd would share one keyspace (the second finds the admin
// bootstrapped and writes no kubeconfig); each sqlite server has its own file.
if (values.compare && values.backend !== 'sqlite') throw new Error('--compare needs --backend sqlite');

const dir = mkdtempSync(join(tmpdir(), 'fanout-ab-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

async function cpuOf(child: Child): Promise<number> {
  const u = await child.call<{ user: number; system: number }>({ cpu: true });
  return u.user + u.system;
}

/** The CPU a child had used at `at` (ms since the epoch), interpolated between samples. */
function cpuAt(samples: readonly { at: number; cpu: number }[], at: number): number {
  let prev = samples[0];
  if (!prev) return NaN;
  for (const s of samples) {
    if (s.at >= at) {
      if (s.at === prev.at) return s.cpu;
      return prev.cpu + ((s.cpu - prev.cpu) * (at - prev.at)) / (s.at - prev.at);
    }
    prev = s;
  }
  return prev.cpu;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

try {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const backendArgs =
    values.backend === 'etcd3'
      ? ['--storage-backend', 'etcd3', '--etcd-servers', (etcd = await startEtcd()).endpoint]
      : ['--storage-backend', 'sqlite'];
  const host = Child.start('server', 'server-host', { logFile: join(dir, 'server.log'), gc: true });
  children.push(host);
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, 'data'), ...backendArgs] },
  });
  const server: HttpTarget = { origin: started.origin, token: started.token };
  const job = async (j: Job): Promise<LoadResult> => {
    const r = await load.call<LoadResult>({ job: j });
    if (r.errors > 0) console.error(`${j.kind}: ${r.errors} errors, first: ${r.firstError ?? ''}`);
    return r;
  };

  // The bare side writes a User event the server wrote, byte for byte but the resourceVersion.
  await job({
    kind: 'request',
    target: server,
    method: 'POST',
    path: `${API_PATH}/users`,
    body: userBody('fan-template'),
  });
  const got = await job({
    kind: 'request',
    target: server,
    method: 'GET',
    path: `${API_PATH}/users/fan-template`,
  });
  const created = JSON.parse(String(got.extra?.['body'])) as { metadata: { resourceVersion: string } };
  const event = JSON.stringify({ type: 'ADDED', object: created }).replace(
    `"resourceVersion":"${created.metadata.resourceVersion}"`,
    '"resourceVersion":"@RV@"',
  );
  const bareChild = Child.start('bare', 'bare-server', { gc: true });
  children.push(bareChild);
  const bare: HttpTarget = (await bareChild.call<{ origin: string }>({
    start: { certPem: started.certPem, keyPem: started.keyPem, behaviour: { mode: 'broadcast', event } },
  })) satisfies HttpTarget;

  let n = 0;
  const measure = async (
    child: Child,
    target: HttpTarget,
    watchers: number,
    profile?: string,
  ): Promise<Round> => {
    if (profile) await child.call({ profile: { start: true } });
    // The child's CPU sampled through the job, to count only the writes' window (the
    // watches' TLS handshakes before it cost more than the events at this size).
    const samples: { at: number; cpu: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push({ at: Date.now(), cpu: await cpuOf(child) });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const r = await job({
      kind: 'watch-fanout',
      target,
      watchers,
      writesPerSecond: rate,
      durationMs,
      namePrefix: `ab${++n}`,
    });
    sampling = false;
    await sampler;
    if (profile) await child.call({ profile: { stop: profile } });
    const used =
      cpuAt(samples, Number(r.extra?.['windowEndEpochMs'])) -
      cpuAt(samples, Number(r.extra?.['windowStartEpochMs']));
    const writes = Number(r.extra?.['writes'] ?? 0);
    return {
      p99Ms: r.latency.p99Ms,
      cpuUsPerWrite: writes > 0 ? used / writes : NaN,
      incomplete: Number(r.extra?.['incomplete'] ?? 0),
    };
  };

  // The sides, measured in turn each round: this build's server, optionally another
  // build's (--compare), and the bare broadcast server.
  type Side = string;
  const sides: { name: Side; child: Child; target: HttpTarget }[] = [
    { name: 'server', child: host, target: server },
  ];
  if (values.compare) {
    const other = Child.start('compare', 'server-host', {
      logFile: join(dir, 'compare.log'),
      gc: true,
      fromDir: values.compare,
    });
    children.push(other);
    const s2 = await other.call<HostStarted>({
      start: { args: ['--secure-port', '0', '--data-dir', join(dir, 'compare-data'), ...backendArgs] },
    });
    sides.push({ name: 'compare', child: other, target: { origin: s2.origin, token: s2.token } });
  }
  sides.push({ name: 'bare', child: bareChild, target: bare });
  const results = new Map<string, Round[]>();
  const at = (side: Side, watchers: number): Round[] => {
    const key = `${side} ${watchers}`;
    let list = results.get(key);
    if (!list) results.set(key, (list = []));
    return list;
  };
  const describe = (x: Round, watchers: number): string =>
    `p99 ${x.p99Ms.toFixed(2)} ms, ${(x.cpuUsPerWrite / watchers).toFixed(2)} µs/event/watcher` +
    `${x.incomplete ? ` (${x.incomplete} incomplete)` : ''}`;
  for (let r = 0; r < rounds; r++) {
    for (const watchers of watcherCounts) {
      const line: string[] = [];
      for (const side of sides) {
        const x = await measure(side.child, side.target, watchers);
        at(side.name, watchers).push(x);
        line.push(`${side.name} ${describe(x, watchers)}`);
      }
      console.log(`round ${r + 1}, ${watchers} watchers: ${line.join('; ')}`);
    }
  }
  if (values.profile) {
    const watchers = watcherCounts[watcherCounts.length - 1] ?? 0;
    const file = join(values.profile, `fanout-server-${watchers}x${rate}.cpuprofile`);
    await measure(host, server, watchers, file);
    console.log(`profile: ${file}`);
  }
  const p99 = (side: Side, w: number): number => median(at(side, w).map((x) => x.p99Ms));
  const perWrite = (side: Side, w: number): number => median(at(side, w).map((x) => x.cpuUsPerWrite));
  console.log(`${rate} writes/s, ${durationMs / 1000} s a round, median of ${rounds} (${values.backend}):`);
  const servers = sides.filter((x) => x.name !== 'bare').map((x) => x.name);
  for (const w of watcherCounts) {
    for (const name of servers) {
      const [s, b] = [perWrite(name, w) / w, perWrite('bare', w) / w];
      console.log(
        `  ${w} watchers: p99 ${name} ${p99(name, w).toFixed(2)} ms, bare ${p99('bare', w).toFixed(2)} ms, ` +
          `ratio ${(p99(name, w) / p99('bare', w)).toFixed(2)}×; CPU µs per event per watcher ${name} ` +
          `${s.toFixed(2)}, bare ${b.toFixed(2)}, ratio ${(s / b).toFixed(2)}×`,
      );
    }
  }
  // Two counts separate what each added watcher costs from what each write costs.
  const [low, high] = [watcherCounts[0] ?? 0, watcherCounts[watcherCounts.length - 1] ?? 0];
  if (high > low) {
    const marginal = (side: Side): number => (perWrite(side, high) - perWrite(side, low)) / (high - low);
    const fixed = (side: Side): number => perWrite(side, low) - marginal(side) * low;
    for (const name of servers) {
      console.log(
        `  per added watcher (${low} → ${high}), CPU µs per event: ${name} ${marginal(name).toFixed(2)}, ` +
          `bare ${marginal('bare').toFixed(2)}, ratio ${(marginal(name) / marginal('bare')).toFixed(2)}×; ` +
          `per write, whatever the watchers: ${name} ${fixed(name).toFixed(0)} µs, bare ${fixed('bare').toFixed(0)} µs`,
      );
    }
  }
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  await etcd?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
