// The raw HTTP baselines: a bare node:https server (no routing, no authentication,
// no storage) with the same certificate as the API server. It answers every request
// with fixed bytes, or by serializing a list of objects, or holds the response open
// as an idle watch would, or stands in for the API server's watch fan-out (the limit
// of Node and TLS on this machine). Run as a forked child; measured through IPC.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LadderMode } from './ladder-handler.js';
import type { NodeUsageMode } from './node-usage-server.js';
import { heapSnapshot, memory } from './memory.js';
import { profile, type ProfileCommand } from './profiler.js';

export type BareMode =
  | { readonly mode: 'bytes'; readonly body: string }
  | {
      readonly mode: 'list';
      readonly list: { kind: string; apiVersion: string; metadata: unknown; items: unknown[] };
    }
  | { readonly mode: 'stream' }
  /**
   * The watch fan-out's fair baseline: a GET with `watch=1` is held as a watch stream,
   * any other GET answers an empty list, and a POST is a "write": answered with its
   * resourceVersion, then the event (`event` with `@RV@` replaced) is framed once as an
   * HTTP/1.1 chunk and the same bytes written to every stream's socket, as the API server
   * does with a shared event.
   */
  | { readonly mode: 'broadcast'; readonly event: string }
  /** 'bytes' with the API server's mandatory steps of a get added one at a time (get-ladder.ts). */
  | LadderMode
  /** 'bytes' with the API server's Node-level usage added one difference at a time (node-usage-ladder.ts). */
  | NodeUsageMode;

export interface BareStart {
  readonly certPem: string;
  readonly keyPem: string;
  readonly behaviour: BareMode;
}

export type BareMessage =
  | { id: number; start: BareStart }
  | { id: number; memory: true }
  | { id: number; heapSnapshot: string }
  | { id: number; cpu: true }
  | { id: number; profile: ProfileCommand }
  | { id: number; parse: { template: string; count: number } }
  | { id: number; stop: true };

/** Objects held by the plain-JSON.parse baseline. */
let parsed: unknown[] = [];

let server: Server | undefined;
const held: ServerResponse[] = [];

function handlerFor(b: BareMode): (req: IncomingMessage, res: ServerResponse) => void {
  switch (b.mode) {
    case 'bytes': {
      const body = Buffer.from(b.body);
      return (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
      };
    }
    case 'list':
      return (_req, res) => {
        const body = `${JSON.stringify(b.list)}\n`;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      };
    case 'stream':
      return (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
        res.flushHeaders();
        held.push(res);
      };
    case 'broadcast':
      return broadcaster(b.event);
    case 'ladder':
    case 'node-usage':
      throw new Error('the ladders are loaded by start()');
  }
}

function broadcaster(event: string): (req: IncomingMessage, res: ServerResponse) => void {
  const streams = new Set<ServerResponse>();
  let revision = 0;
  const answer = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  return (req, res) => {
    if (req.method === 'POST') {
      req.on('end', () => {
        const rv = String(++revision);
        answer(res, 201, `{"metadata":{"resourceVersion":"${rv}"}}`);
        const line = Buffer.from(`${event.replaceAll('@RV@', rv)}\n`);
        const frame = Buffer.concat([
          Buffer.from(`${line.length.toString(16)}\r\n`),
          line,
          Buffer.from('\r\n'),
        ]);
        for (const stream of streams) stream.socket?.write(frame);
      });
      return;
    }
    if (!req.url?.includes('watch=1')) {
      answer(
        res,
        200,
        `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"${revision}"},"items":[]}`,
      );
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    streams.add(res);
    held.push(res);
    res.on('close', () => streams.delete(res));
  };
}

async function start(s: BareStart): Promise<{ origin: string }> {
  if (s.behaviour.mode === 'node-usage') {
    server = (await import('./node-usage-server.js')).nodeUsageServer(s.certPem, s.keyPem, s.behaviour);
    return listen(server);
  }
  // Only the ladders load the project's modules: the other baselines stay bare.
  const handle =
    s.behaviour.mode === 'ladder'
      ? (await import('./ladder-handler.js')).ladderHandler(s.behaviour)
      : handlerFor(s.behaviour);
  server = createServer({ cert: s.certPem, key: s.keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
    req.resume();
    handle(req, res);
  });
  return listen(server);
}

async function listen(s: Server): Promise<{ origin: string }> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { origin: `https://127.0.0.1:${(s.address() as AddressInfo).port}` };
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
    } else if ('heapSnapshot' in msg) {
      reply({ result: heapSnapshot(msg.heapSnapshot) });
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
