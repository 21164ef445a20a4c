// node dist/hack/bench/list-path.js [--objects N] [--rounds R] [--lists L]
//                                   [--baseline <other build's dist/hack/bench/server-host.js>]
//                                   [--profile <dir>] [--no-bare]
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
// The wall time of a list is split as a client sees it: until the response's headers
// (the server's work before its first byte), until the body's last byte, and the
// UTF-8 decode of the body into one string, which is where the bench's own clock stops
// (it reads the body as text and parses nothing). The client's JSON.parse of that text
// is timed apart and is not counted, as the bench does not count it; the raw range's
// side counts its JSON.parse of every value, as the bench's does, and is split into the
// range (etcd, gRPC, protobuf decode) and the parse. Each side also reports this
// process's CPU per list (the client's work: TLS decrypt and decode, or the range).
//
// A third side (unless `--no-bare`) is the floor of any server: a bare node:https child
// (hack/bench/bare-server.ts) answering with the same bytes as the server's list,
// encoded once and written whole, so its CPU per list is what writing that many bytes
// to a TLS socket costs on this machine.
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
import { execArgvOf } from './children.js';
import { API_PATH, GROUP } from './objects.js';
import type { HostStarted } from './server-host.js';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    lists: { type: 'string', default: '4' },
    baseline: { type: 'string' },
    profile: { type: 'string' },
    'no-bare': { type: 'boolean', default: false },
  },
});
const OBJECTS = Number(args.objects);
const ROUNDS = Number(args.rounds);
const LISTS = Number(args.lists);

/** A server-host or bare-server child, spoken to by request/response messages (as children.ts, from any build). */
class Host {
  private nextId = 1;
  private readonly pending = new Map<number, (m: { result?: unknown; error?: string }) => void>();
  private readonly proc: ChildProcess;
  /**
   * `file` is `module`'s script, from this build or another's: it runs with the flags
   * children.ts gives that module (a server host gets the server's node flags, as
   * every launcher of the server does; see pkg/server/node-flags.ts).
   */
  constructor(file: string, module: 'server-host' | 'bare-server') {
    const execArgv = execArgvOf(module, { gc: true });
    this.proc = fork(file, [], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
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

/** One list as the client saw it: when each part of it ended, in ms from its start. */
interface Timing {
  readonly items: number;
  /** The response's headers (the server's work before its first byte); the range's answer. */
  readonly firstMs: number;
  /** The body's last byte. */
  readonly lastMs: number;
  /** Where the bench's clock stops: the body decoded to one string, or the values parsed. */
  readonly doneMs: number;
  /** This process's CPU until doneMs (µs): the client's own work on the clock. */
  readonly clientCpuUs: number;
  /** The client's JSON.parse of the whole body, after (not counted by the bench); 0 for the range or when not asked. */
  readonly parseMs: number;
}

interface Side {
  readonly name: string;
  /** One list (or range + parse); `parse`: JSON.parse the body after the clock stops, timed apart. */
  readonly once: (parse?: boolean) => Promise<Timing>;
  /** CPU microseconds so far of the process that serves it. */
  readonly cpuUs: () => Promise<number>;
  readonly profile?: (command: { start: true } | { stop: string }) => Promise<unknown>;
}

interface Round {
  readonly ms: number;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly cpuUs: number;
  readonly clientCpuUs: number;
  readonly items: number;
}

async function measure(side: Side, round: number, profileDir: string | undefined): Promise<Round> {
  await side.once(); // warm-up: connections, JIT, the JSON memo
  if (profileDir && side.profile) await side.profile({ start: true });
  const timings: Timing[] = [];
  const cpu = await side.cpuUs();
  for (let i = 0; i < LISTS; i++) timings.push(await side.once());
  const used = (await side.cpuUs()) - cpu;
  if (profileDir && side.profile)
    await side.profile({ stop: join(profileDir, `list-path-${round}.cpuprofile`) });
  return {
    ms: median(timings.map((t) => t.doneMs)),
    firstMs: median(timings.map((t) => t.firstMs)),
    lastMs: median(timings.map((t) => t.lastMs)),
    cpuUs: used / LISTS,
    clientCpuUs: median(timings.map((t) => t.clientCpuUs)),
    items: timings[0]?.items ?? 0,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** GETs `path` as the bench's list job does (one connection, the body read as text). */
function httpSide(
  name: string,
  host: Host,
  origin: string,
  path: string,
  headers: Record<string, string>,
  profile?: Side['profile'],
): Side {
  const pool = new Pool(origin, {
    connections: 1,
    bodyTimeout: 0,
    headersTimeout: 120_000,
    connect: { rejectUnauthorized: false },
  });
  return {
    name,
    once: async (parse = false) => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      const res = await pool.request({ method: 'GET', path, headers });
      const firstMs = performance.now() - t;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) chunks.push(chunk as Buffer);
      const lastMs = performance.now() - t;
      const text = Buffer.concat(chunks).toString('utf8');
      const doneMs = performance.now() - t;
      const used = process.cpuUsage(cpu);
      if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      // Count the items without parsing 10 MiB on the clock (nor leaving its garbage for
      // the next list): each User has one "uid".
      const items = text.split('"uid":').length - 1;
      const p = performance.now();
      if (parse) JSON.parse(text);
      const parseMs = parse ? performance.now() - p : 0;
      return { items, firstMs, lastMs, doneMs, clientCpuUs: used.user + used.system, parseMs };
    },
    cpuUs: () => host.cpuUs(),
    ...(profile ? { profile } : {}),
  };
}

function serverSide(name: string, host: Host, started: HostStarted): Side {
  const headers = { accept: 'application/json', authorization: `Bearer ${started.token}` };
  return httpSide(name, host, started.origin, `${API_PATH}/users`, headers, (command) =>
    host.call({ profile: command }),
  );
}

/** The bare node:https child answering every GET with `body` (written whole, encoded once). */
async function bareSide(body: string, started: HostStarted): Promise<[Host, Side]> {
  const bare = new Host(fileURLToPath(new URL('./bare-server.js', import.meta.url)), 'bare-server');
  const { origin } = await bare.call<{ origin: string }>({
    start: { certPem: started.certPem, keyPem: started.keyPem, behaviour: { mode: 'bytes', body } },
  });
  return [bare, httpSide('bare TLS write, same bytes', bare, origin, '/', { accept: 'application/json' })];
}

function rangeSide(endpoint: string): Side {
  const client = new Etcd3({ hosts: endpoint, grpcOptions: { 'grpc.max_receive_message_length': -1 } });
  const prefix = `/registry/${GROUP}/users/`;
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return {
    name: 'etcd range + JSON.parse',
    once: async () => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      const res = await client.kv.range({ key: Buffer.from(prefix), range_end: Buffer.from(end) });
      const firstMs = performance.now() - t;
      const items = res.kvs.map((kv) => JSON.parse(kv.value.toString('utf8')) as unknown).length;
      const doneMs = performance.now() - t;
      const used = process.cpuUsage(cpu);
      return { items, firstMs, lastMs: firstMs, doneMs, clientCpuUs: used.user + used.system, parseMs: 0 };
    },
    cpuUs: () => {
      const u = process.cpuUsage();
      return Promise.resolve(u.user + u.system);
    },
  };
}

async function startHost(file: string, etcdEndpoint: string, dataDir: string): Promise<[Host, HostStarted]> {
  const host = new Host(file, 'server-host');
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
    if (!args['no-bare']) {
      // The body exactly as the server sends it.
      const res = await fetchText(started, `${API_PATH}/users`);
      const [bare, side] = await bareSide(res, started);
      hosts.push(bare);
      sides.push(side);
    }
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
          `round ${r + 1} ${side.name}: ${round.ms.toFixed(1)} ms (first ${round.firstMs.toFixed(1)}, last byte ${round.lastMs.toFixed(1)}), ${Math.round(round.cpuUs)} CPU us/list, client ${Math.round(round.clientCpuUs)} CPU us/list, ${round.items} items`,
        );
      }
    }
    // What the bench does not count: a client's JSON.parse of the list's body (median of 3).
    const parses = new Map<string, number>();
    for (const side of sides) {
      if (side.name === 'etcd range + JSON.parse') continue;
      const ms: number[] = [];
      for (let i = 0; i < 3; i++) ms.push((await side.once(true)).parseMs);
      parses.set(side.name, median(ms));
    }
    const range = median((results.get('etcd range + JSON.parse') ?? []).map((x) => x.ms));
    console.log(`\nmedian of ${ROUNDS} rounds (${LISTS} lists each; load average ${loadAverage()}):`);
    console.log(
      `  ${'side'.padEnd(28)} ${'wall ms'.padStart(8)} ${'vs range'.padStart(8)} ${'first'.padStart(7)} ${'last'.padStart(7)} ${'parse*'.padStart(7)} ${'CPU us/list'.padStart(12)} ${'client CPU'.padStart(11)}`,
    );
    for (const side of sides) {
      const rounds = results.get(side.name) ?? [];
      const of = (f: (x: Round) => number): number => median(rounds.map(f));
      const ms = of((x) => x.ms);
      console.log(
        `  ${side.name.padEnd(28)} ${ms.toFixed(1).padStart(8)} ${`${(ms / range).toFixed(2)}x`.padStart(8)} ${of((x) => x.firstMs).toFixed(1).padStart(7)} ${of((x) => x.lastMs).toFixed(1).padStart(7)} ${(parses.get(side.name) ?? 0).toFixed(1).padStart(7)} ${String(Math.round(of((x) => x.cpuUs))).padStart(12)} ${String(Math.round(of((x) => x.clientCpuUs))).padStart(11)}`,
      );
    }
    console.log(
      '  (first: headers, or the range answered; last: the body\'s last byte; wall: decoded to text, or every value parsed;\n' +
        '   parse*: a client\'s JSON.parse of the body, not counted (the bench does not count it); CPU: the serving process per list;\n' +
        '   client CPU: this process until the wall time)',
    );
  } finally {
    for (const h of hosts) h.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One GET's body as text (the admin's token). */
async function fetchText(started: HostStarted, path: string): Promise<string> {
  const pool = new Pool(started.origin, { connections: 1, bodyTimeout: 0, connect: { rejectUnauthorized: false } });
  try {
    const res = await pool.request({
      method: 'GET',
      path,
      headers: { accept: 'application/json', authorization: `Bearer ${started.token}` },
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    return text;
  } finally {
    await pool.close();
  }
}

function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
}

await main();
