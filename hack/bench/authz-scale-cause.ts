// node dist/hack/bench/authz-scale-cause.js [--seconds S] [--rounds R] [--clients N]
//                                           [--users N] [--keys N] [--teams N] [--profile DIR]
//                                           [--node-flags="--max-semi-space-size=16 ..."] [--flags-side="..."]
//
// Why a plain user's get costs more on a server seeded with 1,000 Users, 10,000 access
// keys and 100 Teams than on an unseeded one (suite.ts's 'authz-scale' row: 180 against
// 163 µs of server CPU a get in the last quiet run, 0.91×). The hypotheses are "a larger
// heap for the collector to walk" and "a per-request look-up that grows with the store";
// one run, rounds alternating, separates them with four sides:
//
//   a  unseeded    a fresh sqlite server; the reader owns one key and is in no Team
//   b  seeded      a server seeded as suite.ts seeds it (the reader in the first Team)
//   c  ballast     an unseeded server carrying a ballast of plain live objects
//                  (ballast.ts: parsed JSON shaped like stored keys) that brings its live
//                  heap to the seeded server's: same heap, nothing to look up
//   d  seeded-lone the seeded server's process (b's), asked by a second plain user in no
//                  Team with a key of their own: what b's caller's Team costs
//   e  unseeded-2  a second fresh server like a: the noise floor (e/a is what two like
//                  servers differ by in this run)
//
// If c ≈ b the heap is the cause; if d ≈ a (and c ≈ a) a look-up of b's caller is; if b
// and d are both dearer than c, something else the seeded server holds or does (its
// informers, controllers, timers) is. Each side runs in its own process (server-host.ts,
// the same options and startServer as cmd/apiserver), the load in another (load.ts);
// CPU µs per get is the side's process.cpuUsage() over the window over the gets it
// served; GC counts and pause per 1,000 gets and the live heap after each round come
// from gc-stats.ts (get-sides.ts's measure(), shared with get-path.ts). Rounds visit
// the sides in a rotated order; medians of the rounds and of the round-by-round
// ratios against a. `--profile DIR` profiles a and b in the last round and prints the
// difference of their self time per get by function and by area (profile-summary.ts).
// Every server runs with the server's own node flags (SERVER_NODE_FLAGS, a fixed young
// generation: see children.ts); `--node-flags="--min-semi-space-size=0 --max-semi-space-size=0"` gives them V8's
// own sizing back, as before that was the default. `--node-flags` passes V8 flags to every server; `--flags-side "<flags>"` adds a side f,
// an unseeded server started with those flags (an A/B of a V8 setting, such as the
// young generation's size, against a and e in the same run). Each server also reports
// its young generation's capacity at the end of every window (V8 grows and shrinks it).
// `--allocations` ends with one more window of a and of b under V8's sampling heap
// profiler (allocation-profiler.ts): bytes allocated per get, and by function.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import {
  median,
  measure,
  plainKeyBody,
  request,
  seedTeamsAndKeys,
  untilKeyWorks,
  job,
  type Round,
  type Side,
} from './get-sides.js';
import type { HttpTarget } from './load.js';
import { API_PATH, userBody } from './objects.js';
import type { AllocationSummary } from './allocation-profiler.js';
import { summariseProfile, type CpuProfile, type Ranking } from './profile-summary.js';
import type { HostStarted } from './server-host.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '32' },
    users: { type: 'string', default: '1000' },
    keys: { type: 'string', default: '10000' },
    teams: { type: 'string', default: '100' },
    profile: { type: 'string' },
    'node-flags': { type: 'string', default: '' },
    'flags-side': { type: 'string' },
    allocations: { type: 'boolean', default: false },
  },
});
const clients = Number(args.clients);
const nodeFlags = args['node-flags'].split(/\s+/).filter((f) => f !== '');
const dir = mkdtempSync(join(tmpdir(), 'authz-cause-'));
const children: Child[] = [];

function child(c: Child): Child {
  children.push(c);
  return c;
}

const keyOf = (who: string): string => `${who.padEnd(40, 'z')}authzcausekey000000000000`;

interface Server {
  readonly host: Child;
  readonly admin: HttpTarget;
}

async function startServer(label: string, extraFlags: readonly string[] = []): Promise<Server> {
  const host = child(
    Child.start(label, 'server-host', {
      logFile: join(dir, `${label}.log`),
      gc: true,
      nodeFlags: [...nodeFlags, ...extraFlags],
    }),
  );
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), '--storage-backend', 'sqlite'] },
  });
  return { host, admin: { origin: started.origin, token: started.token } };
}

/** A plain User `who` with a key of their own, as a side reading their own User. */
async function plainSide(load: Child, server: Server, label: string, who: string): Promise<Side> {
  await request(load, server.admin, 'POST', `${API_PATH}/users`, userBody(who));
  await request(load, server.admin, 'POST', `${API_PATH}/ownedaccesskeys`, plainKeyBody(`${who}-key`, who, keyOf(who)));
  const target: HttpTarget = { origin: server.admin.origin, token: keyOf(who) };
  const path = `${API_PATH}/users/${who}`;
  await untilKeyWorks(load, target, path, label);
  return { label, process: server.host, target, paths: [path] };
}

const liveHeap = async (c: Child): Promise<number> => (await c.call<{ heapUsed: number }>({ memory: true })).heapUsed;
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

/** Self time per get of each entry, b minus a, largest differences first. */
function difference(a: Ranking, aGets: number, b: Ranking, bGets: number, top: number): string[] {
  const per = new Map<string, [number, number]>();
  for (const [name, us] of a) per.set(name, [us / aGets, 0]);
  for (const [name, us] of b) per.set(name, [per.get(name)?.[0] ?? 0, us / bGets]);
  return [...per.entries()]
    .sort((x, y) => Math.abs(y[1][1] - y[1][0]) - Math.abs(x[1][1] - x[1][0]))
    .slice(0, top)
    .map(
      ([name, [ua, ub]]) =>
        `    ${(ub - ua >= 0 ? '+' : '') + (ub - ua).toFixed(2).padStart(6)} µs  (${ua.toFixed(2)} → ${ub.toFixed(2)})  ${name}`,
    );
}

async function main(): Promise<void> {
  const seconds = Number(args.seconds);
  const rounds = Number(args.rounds);
  const sizes = { users: Number(args.users), keys: Number(args.keys), teams: Number(args.teams) };
  const load = child(Child.start('load', 'load', { logFile: join(dir, 'load.log') }));
  const unseeded = await startServer('unseeded');
  const seeded = await startServer('seeded');
  const ballast = await startServer('ballast');
  const twin = await startServer('unseeded-2');
  const a = await plainSide(load, unseeded, 'a-unseeded', 'reader');
  const e = await plainSide(load, twin, 'e-unseeded-2', 'reader');
  const flagged = args['flags-side']?.split(/\s+/).filter((f) => f !== '');
  const f = flagged
    ? await plainSide(load, await startServer('flagged', flagged), 'f-unseeded-flags', 'reader')
    : undefined;
  const c = await plainSide(load, ballast, 'c-ballast', 'reader');
  // b's reader is created before the Teams, as suite.ts's plainUser(), and joins the first.
  const b = await plainSide(load, seeded, 'b-seeded', 'reader');
  const t0 = performance.now();
  await job(load, {
    kind: 'create-users-count',
    target: seeded.admin,
    namePrefix: 'member',
    concurrency: 16,
    count: sizes.users,
  });
  await seedTeamsAndKeys(load, seeded.admin, sizes, ['reader']);
  const d = await plainSide(load, seeded, 'd-seeded-lone', 'loner');
  console.log(
    `seeded ${sizes.users} users, ${sizes.teams} teams, ${sizes.keys} keys in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  const heapA = await liveHeap(unseeded.host);
  const heapB = await liveHeap(seeded.host);
  const added = await ballast.host.call<{ items: number; heapUsed: number }>({
    ballast: { bytes: Math.max(0, heapB - (await liveHeap(ballast.host))) },
  });
  console.log(
    `live heap: unseeded ${mib(heapA)} MiB, seeded ${mib(heapB)} MiB, ballast ${mib(added.heapUsed)} MiB ` +
      `(${added.items} ballast items)`,
  );

  const sides = [a, b, c, d, e, ...(f ? [f] : [])];
  // Warm every side (JIT, connections) before measuring.
  for (const s of sides) await measure(load, s, 1000, clients);
  if (args.profile) mkdirSync(args.profile, { recursive: true });
  const results = new Map<string, Round[]>(sides.map((s) => [s.label, []]));
  const profiles = new Map<string, { file: string; gets: number }>();
  for (let i = 0; i < rounds; i++) {
    const last = i === rounds - 1;
    for (const s of sides.map((_, j) => sides[(i + j) % sides.length]!)) {
      const profiled = last && args.profile !== undefined && (s === a || s === b);
      if (profiled) await s.process.call({ profile: { start: true } });
      const round = await measure(load, s, seconds * 1000, clients);
      results.get(s.label)!.push(round);
      if (profiled) {
        const file = join(args.profile!, `authz-cause-${s.label}.cpuprofile`);
        await s.process.call({ profile: { stop: file } });
        profiles.set(s.label, { file, gets: round.gets });
      }
    }
  }

  console.log(`a plain user's get of their own User, ${clients} clients, sqlite, ${rounds} rounds of ${seconds} s:`);
  const pooled = (rs: readonly Round[]): number =>
    rs.reduce((n, r) => n + r.cpuMicrosPerGet * r.gets, 0) / Math.max(1, rs.reduce((n, r) => n + r.gets, 0));
  for (const s of sides) {
    const rs = results.get(s.label)!;
    const gcs = rs.map((r) => r.gc).filter((g) => g !== undefined);
    const errors = rs.reduce((n, r) => n + r.errors, 0);
    console.log(
      `  ${s.label.padEnd(14)} CPU µs/get ${rs.map((r) => r.cpuMicrosPerGet.toFixed(0)).join(', ')} ` +
        `(median ${median(rs.map((r) => r.cpuMicrosPerGet)).toFixed(0)}, pooled ${pooled(rs).toFixed(0)}); ` +
        `gets/s median ${median(rs.map((r) => r.getsPerSecond)).toFixed(0)}` +
        (errors > 0 ? `; ${errors} errors` : ''),
    );
    console.log(
      `  ${''.padEnd(14)} per 1,000 gets: scavenges ${median(gcs.map((g) => g.scavenges)).toFixed(1)}, ` +
        `mark-sweeps ${median(gcs.map((g) => g.majors)).toFixed(2)}, GC pause ${median(gcs.map((g) => g.ms)).toFixed(1)} ms; ` +
        `live heap ${gcs.map((g) => g.heapMb.toFixed(0)).join(', ')} MiB; ` +
        `young generation ${gcs.map((g) => g.newSpaceMb.toFixed(1)).join(', ')} MiB`,
    );
  }
  const ra = results.get(a.label)!;
  for (const s of sides.slice(1)) {
    const ratios = results.get(s.label)!.map((r, i) => r.cpuMicrosPerGet / (ra[i]?.cpuMicrosPerGet ?? NaN));
    console.log(
      `  ${s.label}/a CPU per get by round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}×)`,
    );
  }
  if (args.allocations) {
    for (const s of [a, b]) {
      await s.process.call({ allocations: { start: true } });
      const r = await measure(load, s, seconds * 1000, clients);
      const sampled = await s.process.call<AllocationSummary>({ allocations: { stop: true } });
      const perGet = (bytes: number): string => (bytes / Math.max(1, r.gets)).toFixed(0);
      console.log(`allocations of ${s.label} over ${r.gets} gets: ${perGet(sampled.totalBytes)} bytes a get; by function:`);
      for (const [name, bytes] of sampled.byFunction.slice(0, 20)) console.log(`  ${perGet(bytes).padStart(7)} B  ${name}`);
    }
  }
  const pa = profiles.get(a.label);
  const pb = profiles.get(b.label);
  if (pa && pb) {
    const sa = summariseProfile(JSON.parse(readFileSync(pa.file, 'utf8')) as CpuProfile);
    const sb = summariseProfile(JSON.parse(readFileSync(pb.file, 'utf8')) as CpuProfile);
    console.log(
      `profiles (last round; sampled busy µs per get a → b): ${(sa.busyUs / pa.gets).toFixed(1)} → ${(sb.busyUs / pb.gets).toFixed(1)}, ` +
        `GC ${(sa.gcUs / pa.gets).toFixed(1)} → ${(sb.gcUs / pb.gets).toFixed(1)}`,
    );
    console.log('  self time per get by area, b − a:');
    for (const line of difference(sa.selfByArea, pa.gets, sb.selfByArea, pb.gets, 12)) console.log(line);
    console.log('  self time per get by function, b − a:');
    for (const line of difference(sa.selfByFunction, pa.gets, sb.selfByFunction, pb.gets, 25)) console.log(line);
  }
}

try {
  await main();
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
