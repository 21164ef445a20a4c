// node dist/hack/bench/grpc-framing.js [--rounds R] [--calls N] [--size BYTES]
//
// What writing a gRPC unary request as one stream write saves on node:http2, against
// writing its 5-byte prefix and its message as two (what http2-unary.ts did before
// docs/performance/create-path-second-pass.md). One process: a node:http2
// server that answers every POST as etcd does (response headers, the request's
// message echoed back, grpc-status in trailers) and a client session making calls
// the way http2-unary.ts makes them (the same headers and listeners), at 1 and 64
// concurrent callers, rounds alternating the two ways of writing, median. CPU µs per
// call is this process's process.cpuUsage() over the window: client and server
// together, as neither can be told apart here; the Txn of a create is ~1.2 KiB.

import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '3000' },
    size: { type: 'string', default: '1300' },
  },
});

type Framing = 'one write' | 'prefix, then message';

function startEcho(): Promise<http2.Http2Server> {
  const server = http2.createServer();
  server.on('stream', (stream) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function call(session: http2.ClientHttp2Session, message: Buffer, framing: Framing): Promise<void> {
  return new Promise((resolve) => {
    const stream = session.request(
      {
        ':method': 'POST',
        ':path': '/etcdserverpb.KV/Txn',
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '5000m',
      },
      { endStream: false },
    );
    stream.on('response', () => undefined);
    stream.on('trailers', () => undefined);
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', resolve);
    if (framing === 'one write') {
      const framed = Buffer.allocUnsafe(5 + message.length);
      framed[0] = 0;
      framed.writeUInt32BE(message.length, 1);
      message.copy(framed, 5);
      stream.end(framed);
    } else {
      const prefix = Buffer.allocUnsafe(5);
      prefix[0] = 0;
      prefix.writeUInt32BE(message.length, 1);
      stream.write(prefix);
      stream.end(message);
    }
  });
}

async function window(
  session: http2.ClientHttp2Session,
  message: Buffer,
  framing: Framing,
  calls: number,
  callers: number,
): Promise<number> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next++ < calls) await call(session, message, framing);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / calls;
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const server = await startEcho();
const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
await new Promise((resolve) => session.once('connect', resolve));
const message = Buffer.alloc(Number(args.size), 7);
const calls = Number(args.calls);
const framings: Framing[] = ['prefix, then message', 'one write'];
try {
  for (const callers of [1, 64]) {
    for (const f of framings) await window(session, message, f, 1000, callers);
    const samples = new Map<Framing, number[]>(framings.map((f) => [f, []]));
    for (let round = 0; round < Number(args.rounds); round++) {
      const order = round % 2 === 0 ? framings : [...framings].reverse();
      for (const f of order) samples.get(f)?.push(await window(session, message, f, calls, callers));
    }
    console.log(
      `${callers} caller(s): ` +
        framings.map((f) => `${f} ${median(samples.get(f) ?? []).toFixed(1)} µs/call`).join(', ') +
        ' (client + server CPU, median)',
    );
  }
} finally {
  session.close();
  server.close();
}
