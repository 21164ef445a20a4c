// node dist/hack/bench/limiter-create-ab.js [--sides on,off,on,off] [--rounds R]
//     [--seconds S] [--warmup-ms W] [--clients C] [--gets-seconds G] [--profile DIR]
//
// Where the limiter-create row's extra CPU comes from (hack/bench/suite.ts, the limiter
// group: the limiter-on server read 1.16-1.30x the CPU per create of the limiter-off
// one in three runs, while the limiter costs a request under 1 µs). Servers are started
// one after another in the order of --sides (`on`: the limiter at its defaults, `off`:
// both inflight limits 0, as the row's two sides), each a sqlite server with the row's
// plain User `reader` and its key, set up as suite.ts's plainUser() does. Then, as the
// row does, G seconds of the reader's gets on each (rotated, --gets-seconds 0 skips
// them), then R rotated rounds (rounds.ts roundOrder(): every server in every position
// alike, all settled before every window) of the reader creating its own access keys
// from C clients (`lim-<round>-<n>`, W ms of unmeasured warm-up, S seconds measured).
// With `--sides on,off,on,off` the same run holds two A/A pairs (on/on, off/off) and
// the A/B, each server in two start positions. It prints:
//   - each server's CPU µs per create and creates/s by round, the median of its round
//     ratios against server 1;
//   - the medians by side (on, off) and by start order, and by position in the round;
//   - each server's store at the end: its access keys (count, and the bytes of the list).
// CPU per create is the server process's own (process.cpuUsage over the window only).
// --profile DIR writes a CPU profile of every window (server-N-<side>-round-R.cpuprofile;
// summarise with hack/bench/profile-summary.ts).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import { job, runScript, settle, plainKeyBody, request, untilKeyWorks } from './get-sides.js';
import type { HttpTarget } from './load.js';
import { API_PATH, userBody } from './objects.js';
import { median, roundOrder } from './rounds.js';
import type { HostStarted } from './server-host.js';

const { values: args } = parseArgs({
  options: {
    sides: { type: 'string', default: 'on,off,on,off' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '4' },
    'warmup-ms': { type: 'string', default: '1000' },
    clients: { type: 'string', default: '64' },
    'gets-seconds': { type: 'string', default: '1' },
    profile: { type: 'string' },
  },
});
const kinds = (args.sides ?? '').split(',').map((s) => s.trim());
for (const k of kinds) if (k !== 'on' && k !== 'off') throw new Error(`--sides: "${k}" is neither on nor off`);
const rounds = Number(args.rounds);
const ms = Number(args.seconds) * 1000;
const warmupMs = Number(args['warmup-ms']);
const clients = Number(args.clients);
const getsMs = Number(args['gets-seconds']) * 1000;
const dir = mkdtempSync(join(tmpdir(), 'limiter-create-ab-'));
const children: Child[] = [];
const readerKey = 'r'.repeat(40) + 'benchreaderkey0000000000';
const readerPath = `${API_PATH}/users/reader`;

interface Server {
  readonly label: string;
  readonly kind: string;
  readonly process: Child;
  readonly admin: HttpTarget;
  readonly reader: HttpTarget;
}

interface Round {
  readonly perSecond: number;
  readonly creates: number;
  readonly cpuMicros: number;
  /** The share of that CPU spent in the kernel (SQLite's fsync of every commit is there). */
  readonly systemShare: number;
  readonly errors: number;
}

async function cpuSplit(p: Child): Promise<{ user: number; system: number }> {
  return p.call<{ user: number; system: number }>({ cpu: true });
}

/** A server as the limiter row starts one (suite.ts startServer + plainUser). */
async function startServer(load: Child, n: number, kind: string): Promise<Server> {
  const host = Child.start(`server-${n}`, 'server-host', {
    logFile: join(dir, `server-${n}.log`),
    gc: true,
    maxOldSpaceMb: 4096,
  });
  children.push(host);
  const limits = kind === 'off' ? ['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'] : [];
  const started = await host.call<HostStarted>({
    start: {
      args: ['--secure-port', '0', '--data-dir', join(dir, `server-${n}`), '--storage-backend', 'sqlite', ...limits],
    },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(load, admin, 'POST', `${API_PATH}/ownedaccesskeys`, plainKeyBody('reader-key', 'reader', readerKey));
  const reader: HttpTarget = { origin: started.origin, token: readerKey };
  await untilKeyWorks(load, reader, readerPath, `server ${n}`);
  return { label: `server ${n} (${kind})`, kind, process: host, admin, reader };
}

async function creates(load: Child, server: Server, round: number): Promise<Round> {
  if (args.profile) await server.process.call({ profile: { start: true } });
  const before = await cpuSplit(server.process);
  const r = await job(load, {
    kind: 'create-access-keys',
    target: server.reader,
    user: 'reader',
    namePrefix: `lim-${round}`,
    concurrency: clients,
    warmupMs,
    durationMs: ms,
  });
  // The warm-up's creates are in the CPU too (the load child counts only the window's):
  // both sides pay it alike, and the window is several times the warm-up.
  const after = await cpuSplit(server.process);
  const system = after.system - before.system;
  const used = after.user - before.user + system;
  if (args.profile) {
    const file = join(args.profile, `${server.process.name}-${server.kind}-round-${round + 1}.cpuprofile`);
    await server.process.call({ profile: { stop: file } });
  }
  return {
    perSecond: r.throughput,
    creates: r.operations,
    cpuMicros: r.operations > 0 ? used / r.operations : 0,
    systemShare: used > 0 ? system / used : 0,
    errors: r.errors,
  };
}

const fmt = (xs: readonly number[], digits = 0): string => xs.map((x) => x.toFixed(digits)).join(' ');

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const servers: Server[] = [];
  for (const [i, kind] of kinds.entries()) servers.push(await startServer(load, i + 1, kind));
  if (getsMs > 0) {
    for (let round = 0; round < 2; round++) {
      for (const which of roundOrder(servers.length, round)) {
        const s = servers[which] as Server;
        await Promise.all(servers.map((each) => settle(each.process)));
        await job(load, { kind: 'get', target: s.reader, paths: [readerPath], concurrency: 32, warmupMs: 0, durationMs: getsMs });
      }
    }
  }
  const results: Round[][] = servers.map(() => []);
  const byPosition: number[][] = servers.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [position, which] of roundOrder(servers.length, round).entries()) {
      const s = servers[which] as Server;
      await Promise.all(servers.map((each) => settle(each.process)));
      const r = await creates(load, s, round);
      results[which]?.push(r);
      byPosition[position]?.push(r.cpuMicros);
    }
  }
  const first = results[0] ?? [];
  console.log(
    `${servers.length} sqlite servers (${kinds.join(', ')}, started in that order), ${rounds} rounds of ` +
      `${warmupMs} ms + ${ms / 1000} s creates, ${clients} clients`,
  );
  for (const [i, rs] of results.entries()) {
    const s = servers[i] as Server;
    const cpu = rs.map((r) => r.cpuMicros);
    const cpuRatios = rs.map((r, k) => r.cpuMicros / (first[k]?.cpuMicros ?? NaN));
    const tput = rs.map((r, k) => r.perSecond / (first[k]?.perSecond ?? NaN));
    const errors = rs.reduce((a, r) => a + r.errors, 0);
    console.log(
      `  ${s.label}: CPU µs/create ${fmt(cpu)} (median ${median(cpu).toFixed(0)}); creates/s ` +
        `${fmt(rs.map((r) => r.perSecond))}; against server 1: CPU ${median(cpuRatios).toFixed(2)}x, ` +
        `creates/s ${median(tput).toFixed(2)}x; kernel share ${fmt(rs.map((r) => r.systemShare * 100))}%${errors > 0 ? `; ${errors} errors` : ''}`,
    );
  }
  // Every pair, as the row takes its ratio: the median of the rounds' CPU ratios. The
  // pairs of the same kind are the A/A: the method's own spread, to judge the A/B by.
  for (let i = 0; i < servers.length; i++) {
    for (let j = i + 1; j < servers.length; j++) {
      // An A/A as the later started over the earlier; an A/B as on over off.
      const [top, bottom] = servers[i]?.kind === 'on' && servers[j]?.kind === 'off' ? [i, j] : [j, i];
      const a = results[bottom] ?? [];
      const b = results[top] ?? [];
      const ratio = median(b.map((r, k) => r.cpuMicros / (a[k]?.cpuMicros ?? NaN)));
      const same = servers[i]?.kind === servers[j]?.kind ? 'A/A' : 'A/B';
      console.log(
        `  ${same} ${servers[top]?.label} / ${servers[bottom]?.label}: CPU per create ${ratio.toFixed(2)}x (median of round ratios)`,
      );
    }
  }
  for (const kind of ['on', 'off']) {
    const cpu = results.flatMap((rs, i) => (servers[i]?.kind === kind ? rs.map((r) => r.cpuMicros) : []));
    if (cpu.length > 0) console.log(`  limiter ${kind}: median ${median(cpu).toFixed(0)} µs/create over ${cpu.length} windows`);
  }
  console.log(`  by position in the round: ${byPosition.map((xs, p) => `${p + 1}. ${median(xs).toFixed(0)}`).join(', ')} µs/create (medians)`);
  console.log('  stores at the end (listed by the admin):');
  for (const s of servers) {
    const body = await request(load, s.admin, 'GET', `${API_PATH}/ownedaccesskeys`);
    const items = (JSON.parse(body) as { items: unknown[] }).items;
    const made = (results[servers.indexOf(s)] ?? []).reduce((a, r) => a + r.creates, 0);
    console.log(`    ${s.label}: ${items.length} access keys (${made} in measured windows), list ${body.length} bytes`);
  }
}

runScript(main, children, dir);
