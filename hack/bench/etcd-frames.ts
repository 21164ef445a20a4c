// node dist/hack/bench/etcd-frames.js [--creates N] [--seconds S] [--server-flags=...]
//
// The HTTP/2 frames between the server and etcd per create, each way, against those a
// raw `etcd3`-library put exchanges (the harness's baseline). A TCP proxy in this
// process sits between the clients and a loopback etcd (plain h2c, as the bench's etcd
// serves), parses the frames of every connection in both directions (9-byte frame
// headers after the client's 24-byte preface; payloads are not decoded) and counts them
// by type (SETTINGS and PING split into the frame and its ACK; WINDOW_UPDATE split into
// the connection's and a stream's), and the chunks each side's socket delivered (each
// is at least one write by the sender and one wake-up of the receiver, fewer when the
// proxy's reads coalesce several).
//
// Windows: the server (server-host.ts, the same assembly as cmd/apiserver, etcd3 on the
// proxy) creating ~1 KiB Users from 1 client and from 64 (load.ts's create-users-count:
// exactly N creates), then raw puts of the same size from 1 and 64 clients (load.ts's
// etcd-put). Counts are per operation, per connection: the server opens one
// connection for its unary calls (http2-unary.ts) and one for its Watch streams
// (grpc-js); the etcd3 library opens one per client channel. The proxy adds a hop (its
// own reads and writes), so the chunk counts are an upper bound of what a direct
// connection sees; the frame counts are the protocol's and do not depend on it.

import { createServer, connect, type Socket, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import { Child } from './children.js';
import type { HttpTarget, LoadResult } from './load.js';
import { startEtcd3Host } from './etcd3-server-host.js';

const { values: args } = parseArgs({
  options: {
    creates: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '4' },
    'server-flags': { type: 'string' },
  },
});

const TYPE_NAMES = [
  'DATA',
  'HEADERS',
  'PRIORITY',
  'RST_STREAM',
  'SETTINGS',
  'PUSH_PROMISE',
  'PING',
  'GOAWAY',
  'WINDOW_UPDATE',
  'CONTINUATION',
];
const FLAG_ACK = 0x1;
const PREFACE_LENGTH = 24;

/** Frame counts of one direction of one connection, by kind, and its socket's chunks. */
class DirectionCounts {
  readonly frames = new Map<string, number>();
  chunks = 0;
  bytes = 0;
  private pending: Buffer = Buffer.alloc(0);
  private skip: number;

  constructor(clientToServer: boolean) {
    this.skip = clientToServer ? PREFACE_LENGTH : 0;
  }

  feed(chunk: Buffer): void {
    this.chunks++;
    this.bytes += chunk.length;
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    if (this.skip > 0) {
      const n = Math.min(this.skip, buf.length);
      this.skip -= n;
      buf = buf.subarray(n);
    }
    let at = 0;
    while (buf.length - at >= 9) {
      const length = buf.readUIntBE(at, 3);
      if (buf.length - at < 9 + length) break;
      const type = buf[at + 3]!;
      const flags = buf[at + 4]!;
      const stream = buf.readUInt32BE(at + 5) & 0x7fffffff;
      this.count(kindOf(type, flags, stream));
      at += 9 + length;
    }
    this.pending = Buffer.from(buf.subarray(at));
  }

  private count(kind: string): void {
    this.frames.set(kind, (this.frames.get(kind) ?? 0) + 1);
  }

  snapshot(): { frames: Map<string, number>; chunks: number } {
    return { frames: new Map(this.frames), chunks: this.chunks };
  }
}

function kindOf(type: number, flags: number, stream: number): string {
  const name = TYPE_NAMES[type] ?? `type ${type}`;
  if (type === 4 || type === 6) return flags & FLAG_ACK ? `${name} ACK` : name;
  if (type === 8) return stream === 0 ? 'WINDOW_UPDATE (connection)' : 'WINDOW_UPDATE (stream)';
  return name;
}

interface Connection {
  readonly id: number;
  readonly up: DirectionCounts;
  readonly down: DirectionCounts;
}

const connections: Connection[] = [];

function startProxy(target: URL): Promise<number> {
  const server = createServer((client: Socket) => {
    client.setNoDelay(true);
    const upstream = connect(Number(target.port), target.hostname);
    upstream.setNoDelay(true);
    const c: Connection = {
      id: connections.length + 1,
      up: new DirectionCounts(true),
      down: new DirectionCounts(false),
    };
    connections.push(c);
    client.on('data', (d: Buffer) => {
      c.up.feed(d);
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      c.down.feed(d);
      client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

type Snapshot = Map<
  number,
  { up: ReturnType<DirectionCounts['snapshot']>; down: ReturnType<DirectionCounts['snapshot']> }
>;

function snapshot(): Snapshot {
  return new Map(connections.map((c) => [c.id, { up: c.up.snapshot(), down: c.down.snapshot() }]));
}

/** Frames per operation on each connection that carried any in the window. */
function report(title: string, before: Snapshot, operations: number): void {
  const after = snapshot();
  console.log(`\n${title}: ${operations} operations; per operation, client → etcd | etcd → client`);
  for (const [id, a] of after) {
    const b = before.get(id);
    const diff = (x: Map<string, number>, y: Map<string, number> | undefined): Map<string, number> =>
      new Map(
        [...x].map(([k, v]) => [k, v - (y?.get(k) ?? 0)]).filter(([, v]) => (v as number) > 0) as [
          string,
          number,
        ][],
      );
    const up = diff(a.up.frames, b?.up.frames);
    const down = diff(a.down.frames, b?.down.frames);
    if (up.size === 0 && down.size === 0) continue;
    const per = (n: number): string => (n / operations).toFixed(2);
    const kinds = [...new Set([...up.keys(), ...down.keys()])].sort();
    console.log(
      `  connection ${id}: socket chunks ${per(a.up.chunks - (b?.up.chunks ?? 0))} | ${per(a.down.chunks - (b?.down.chunks ?? 0))}`,
    );
    for (const k of kinds)
      console.log(`    ${k.padEnd(28)} ${per(up.get(k) ?? 0).padStart(6)} | ${per(down.get(k) ?? 0)}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'etcd-frames-'));
const children: Child[] = [];
let etcd: EtcdInstance | undefined;

async function main(): Promise<void> {
  const creates = Number(args.creates);
  const ms = Number(args.seconds) * 1000;
  try {
    etcd = await startEtcd();
    const port = await startProxy(new URL(etcd.endpoint));
    const proxied = `http://127.0.0.1:${port}`;
    const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
    children.push(load);
    const flags = args['server-flags']?.split(' ').filter((f) => f !== '');
    const { host, started } = await startEtcd3Host({
      logFile: join(dir, 'server.log'),
      dataDir: join(dir, 'data'),
      etcdEndpoint: proxied,
      ...(flags ? { nodeFlags: flags } : {}),
    });
    children.push(host);
    const target: HttpTarget = { origin: started.origin, token: started.token };
    const createsFrom = async (clients: number, prefix: string, count: number): Promise<LoadResult> =>
      load.call<LoadResult>({
        job: { kind: 'create-users-count', target, namePrefix: prefix, concurrency: clients, count },
      });
    // Warm-up: the server's connections, JIT; then let start-up traffic settle.
    await createsFrom(1, 'warm1', 200);
    await createsFrom(64, 'warm64', 500);
    await new Promise((r) => setTimeout(r, 1000));
    for (const clients of [1, 64]) {
      const before = snapshot();
      const r = await createsFrom(clients, `c${clients}`, creates);
      report(
        `server creates at ${clients} client(s), p50 ${r.latency.p50Ms.toFixed(2)} ms`,
        before,
        r.operations,
      );
    }
    for (const clients of [1, 64]) {
      const job = { kind: 'etcd-put', endpoint: proxied, valueSize: 1024, concurrency: clients } as const;
      await load.call<LoadResult>({ job: { ...job, warmupMs: 0, durationMs: 500 } });
      const before = snapshot();
      const r = await load.call<LoadResult>({ job: { ...job, warmupMs: 0, durationMs: ms } });
      report(
        `raw etcd3 puts at ${clients} client(s), p50 ${r.latency.p50Ms.toFixed(2)} ms`,
        before,
        r.operations,
      );
    }
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    await etcd?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
