// A fake etcd member for the etcd client's tests: a plain-text local HTTP/2 server
// that plays etcd's gRPC side. Each call's request body is read whole and handed to
// `handler` (by default an echo: the request's framed message back as an OK reply),
// after `delayMs` when set; the member counts its calls and keeps its sessions, so
// a test can send a GOAWAY or see how many the client opened. It frames replies
// itself (gRPC's 5-byte length prefix), never through the code under test.

import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void;

export interface FakeMember {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly port: number;
  /** Every session a client opened, in order. */
  readonly sessions: http2.ServerHttp2Session[];
  /** Calls received. */
  calls: number;
  /** Ms a call waits, once its request has arrived, before the handler answers it. */
  delayMs: number;
  handler: Handler;
  /** Destroys its sessions and stops listening. */
  close(): Promise<void>;
}

/** One gRPC message as it travels: uncompressed flag, 4-byte big-endian length, message. */
export function grpcFrame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** Echoes the request's framed message back, as an OK reply (unless the call is gone). */
export const echo: Handler = (stream, _headers, body) => {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(body);
};

/** A member listening on 127.0.0.1 at `port` (0: any free port). */
export async function startFakeMember(port = 0): Promise<FakeMember> {
  const server = http2.createServer();
  const member: FakeMember = {
    origin: '',
    port: 0,
    sessions: [],
    calls: 0,
    delayMs: 0,
    handler: echo,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of member.sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('session', (s) => member.sessions.push(s));
  server.on('stream', (stream, headers) => {
    member.calls++;
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => undefined);
    stream.on('end', () => {
      const answer = (): void => member.handler(stream, headers, Buffer.concat(chunks));
      if (member.delayMs > 0) setTimeout(answer, member.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return Object.assign(member, { origin: `http://127.0.0.1:${bound}`, port: bound });
}

/** The origin of a local port nothing listens on (a member that refuses connections). */
export async function unreachableOrigin(): Promise<string> {
  const probe = await startFakeMember();
  await probe.close();
  return probe.origin;
}
