// The raw HTTP baselines: a bare node:https server (no routing, no authentication,
// no storage) with the same certificate as the API server. It answers every request
// with fixed bytes, or by serializing a list of objects, or holds the response open
// as an idle watch would. Run as a forked child; measured through IPC.

import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memory } from './memory.js';
import { profile, type ProfileCommand } from './profiler.js';

export type BareMode =
  | { readonly mode: 'bytes'; readonly body: string }
  | {
      readonly mode: 'list';
      readonly list: { kind: string; apiVersion: string; metadata: unknown; items: unknown[] };
    }
  | { readonly mode: 'stream' };

export interface BareStart {
  readonly certPem: string;
  readonly keyPem: string;
  readonly behaviour: BareMode;
}

export type BareMessage =
  | { id: number; start: BareStart }
  | { id: number; memory: true }
  | { id: number; cpu: true }
  | { id: number; profile: ProfileCommand }
  | { id: number; parse: { template: string; count: number } }
  | { id: number; stop: true };

/** Objects held by the plain-JSON.parse baseline. */
let parsed: unknown[] = [];

let server: Server | undefined;
const held: ServerResponse[] = [];

function handlerFor(b: BareMode): (res: ServerResponse) => void {
  switch (b.mode) {
    case 'bytes': {
      const body = Buffer.from(b.body);
      return (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
      };
    }
    case 'list':
      return (res) => {
        const body = `${JSON.stringify(b.list)}\n`;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      };
    case 'stream':
      return (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
        res.flushHeaders();
        held.push(res);
      };
  }
}

async function start(s: BareStart): Promise<{ origin: string }> {
  const handle = handlerFor(s.behaviour);
  server = createServer({ cert: s.certPem, key: s.keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
    req.resume();
    handle(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

if (process.send) {
  process.on('message', (msg: BareMessage) => {
    const reply = (body: Record<string, unknown>): void => void process.send?.({ id: msg.id, ...body });
    if ('start' in msg) {
      start(msg.start).then(
        (r) => reply({ result: r }),
        (err: unknown) => reply({ error: String(err) }),
      );
    } else if ('profile' in msg) {
      profile(msg.profile).then(
        (r) => reply({ result: r }),
        (err: unknown) => reply({ error: String(err) }),
      );
    } else if ('cpu' in msg) {
      reply({ result: process.cpuUsage() });
    } else if ('memory' in msg) {
      reply({ result: memory() });
    } else if ('parse' in msg) {
      // The same objects as plain JSON.parse output: the memory baseline for the cache.
      const before = memory();
      const { template, count } = msg.parse;
      parsed = [];
      for (let i = 0; i < count; i++)
        parsed.push(JSON.parse(template.replaceAll('@N@', String(i).padStart(6, '0'))));
      reply({ result: { before, after: memory(), count: parsed.length } });
    } else {
      for (const res of held) res.destroy();
      server?.closeAllConnections();
      server?.close(() => reply({ result: {} }));
    }
  });
  process.on('disconnect', () => process.exit(0));
}
