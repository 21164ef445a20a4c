// node dist/hack/bench/list-path.js [--objects N] [--rounds R] [--lists L]
//                                   [--baseline <other build's dist/hack/bench/server-host.js>]
//                                   [--profile <dir>]
//
// The list path (issue 17): a full list of `--objects` Users (~1 KiB each, and the
// bootstrap admin, as the bench fills them) served from the watch cache, against what
// the bench row "list vs etcd3 range + JSON.parse" compares it with: a raw etcd3 range
// of the prefix plus JSON.parse of each value (done here, in this process, as
// hack/bench/load.ts's etcd-range-parse job does). The real server
// runs in a child process (hack/bench/server-host.ts) on etcd3 over a loopback etcd
// (hack/etcd.ts); the Users are created through its registry. Reports, per side, the
// median wall time of a list (the client reads the whole body, as the bench does) and
// the CPU microseconds per list of the process that serves it (the server, or this
// process for the raw range).
//
// A/B of two builds: `--baseline` forks a second server from another build (e.g.
// `git archive <commit> | tar -x -C /tmp/base`, node_modules linked, built with tsc) on the same etcd and the same Users; rounds
// alternate this build, the baseline and the raw range, so a noisy neighbour slows
// all of them alike, and the median of the rounds counts. `--profile <dir>` writes a
// V8 CPU profile of this build's server over its lists in every round.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { Pool } from 'undici';
import { startEtcd } from '../etcd.js';
import { API_PATH, GROUP } from './objects.js';
import type { HostStarted } from './server-host.js';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    lists: { type: 'string', default: '4' },
    baseline: { type: 'string' },
    profile: { type: 'string' },
  },
});
const OBJECTS = Number(args.objects);
const ROUNDS = Number(args.rounds);
const LISTS = Number(args.lists);

/** A server-host child, spoken to by request/response messages (as children.ts, from any build). */
class Host {
  private nextId = 1;
  private readonly pending = new Map<number, (m: { result?: unknown; error?: string }) => void>();
  private readonly proc: ChildProcess;
  constructor(file: string) {
    this.proc = fork(file, [], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.proc.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    });
  }
  call<T>(message: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, (m) =>
        m.error !== undefined ? reject(new Error(m.error)) : resolve(m.result as T),
      );
      this.proc.send({ id, ...message });
    });
  }
  async cpuUs(): Promise<number> {
    const u = await this.call<{ user: number; system: number }>({ cpu: true });
    return u.user + u.system;
  }
  stop(): void {
    this.proc.disconnect();
  }
}

interface Side {
  readonly name: string;
  /** One list (or range + parse); resolves with the items it saw. */
  readonly once: () => Promise<number>;
  /** CPU microseconds so far of the process that serves it. */
  readonly cpuUs: () => Promise<number>;
  readonly profile?: (command: { start: true } | { stop: string }) => Promise<unknown>;
}

interface Round {
  readonly ms: number;
  readonly cpuUs: number;
  readonly items: number;
}

async function measure(side: Side, round: number, profileDir: string | undefined): Promise<Round> {
  await side.once(); // warm-up: connections, JIT, the JSON memo
  if (profileDir && side.profile) await side.profile({ start: true });
  const walls: number[] = [];
  let items = 0;
  const cpu = await side.cpuUs();
  for (let i = 0; i < LISTS; i++) {
    const t = performance.now();
    items = await side.once();
    walls.push(performance.now() - t);
  }
  const used = (await side.cpuUs()) - cpu;
  if (profileDir && side.profile)
    await side.profile({ stop: join(profileDir, `list-path-${round}.cpuprofile`) });
  return { ms: median(walls), cpuUs: used / LISTS, items };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

function serverSide(name: string, host: Host, started: HostStarted): Side {
  const pool = new Pool(started.origin, {
    connections: 1,
    bodyTimeout: 0,
    headersTimeout: 120_000,
    connect: { rejectUnauthorized: false },
  });
  const headers = { accept: 'application/json', authorization: `Bearer ${started.token}` };
  return {
    name,
    once: async () => {
      const res = await pool.request({ method: 'GET', path: `${API_PATH}/users`, headers });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      // Count the items without parsing 10 MiB on the clock: each User has one "uid".
      return text.split('"uid":').length - 1;
    },
    cpuUs: () => host.cpuUs(),
    profile: (command) => host.call({ profile: command }),
  };
}

function rangeSide(endpoint: string): Side {
  const client = new Etcd3({ hosts: endpoint, grpcOptions: { 'grpc.max_receive_message_length': -1 } });
  const prefix = `/registry/${GROUP}/users/`;
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return {
    name: 'etcd range + JSON.parse',
    once: async () => {
      const res = await client.kv.range({ key: Buffer.from(prefix), range_end: Buffer.from(end) });
      return res.kvs.map((kv) => JSON.parse(kv.value.toString('utf8')) as unknown).length;
    },
    cpuUs: () => {
      const u = process.cpuUsage();
      return Promise.resolve(u.user + u.system);
    },
  };
}

async function startHost(file: string, etcdEndpoint: string, dataDir: string): Promise<[Host, HostStarted]> {
  const host = new Host(file);
  const started = await host.call<HostStarted>({
    start: {
      args: [
        '--secure-port',
        '0',
        '--data-dir',
        dataDir,
        '--storage-backend',
        'etcd3',
        '--etcd-servers',
        etcdEndpoint,
      ],
    },
  });
  return [host, started];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'list-path-'));
  const etcd = await startEtcd();
  const hosts: Host[] = [];
  try {
    const self = fileURLToPath(new URL('./server-host.js', import.meta.url));
    const [host, started] = await startHost(self, etcd.endpoint, join(dir, 'a'));
    hosts.push(host);
    // As the bench fills: `--objects` Users in all, the bootstrap admin included.
    const fill = OBJECTS - 1;
    console.log(`filling ${fill} Users...`);
    await host.call({ seedUsers: { prefix: 'fill', from: 0, count: fill, concurrency: 32 } });
    const sides: Side[] = [serverSide('server (this build)', host, started)];
    if (args.baseline) {
      // The same data dir: the admin key and certificates live in etcd and there, made once.
      const [base, baseStarted] = await startHost(args.baseline, etcd.endpoint, join(dir, 'a'));
      hosts.push(base);
      sides.push(serverSide('server (baseline)', base, baseStarted));
    }
    sides.push(rangeSide(etcd.endpoint));
    const results = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of sides) {
        const round = await measure(side, r, side === sides[0] ? args.profile : undefined);
        results.get(side.name)?.push(round);
        console.log(
          `round ${r + 1} ${side.name}: ${round.ms.toFixed(1)} ms, ${Math.round(round.cpuUs)} CPU us/list, ${round.items} items`,
        );
      }
    }
    const range = median((results.get('etcd range + JSON.parse') ?? []).map((x) => x.ms));
    console.log(`\nmedian of ${ROUNDS} rounds (${LISTS} lists each; load average ${loadAverage()}):`);
    for (const side of sides) {
      const rounds = results.get(side.name) ?? [];
      const ms = median(rounds.map((x) => x.ms));
      const cpu = median(rounds.map((x) => x.cpuUs));
      console.log(
        `  ${side.name.padEnd(26)} ${ms.toFixed(1).padStart(7)} ms  ${String(Math.round(cpu)).padStart(7)} CPU us/list  ${(ms / range).toFixed(2)}x of the range`,
      );
    }
  } finally {
    for (const h of hosts) h.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
}

await main();
