// node dist/hack/bench/authz-twins.js [--servers N] [--rounds R] [--seconds S] [--clients C]
//
// The noise floor of the authz-scale row's method, and what could bias it: N unseeded
// sqlite servers started alike, one after another, each with the row's reader (a plain
// User with one key, in one Team `team-0`, as suite.ts sets every side up), take turns
// at the row's get in R rotated rounds (rounds.ts roundOrder(), every server in every
// position alike; all settled before every window), and the script prints:
//   - each server's CPU µs per get and gets/s by round, and the median of its round
//     ratios against server 1 (all alike: every figure should read 1.0x within noise);
//   - the CPU per get by start order (server 1 started first), by position in the
//     round (first after the settle ... last), and by whether the window before was the
//     same server's: a bias of the method shows as a trend in one of them.
// In suite.ts the twins' ratio (authz-scale-floor) read the third server the cheaper in
// three busy runs (CPU 0.91-0.96x); this separates start order and position from chance.
// CPU per get is the server process's own (process.cpuUsage over the window: no warm-up
// in it, the connections already open from an unmeasured window each first).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import { job, measure, plainKeyBody, request, runScript, settle, teamBody, untilKeyWorks, type Round, type Side } from './get-sides.js';
import type { HttpTarget } from './load.js';
import { API_PATH, userBody } from './objects.js';
import { median, roundOrder } from './rounds.js';
import type { HostStarted } from './server-host.js';

const { values: args } = parseArgs({
  options: {
    servers: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '32' },
  },
});
const servers = Number(args.servers);
const rounds = Number(args.rounds);
const ms = Number(args.seconds) * 1000;
const clients = Number(args.clients);
const dir = mkdtempSync(join(tmpdir(), 'authz-twins-'));
const children: Child[] = [];
const readerKey = 'r'.repeat(40) + 'benchreaderkey0000000000';
const readerPath = `${API_PATH}/users/reader`;

/** A server with the row's reader: User, key, then (a second after the User) team-0. */
async function startSide(load: Child, n: number): Promise<Side> {
  const host = Child.start(`server-${n}`, 'server-host', { logFile: join(dir, `server-${n}.log`), gc: true });
  children.push(host);
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, `server-${n}`), '--storage-backend', 'sqlite'] },
  });
  const admin: HttpTarget = { origin: started.origin, token: started.token };
  await request(load, admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(load, admin, 'POST', `${API_PATH}/ownedaccesskeys`, plainKeyBody('reader-key', 'reader', readerKey));
  const target: HttpTarget = { origin: started.origin, token: readerKey };
  await untilKeyWorks(load, target, readerPath, `server ${n}`);
  await new Promise((r) => setTimeout(r, 1100));
  await request(load, admin, 'POST', `${API_PATH}/teams`, teamBody('team-0', ['reader']));
  return { label: `server ${n}`, process: host, target, paths: [readerPath] };
}

const fmt = (xs: readonly number[]): string => xs.map((x) => x.toFixed(0)).join(' ');

async function main(): Promise<void> {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const sides: Side[] = [];
  for (let n = 1; n <= servers; n++) sides.push(await startSide(load, n));
  for (const side of sides) {
    await settle(side.process);
    await job(load, { kind: 'get', target: side.target, paths: [...side.paths], concurrency: clients, warmupMs: 0, durationMs: ms });
  }
  const results: Round[][] = sides.map(() => []);
  const byPosition: number[][] = sides.map(() => []);
  const afterSelf: number[] = [];
  const afterOther: number[] = [];
  let previous = -1;
  for (let round = 0; round < rounds; round++) {
    for (const [position, which] of roundOrder(sides.length, round).entries()) {
      const side = sides[which] as Side;
      await Promise.all(sides.map((s) => settle(s.process)));
      const r = await measure(load, side, ms, clients);
      results[which]?.push(r);
      byPosition[position]?.push(r.cpuMicrosPerGet);
      (previous === which ? afterSelf : afterOther).push(r.cpuMicrosPerGet);
      previous = which;
    }
  }
  const first = results[0] ?? [];
  console.log(`${servers} unseeded sqlite servers alike, ${rounds} rounds of ${ms / 1000} s, ${clients} clients`);
  for (const [i, rs] of results.entries()) {
    const cpu = rs.map((r) => r.cpuMicrosPerGet);
    const ratios = rs.map((r, k) => r.cpuMicrosPerGet / (first[k]?.cpuMicrosPerGet ?? NaN));
    const tput = rs.map((r, k) => r.getsPerSecond / (first[k]?.getsPerSecond ?? NaN));
    console.log(
      `  server ${i + 1} (started ${i + 1}.): CPU µs/get ${fmt(cpu)} (median ${median(cpu).toFixed(0)}); ` +
        `against server 1: CPU ${median(ratios).toFixed(2)}x, gets/s ${median(tput).toFixed(2)}x`,
    );
  }
  console.log(`  by position in the round: ${byPosition.map((xs, p) => `${p + 1}. ${median(xs).toFixed(0)}`).join(', ')} µs/get (medians)`);
  console.log(
    `  after the same server's window: ${median(afterSelf).toFixed(0)} µs/get (${afterSelf.length}); after another's: ${median(afterOther).toFixed(0)} (${afterOther.length})`,
  );
}

runScript(main, children, dir);
