// The node-usage ladder's server (node-usage-ladder.ts): the bare node:https server of
// bare-server.ts ('bytes' mode) with the API server's Node-level differences added one
// at a time, each as pkg/server/serve.ts, pkg/apiserver/api-handler.ts and
// pkg/apiserver/responses.ts do it: the server's options, its connection bookkeeping,
// the node flags (given at fork by the ladder), the request not read, the headers set
// before writeHead, a 'close' listener per response, the body written as writeParts
// does, the answer after a chain of awaits, and a request log line. Rung k has steps
// 1..k. Nothing is authenticated, stored or authorized. Bench only; bare-server.ts runs
// it as its 'node-usage' mode in a forked child.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { Socket } from 'node:net';

import { JsonLogger } from '../../pkg/util/log/json-logger.js';

/** What each rung adds to the one below it, in order (rung 1 is the first). */
export const NODE_USAGE_STEPS = [
  'requestCert (rejectUnauthorized false)',
  'maxHeaderSize 1 MiB, timeouts, connections checked every 1 s',
  'a Set of sockets with a close listener each; tlsClientError',
  "the server's node flags (16 MiB semi-space)",
  'the request not read (no req.resume())',
  'Cache-Control and Audit-Id by setHeader before writeHead',
  "a 'close' listener (a closure) per response",
  'the body as writeParts: writeHead, cork, write, end(newline)',
  'the answer after 8 awaits',
  'a request log line (JsonLogger to stdout)',
  '100 µs of busy JavaScript per request (a spin: about the real server pace)',
] as const;

/** The last rung's spin: about what the real server's own code takes a get (see NODE_USAGE_STEPS). */
const SPIN_MS = 0.1;

/** The rung from which the child runs with the server's node flags (the ladder forks it so). */
export const NODE_FLAGS_RUNG = NODE_USAGE_STEPS.indexOf("the server's node flags (16 MiB semi-space)") + 1;

/** bare-server.ts's mode for a rung of the ladder. */
export interface NodeUsageMode {
  readonly mode: 'node-usage';
  /** The real server's response body for the get, newline included. */
  readonly body: string;
  /** 0 is the bare server; see NODE_USAGE_STEPS. */
  readonly rung: number;
}

interface NodeUsageStart {
  readonly certPem: string;
  readonly keyPem: string;
  readonly body: string;
  readonly rung: number;
}

const AWAITS = 8;
const NEWLINE = Buffer.from('\n');

function serverOptions(s: NodeUsageStart): ServerOptions {
  const options: ServerOptions = { cert: s.certPem, key: s.keyPem, minVersion: 'TLSv1.2' };
  if (s.rung >= 1) {
    options.requestCert = true;
    options.rejectUnauthorized = false;
  }
  if (s.rung >= 2) {
    options.maxHeaderSize = 1 << 20;
    options.connectionsCheckingInterval = 1000;
  }
  return options;
}

function handlerFor(s: NodeUsageStart): (req: IncomingMessage, res: ServerResponse) => void {
  const rung = s.rung;
  const whole = Buffer.from(s.body);
  // writeParts writes the cached object's bytes, then the newline.
  const part = whole.subarray(0, whole.length - 1);
  const logger = rung >= 10 ? new JsonLogger('info') : undefined;

  const answer = (req: IncomingMessage, res: ServerResponse, started: number): void => {
    if (rung < 8) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': whole.length });
      res.end(whole);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': part.length + 1 });
    res.cork();
    res.write(part);
    res.end(NEWLINE);
    void started;
  };
  const chain = async (
    depth: number,
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
  ): Promise<void> => {
    if (depth === AWAITS) return answer(req, res, started);
    await chain(depth + 1, req, res, started);
  };

  return (req, res) => {
    const started = performance.now();
    if (rung < 5) req.resume();
    let auditID = '';
    if (rung >= 6) {
      const given = req.headers['audit-id'];
      auditID = typeof given === 'string' && given !== '' ? given : randomUUID();
      res.setHeader('Audit-Id', auditID);
      res.setHeader('Cache-Control', 'no-cache, private');
    }
    if (rung >= 7) {
      res.on('close', () => {
        if (!logger) return;
        logger.info('request', {
          method: req.method,
          path: req.url,
          auditID,
          verb: 'get',
          resource: 'users',
          name: 'getpath',
          user: 'admin',
          code: res.statusCode,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        });
      });
    }
    if (rung >= 11) {
      // Busy, as the real server is with its own work: no allocation, no I/O.
      const until = performance.now() + SPIN_MS;
      while (performance.now() < until);
    }
    if (rung >= 9) void chain(0, req, res, started);
    else answer(req, res, started);
  };
}

/**
 * The rung's server, not yet listening: bare-server.ts starts it (mode 'node-usage')
 * and answers the ladder's messages, as for its other baselines.
 */
export function nodeUsageServer(certPem: string, keyPem: string, mode: NodeUsageMode): Server {
  const s = { certPem, keyPem, body: mode.body, rung: mode.rung };
  const server = createServer(serverOptions(s), handlerFor(s));
  if (s.rung >= 2) {
    server.headersTimeout = 32_000;
    server.requestTimeout = 60_000;
    server.keepAliveTimeout = 90_000;
  }
  if (s.rung >= 3) {
    const sockets = new Set<Socket>();
    const forget = function (this: Socket): void {
      sockets.delete(this);
    };
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', forget);
    });
    server.on('tlsClientError', () => undefined);
  }
  return server;
}
