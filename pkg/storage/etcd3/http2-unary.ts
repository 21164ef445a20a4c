// Unary gRPC calls to one etcd member, written directly on a node:http2 session
// instead of through @grpc/grpc-js (docs/performance/unary-calls-on-node-http2.md):
// grpc-js's per-call layers (call stream objects, filters, metadata,
// the resolving/load-balancing channel) cost more server CPU than the HTTP/2 stream
// under them. The Watch streams stay on grpc-js (grpc-client.ts).
//
// The wire, from grpc/grpc doc/PROTOCOL-HTTP2.md: a POST to the method's path with
// `content-type: application/grpc` and `te: trailers` (and `grpc-timeout`), a body
// of one length-prefixed message (a compressed flag, a 4-byte big-endian length,
// the protobuf bytes); the answer is `:status 200`, one length-prefixed message and
// trailers carrying `grpc-status` and percent-encoded `grpc-message`, or a
// trailers-only answer with `grpc-status` in the headers.
//
// Failures come back shaped as grpc-js's ServiceError (a numeric `code`, `details`,
// the message "<code> <NAME>: <details>"), with the codes grpc-js gives the same
// transport events (its subchannel-call.ts): a lost connection, a GOAWAY or a
// REFUSED_STREAM reset is UNAVAILABLE, a CANCEL reset CANCELLED, a local deadline
// DEADLINE_EXCEEDED. So errors.ts and the retry/failover rules in grpc-client.ts
// and etcd3-kv.ts read them unchanged.
//
// One session per member, shared by every call; a session that errors, closes or
// receives GOAWAY is dropped and the next call makes a new one. A connection that
// could not be made is retried no sooner than a backoff (100 ms growing to 1 s, as
// grpc-client.ts configures grpc-js), and calls in between fail at once with
// UNAVAILABLE, as grpc-js fails calls on a channel in TRANSIENT_FAILURE. Keepalive
// as grpc-js does it with the same settings: while calls are open, a PING every
// 30 s that must be answered within 10 s, or the session is destroyed (a peer
// stopped with SIGSTOP answers nothing, and its calls fail over).

import * as http2 from 'node:http2';
import type { SecureClientSessionOptions } from 'node:http2';
import { status } from '@grpc/grpc-js';
import { Backoff } from '../../util/backoff.js';
import type { Etcd3TLS } from './grpc-client.js';

/** The gRPC status codes (grpc's codes.proto numbering), as grpc-js names them. */
export const GrpcCode = status;

/** A failed call, with the fields grpc-js's ServiceError has. */
export class GrpcCallError extends Error {
  override readonly name = 'GrpcCallError';
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${(status as Record<number, string>)[code] ?? 'UNKNOWN'}: ${details}`);
  }
}

const INITIAL_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;
const BACKOFF_MULTIPLIER = 1.6;
/** grpc-js's minimum connect timeout: a handshake that never finishes is given up. */
const CONNECT_TIMEOUT_MS = 20_000;
const KEEPALIVE_TIME_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;
/** grpc-timeout allows at most 8 digits. */
const MAX_TIMEOUT_MS = 99_999_999;

const {
  HTTP2_HEADER_METHOD,
  HTTP2_HEADER_PATH,
  HTTP2_HEADER_STATUS,
  HTTP2_HEADER_CONTENT_TYPE,
  HTTP2_HEADER_TE,
  NGHTTP2_CANCEL,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_ENHANCE_YOUR_CALM,
  NGHTTP2_INADEQUATE_SECURITY,
} = http2.constants;

/** What an HTTP status without a grpc-status means (PROTOCOL-HTTP2.md, http-grpc-status-mapping.md). */
function codeForHttpStatus(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return GrpcCode.INTERNAL;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcCode.UNAVAILABLE;
    default:
      return GrpcCode.UNKNOWN;
  }
}

/** The code grpc-js gives a stream reset by the peer without a grpc-status. */
function codeForReset(rstCode: number): number {
  switch (rstCode) {
    case NGHTTP2_REFUSED_STREAM:
      return GrpcCode.UNAVAILABLE;
    case NGHTTP2_CANCEL:
      return GrpcCode.CANCELLED;
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case NGHTTP2_INADEQUATE_SECURITY:
      return GrpcCode.PERMISSION_DENIED;
    default:
      return GrpcCode.INTERNAL;
  }
}

function decodeGrpcMessage(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The message behind its 5-byte gRPC prefix (not compressed, then the length), in
 * one buffer: the stream is then written once, as one DATA frame with END_STREAM.
 * Written as prefix and message, each call paid a second stream write (its write
 * request, and a DATA frame of 5 bytes for etcd to parse) for a copy of ~1 KiB.
 */
function framed(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/** request()'s options, the same for every call (Node copies them). */
const REQUEST_OPTIONS: http2.ClientSessionRequestOptions = { endStream: false };

interface Session {
  readonly h2: http2.ClientHttp2Session;
  /** Calls open on it: the socket keeps the process alive only while there are some. */
  open: number;
  pinger: NodeJS.Timeout | undefined;
}

/** Keepalive timing: grpc-client.ts's grpc-js settings unless a test shortens them. */
export interface KeepaliveTiming {
  readonly timeMs: number;
  readonly timeoutMs: number;
}

const KEEPALIVE: KeepaliveTiming = { timeMs: KEEPALIVE_TIME_MS, timeoutMs: KEEPALIVE_TIMEOUT_MS };

export class Http2UnaryTransport {
  private session: Session | undefined;
  private readonly backoff = new Backoff(INITIAL_BACKOFF_MS, MAX_BACKOFF_MS, { factor: BACKOFF_MULTIPLIER });
  /** While Date.now() is before this, the last connection attempt failed: calls fail fast. */
  private retryAt = 0;
  private closed = false;
  private readonly connectOptions: SecureClientSessionOptions;

  constructor(
    private readonly origin: string,
    tls: Etcd3TLS | undefined,
    private readonly keepalive: KeepaliveTiming = KEEPALIVE,
  ) {
    this.connectOptions = {
      // The same TLS material as the grpc-js channel's createSsl(ca, key, cert);
      // without a CA an https member is verified against the system's roots.
      ...(tls !== undefined ? { ca: tls.ca } : {}),
      ...(tls?.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls?.key !== undefined ? { key: tls.key } : {}),
      settings: { enablePush: false },
      // A full list can be large; the default session cap (10 MB) would reset it.
      maxSessionMemory: 256,
    };
  }

  /** True while the last connection attempt failed and the backoff has not run out. */
  get failing(): boolean {
    return this.session === undefined && Date.now() < this.retryAt;
  }

  call<T>(method: string, request: Buffer, decode: (reply: Buffer) => T, deadlineAt: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = Math.ceil(deadlineAt - Date.now());
      if (timeoutMs <= 0) {
        reject(new GrpcCallError(GrpcCode.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        return;
      }
      if (this.closed) {
        reject(new GrpcCallError(GrpcCode.UNAVAILABLE, 'Channel has been shut down'));
        return;
      }
      const session = this.usableSession();
      if (session === undefined) {
        reject(new GrpcCallError(GrpcCode.UNAVAILABLE, `No connection established to ${this.origin}`));
        return;
      }
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.h2.request(
          {
            [HTTP2_HEADER_METHOD]: 'POST',
            [HTTP2_HEADER_PATH]: method,
            [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
            [HTTP2_HEADER_TE]: 'trailers',
            'grpc-timeout': `${Math.min(timeoutMs, MAX_TIMEOUT_MS)}m`,
          },
          REQUEST_OPTIONS,
        );
      } catch (err) {
        // The session went away between the check and the request (GOAWAY, destroyed).
        this.drop(session);
        reject(new GrpcCallError(GrpcCode.UNAVAILABLE, `connection lost: ${(err as Error).message}`));
        return;
      }
      this.opened(session);

      const chunks: Buffer[] = [];
      let received = 0;
      let httpStatus = 0;
      let grpcStatus: number | undefined;
      let grpcMessage = '';
      let settled = false;
      const finish = (err: GrpcCallError | undefined, reply?: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        this.closedOne(session);
        if (err !== undefined) reject(err);
        else resolve(reply as T);
      };
      const deadline = setTimeout(() => {
        stream.close(NGHTTP2_CANCEL);
        finish(new GrpcCallError(GrpcCode.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      }, timeoutMs);

      const readStatus = (headers: http2.IncomingHttpHeaders): void => {
        const raw = headers['grpc-status'];
        if (raw !== undefined) {
          grpcStatus = Number(raw);
          grpcMessage = decodeGrpcMessage(headers['grpc-message']);
        }
      };
      stream.on('response', (headers) => {
        httpStatus = Number(headers[HTTP2_HEADER_STATUS]);
        readStatus(headers);
      });
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
      });
      stream.on('error', () => {
        // Reported by 'close' below, from the reset code and the session's state.
      });
      stream.on('close', () => {
        if (settled) return;
        if (grpcStatus === undefined) {
          if (httpStatus !== 0 && httpStatus !== 200) {
            finish(new GrpcCallError(codeForHttpStatus(httpStatus), `Received HTTP status code ${httpStatus}`));
          } else if (session.h2.destroyed || session.h2.closed || stream.rstCode === undefined) {
            finish(new GrpcCallError(GrpcCode.UNAVAILABLE, 'Connection dropped'));
          } else {
            const code = codeForReset(stream.rstCode);
            finish(new GrpcCallError(code, `Received RST_STREAM with code ${stream.rstCode}`));
          }
          return;
        }
        if (grpcStatus !== GrpcCode.OK) {
          finish(new GrpcCallError(grpcStatus, grpcMessage));
          return;
        }
        finish(...this.decodeReply(chunks, received, decode));
      });

      stream.end(framed(request));
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const session = this.session;
    if (session !== undefined) {
      this.drop(session);
      // Calls still open finish; new ones are refused (close, not destroy).
      session.h2.close();
    }
  }

  private decodeReply<T>(
    chunks: readonly Buffer[],
    received: number,
    decode: (reply: Buffer) => T,
  ): [GrpcCallError | undefined, T?] {
    // One concat at most: a small reply arrives in one DATA frame.
    const data = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
    if (data.length < 5) return [new GrpcCallError(GrpcCode.INTERNAL, 'no message in the response')];
    if (data[0] !== 0) return [new GrpcCallError(GrpcCode.INTERNAL, 'compressed response without grpc-encoding')];
    const length = data.readUInt32BE(1);
    if (data.length !== 5 + length)
      return [new GrpcCallError(GrpcCode.INTERNAL, 'the response is not one length-prefixed message')];
    try {
      return [undefined, decode(data.subarray(5))];
    } catch (err) {
      return [new GrpcCallError(GrpcCode.INTERNAL, `response could not be decoded: ${(err as Error).message}`)];
    }
  }

  /** The live session, or a new one; undefined during the backoff after a failed connect. */
  private usableSession(): Session | undefined {
    const current = this.session;
    if (current !== undefined && !current.h2.closed && !current.h2.destroyed) return current;
    this.session = undefined;
    if (Date.now() < this.retryAt) return undefined;
    return this.connect();
  }

  private connect(): Session {
    const h2 = http2.connect(this.origin, this.connectOptions);
    const session: Session = { h2, open: 0, pinger: undefined };
    this.session = session;
    let connected = false;
    const connectTimer = setTimeout(() => h2.destroy(), CONNECT_TIMEOUT_MS);
    connectTimer.unref();
    h2.once('connect', () => {
      connected = true;
      clearTimeout(connectTimer);
      this.backoff.reset();
      this.retryAt = 0;
    });
    const lost = (): void => {
      clearTimeout(connectTimer);
      if (!connected && this.session === session) {
        this.retryAt = Date.now() + this.backoff.step();
      }
      this.drop(session);
    };
    h2.on('error', lost);
    h2.on('close', lost);
    // Node shuts the session down itself after a GOAWAY; its open calls finish.
    h2.on('goaway', () => this.drop(session));
    h2.unref();
    return session;
  }

  private drop(session: Session): void {
    if (this.session === session) this.session = undefined;
    if (session.pinger !== undefined) {
      clearInterval(session.pinger);
      session.pinger = undefined;
    }
  }

  private opened(session: Session): void {
    if (session.open++ === 0) session.h2.ref();
    if (session.pinger === undefined && this.session === session) {
      session.pinger = setInterval(() => this.ping(session), this.keepalive.timeMs);
      session.pinger.unref();
    }
  }

  private closedOne(session: Session): void {
    if (--session.open === 0 && !session.h2.destroyed) session.h2.unref();
  }

  /** Only while calls are open: etcd (grpc-go) counts pings on an idle connection as abuse. */
  private ping(session: Session): void {
    if (session.open === 0 || session.h2.destroyed || session.h2.closed) return;
    const timeout = setTimeout(() => session.h2.destroy(), this.keepalive.timeoutMs);
    timeout.unref();
    try {
      session.h2.ping((err) => {
        clearTimeout(timeout);
        if (err) session.h2.destroy();
      });
    } catch {
      clearTimeout(timeout);
    }
  }
}
