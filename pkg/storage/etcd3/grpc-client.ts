// A lean etcd v3 gRPC client: per endpoint, one node:http2 session for the unary
// calls (http2-unary.ts: grpc-js's per-call layers cost more than the stream,
// docs/performance/unary-calls-on-node-http2.md) and one @grpc/grpc-js client for
// the Watch streams; the messages encoded and decoded by codecs.ts, and nothing
// else on the call path. It replaces the etcd3 package, whose per-call layers (proto-loader
// reflection into default-filled objects with int64s as strings, a retry policy, a
// circuit breaker, a shuffled host generator, call-option resolution) cost more CPU
// than the gRPC call itself (docs/performance/etcd-client.md).
//
// Failover, as etcd's own clients do it: calls go to one member while it answers;
// a call that fails for want of a connection (UNAVAILABLE) or that the member did
// not answer in time moves the next calls to the next member, and a member whose
// connection is failing (its last connect failed, within the backoff; for watches,
// a channel in TRANSIENT_FAILURE) is passed over. Reconnect backoff is capped at a
// second, so after an outage a member is tried again within a second of coming
// back (grpc-js's default cap is two minutes). Retrying is the caller's decision:
// a conditional write must not be repeated blindly (see etcd3-kv.ts).

import * as grpc from '@grpc/grpc-js';
import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import type { WatchReply } from './codecs.js';
import { decodeWatch } from './codecs.js';
import { Http2UnaryTransport } from './http2-unary.js';

export interface Etcd3TLS {
  /** PEM: the CA that signed etcd's serving certificate. */
  readonly ca: string | Buffer;
  /** PEM client certificate and key, when etcd asks for client certificates. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

export interface EtcdGrpcClientOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379` (`https://` with `tls`). */
  readonly endpoints: readonly string[];
  readonly tls?: Etcd3TLS;
}

export const METHOD = {
  range: '/etcdserverpb.KV/Range',
  txn: '/etcdserverpb.KV/Txn',
  compact: '/etcdserverpb.KV/Compact',
  status: '/etcdserverpb.Maintenance/Status',
  watch: '/etcdserverpb.Watch/Watch',
} as const;

export type WatchStream = ClientDuplexStream<Buffer, WatchReply>;

/** A call made after close(). */
export class EtcdClientClosedError extends Error {
  override readonly name = 'EtcdClientClosedError';
  constructor() {
    super('the etcd client was closed');
  }
}

const { status } = grpc;

/** Failures where the same call may succeed on a retry or another member. */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  status.UNAVAILABLE,
  status.INTERNAL,
  status.UNKNOWN,
  status.ABORTED,
  status.RESOURCE_EXHAUSTED,
]);

function grpcCode(err: unknown): number | undefined {
  const code = (err as Partial<ServiceError> | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A read that failed this way is worth repeating (etcd restarting, leader changing, a lost connection). */
export function isTransientEtcdError(err: unknown): boolean {
  const code = grpcCode(err);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

/**
 * How long a call must have gone unanswered before its deadline counts against the
 * member. A call's deadline is often the request's own (`?timeout=1s`, or what is
 * left of it): that running out says nothing of the member, and moving every later
 * call elsewhere for it would let one impatient client shuffle the server between
 * members. A member silent this long (storage calls are bounded at 4 s) is not
 * answering.
 */
export const MEMBER_SILENCE_MS = 2000;

/** The member is not reachable or not answering: later calls should go elsewhere. */
function isMemberFailure(err: unknown, startedAt: number): boolean {
  const code = grpcCode(err);
  if (code === status.UNAVAILABLE) return true;
  return code === status.DEADLINE_EXCEEDED && Date.now() - startedAt >= MEMBER_SILENCE_MS;
}

const toBuffer = (pem: string | Buffer): Buffer => (typeof pem === 'string' ? Buffer.from(pem) : pem);
const passThrough = (b: Buffer): Buffer => b;

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // A full list can exceed gRPC's 4 MiB default; etcd bounds requests itself.
  'grpc.max_receive_message_length': -1,
  // Notice a dead connection under a long-idle watch (etcd allows pings every 5s).
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  // A member back from an outage is reconnected within a second (see the header).
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  // Per-call bookkeeping for a debugging service this server does not expose.
  'grpc.enable_channelz': 0,
};

function credentialsFor(endpoint: URL, tls: Etcd3TLS | undefined): grpc.ChannelCredentials {
  if (endpoint.protocol !== 'https:') return grpc.credentials.createInsecure();
  // Without a CA, an https endpoint is verified against the system's roots.
  if (tls === undefined) return grpc.credentials.createSsl();
  return grpc.credentials.createSsl(
    toBuffer(tls.ca),
    tls.key !== undefined ? toBuffer(tls.key) : null,
    tls.cert !== undefined ? toBuffer(tls.cert) : null,
  );
}

export class EtcdGrpcClient {
  private readonly members: grpc.Client[];
  /** Per member, the node:http2 transport of the unary calls. */
  private readonly unaryMembers: Http2UnaryTransport[];
  /** The member calls go to while it answers. */
  private current = 0;
  private closed = false;

  constructor(options: EtcdGrpcClientOptions) {
    if (options.endpoints.length === 0) throw new Error('etcd: no endpoints given');
    this.members = options.endpoints.map((endpoint) => {
      const url = new URL(endpoint);
      return new grpc.Client(url.host, credentialsFor(url, options.tls), CHANNEL_OPTIONS);
    });
    this.unaryMembers = options.endpoints.map(
      (endpoint) => new Http2UnaryTransport(new URL(endpoint).origin, options.tls),
    );
  }

  /** One request, one response; `deadlineAt` is wall-clock ms. Rejects with the gRPC error. */
  unary<T>(method: string, request: Buffer, decode: (reply: Buffer) => T, deadlineAt: number): Promise<T> {
    if (this.closed) return Promise.reject(new EtcdClientClosedError());
    const startedAt = Date.now();
    const unaryMembers = this.unaryMembers;
    const index = this.pick((i) => (unaryMembers[i] as Http2UnaryTransport).failing);
    return (unaryMembers[index] as Http2UnaryTransport).call(method, request, decode, deadlineAt).catch((err) => {
      if (isMemberFailure(err, startedAt)) this.memberFailed(index);
      throw err;
    });
  }

  /** A new Watch stream (requests are encoded WatchRequests). Throws once closed. */
  watch(): WatchStream {
    if (this.closed) throw new EtcdClientClosedError();
    const index = this.pick(this.channelFailing);
    const member = this.members[index] as grpc.Client;
    const startedAt = Date.now();
    const stream = member.makeBidiStreamRequest(METHOD.watch, passThrough, decodeWatch, {});
    stream.on('error', (err: unknown) => {
      if (isMemberFailure(err, startedAt)) this.memberFailed(index);
    });
    return stream;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const member of this.members) member.close();
    for (const member of this.unaryMembers) member.close();
  }

  private readonly channelFailing = (index: number): boolean =>
    (this.members[index] as grpc.Client).getChannel().getConnectivityState(false) ===
    grpc.connectivityState.TRANSIENT_FAILURE;

  /** The current member, or the next one whose connection is not known to be failing. */
  private pick(failing: (index: number) => boolean): number {
    const n = this.members.length;
    if (n === 1) return 0;
    for (let i = 0; i < n; i++) {
      const index = (this.current + i) % n;
      if (!failing(index)) {
        this.current = index;
        return index;
      }
    }
    return this.current;
  }

  private memberFailed(index: number): void {
    if (this.current === index) this.current = (index + 1) % this.members.length;
  }
}
