// node dist/hack/bench/response-write-ab.js [--rounds R] [--requests N] [--clients C]
//
// How a get's response is written, in one process (the sixth get pass: "The get path,
// sixth pass" in the performance notes): one node:https server with the server's
// certificate type and options, one undici pool of C keep-alive clients in the same
// process, and the response written one way or another, switched between rounds
// (A, B, B, A, ...). CPU per request is the whole process's (client, server, TLS both
// ways) over N requests; the client's share is the same for every variant, so the
// differences are the writers'. Variants:
//   bare        writeHead(code, {type, length}) and end(body): the bare baseline's write
//               (the body joined with its newline per response: a copy the others
//               but one-end and headers do not make)
//   main        the API server's before this pass: Audit-Id and Cache-Control by
//               setHeader first, a 'close' closure, writeHead merging type and length
//               into them, then cork, write(cached bytes), end(newline)
//   one-end     as main, but the cached bytes and the newline go out in one end()
//   headers     as one-end, and every header in one writeHead array (no setHeader)
//   set-headers, close-listener, parts: bare with one of main's differences each
// Prints each variant's median CPU µs per request and requests/s. `--in-memory`: no
// network and no TLS, each response a ServerResponse on a socket that discards what it
// is given (Node's HTTP writing in JavaScript alone, which HTTPS drowns): CPU ns a
// response, N responses a round.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

import { median } from './get-sides.js';
import { ensureServingCertificates } from '../../pkg/server/serving-certs.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    requests: { type: 'string', default: '20000' },
    clients: { type: 'string', default: '32' },
    variants: { type: 'string', default: 'bare,main,one-end,headers' },
    'in-memory': { type: 'boolean', default: false },
  },
});

const BODY = Buffer.from(`${JSON.stringify({ kind: 'User', metadata: { name: 'x'.repeat(1100) } })}`);
const NEWLINE = Buffer.from('\n');

type Writer = (req: IncomingMessage, res: ServerResponse) => void;

const writers: Record<string, Writer> = {
  bare: (req, res) => {
    req.resume?.();
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    res.end(Buffer.concat([BODY, NEWLINE]));
  },
  'set-headers': (req, res) => {
    req.resume?.();
    res.setHeader('Audit-Id', randomUUID());
    res.setHeader('Cache-Control', 'no-cache, private');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    res.end(Buffer.concat([BODY, NEWLINE]));
  },
  'close-listener': (req, res) => {
    req.resume?.();
    res.on('close', () => undefined);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    res.end(Buffer.concat([BODY, NEWLINE]));
  },
  parts: (req, res) => {
    req.resume?.();
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    res.cork();
    res.write(BODY);
    res.end(NEWLINE);
  },
  main: (_req, res) => {
    res.setHeader('Audit-Id', randomUUID());
    res.setHeader('Cache-Control', 'no-cache, private');
    res.on('close', () => undefined);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    res.cork();
    res.write(BODY);
    res.end(NEWLINE);
  },
  'one-end': (_req, res) => {
    res.setHeader('Audit-Id', randomUUID());
    res.setHeader('Cache-Control', 'no-cache, private');
    res.on('close', () => undefined);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': BODY.length + 1 });
    const out = Buffer.allocUnsafe(BODY.length + 1);
    BODY.copy(out);
    out[BODY.length] = 10;
    res.end(out);
  },
  headers: (_req, res) => {
    res.on('close', () => undefined);
    res.writeHead(200, [
      'Audit-Id',
      randomUUID(),
      'Cache-Control',
      'no-cache, private',
      'Content-Type',
      'application/json',
      'Content-Length',
      String(BODY.length + 1),
    ]);
    const out = Buffer.allocUnsafe(BODY.length + 1);
    BODY.copy(out);
    out[BODY.length] = 10;
    res.end(out);
  },
};

/** Each variant's responses written to a socket that discards them: CPU ns a response. */
async function inMemory(names: readonly string[]): Promise<void> {
  const socket = new Writable({
    write: (_chunk, _encoding, done) => done(),
    writev: (_chunks, done) => done(),
  });
  const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} } as IncomingMessage;
  const responses = Number(values.requests);
  const once = (writer: Writer): void => {
    const res = new ServerResponse(req);
    res.assignSocket(socket as unknown as Socket);
    writer(req, res);
    res.detachSocket(socket as unknown as Socket);
  };
  // Node finishes each response in callbacks of later ticks: the loop yields every
  // thousand responses so they run (and are counted) rather than pile up.
  const batch = async (writer: Writer): Promise<void> => {
    for (let i = 0; i < responses; i++) {
      once(writer);
      if (i % 1000 === 999) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  for (const name of names) await batch(writers[name]!);
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const writer = writers[name]!;
      const c = process.cpuUsage();
      await batch(writer);
      const used = process.cpuUsage(c);
      cpu[name]!.push(((used.user + used.system) * 1000) / responses);
    }
  }
  for (const name of names) {
    console.log(
      `${name.padEnd(14)} ${median(cpu[name]!).toFixed(0)} ns CPU a response   [${cpu[name]!.map((x) => x.toFixed(0)).join(', ')}]`,
    );
  }
}

async function main(): Promise<void> {
  const names = values.variants.split(',');
  for (const n of names) if (!writers[n]) throw new Error(`no variant ${n}`);
  if (values['in-memory']) return inMemory(names);
  const { certPem, keyPem } = certificate();
  let current: Writer = writers[names[0]!]!;
  const server = createServer(
    { cert: certPem, key: keyPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false },
    (req, res) => current(req, res),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const clients = Number(values.clients);
  const pool = new Pool(`https://127.0.0.1:${(server.address() as AddressInfo).port}`, {
    connections: clients,
    pipelining: 1,
    connect: { rejectUnauthorized: false },
  });
  const run = async (n: number): Promise<void> => {
    let left = n;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (left-- > 0) {
          const r = await pool.request({ method: 'GET', path: '/x', headers: { authorization: 'Bearer x' } });
          await r.body.arrayBuffer();
        }
      }),
    );
  };
  const requests = Number(values.requests);
  await run(requests); // warm-up: JIT and connections
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const rate: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      current = writers[name]!;
      const c = process.cpuUsage();
      const t = performance.now();
      await run(requests);
      const used = process.cpuUsage(c);
      cpu[name]!.push((used.user + used.system) / requests);
      rate[name]!.push(requests / ((performance.now() - t) / 1000));
    }
  }
  for (const name of names) {
    console.log(
      `${name.padEnd(14)} ${median(cpu[name]!).toFixed(1)} µs CPU a request (client and server)   ${Math.round(median(rate[name]!))}/s   [${cpu[name]!.map((x) => x.toFixed(0)).join(', ')}]`,
    );
  }
  await pool.close();
  server.close();
}

/** The API server's own kind of certificate, generated as it generates one. */
function certificate(): { certPem: string; keyPem: string } {
  const dir = mkdtempSync(join(tmpdir(), 'response-write-ab-'));
  try {
    return ensureServingCertificates({ pkiDir: dir, bindAddress: '127.0.0.1' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
