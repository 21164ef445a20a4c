// The KV contract over etcd v3, through the lean gRPC client in ./grpc-client.ts
// and the hand-written codecs in ./codecs.ts. The only module that talks to etcd;
// Kubernetes semantics live in ../store.ts.

import type { StorageDeadline } from '../deadline.js';
import { CompactedError, FutureRevisionError, prefixEnd } from '../kv.js';
import type {
  DeleteResult,
  KV,
  KeyValue,
  KVWatch,
  KVWatchHandlers,
  RangeOptions,
  RangeResult,
  TxnResult,
} from '../kv.js';
import {
  decodeHeaderOnly,
  decodeRange,
  decodeStatus,
  decodeTxn,
  EMPTY_MESSAGE,
  encodeCompaction,
  encodeRange,
  encodeTxn,
} from './codecs.js';
import type { RangeArgs, RangeReply, StatusReply, TxnCompare, TxnReply } from './codecs.js';
import { CompactedRevisionTracker } from './compacted-revision.js';
import { keyBytes, rangeEndBytes, rangeStartBytes } from './convert.js';
import { isEtcdCompacted, isEtcdFutureRevision } from './errors.js';
import { EtcdGrpcClient, isTransientEtcdError, METHOD } from './grpc-client.js';
import type { Etcd3TLS } from './grpc-client.js';
import { reliableProgressRequests } from './progress-support.js';
import { Etcd3Watch } from './watch.js';

export type { Etcd3TLS } from './grpc-client.js';

export interface Etcd3ConnectOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379` (`https://` with `tls`). */
  readonly endpoints: readonly string[];
  readonly tls?: Etcd3TLS;
  /** How long connect() waits for etcd to answer. Default 5s. */
  readonly dialTimeoutMs?: number;
  /**
   * Deadline for each request (not watches) made without a request's deadline
   * (storage/deadline.ts); with one, the earlier of the two. Default 60s,
   * Kubernetes' request timeout.
   */
  readonly requestTimeoutMs?: number;
}

// Any key works for a read that only wants the header; this one sorts before
// every real key and is never written.
const PROBE_KEY = Buffer.from([0]);
const PROBE: RangeArgs = { key: PROBE_KEY, limit: 1 };

const READ_ATTEMPTS = 3;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads are retried here on transient failures, writes are not: if a conditional
 * write's first attempt was applied and only its answer lost, a retry's compare
 * fails against our own write, and a create that succeeded reports "already exists".
 */
export class Etcd3KV implements KV {
  private readonly compaction: CompactedRevisionTracker;
  private readonly watches = new Set<Etcd3Watch>();
  private closed = false;
  /** The server orders requested progress notifications after events (see progress-support.ts). */
  private progressRequests = false;

  private constructor(
    private readonly client: EtcdGrpcClient,
    private readonly requestTimeoutMs: number,
  ) {
    this.compaction = new CompactedRevisionTracker(
      (revision) => this.readableAt(revision),
      () => this.currentRevision(),
    );
  }

  /** Connects and checks that etcd answers, so a wrong endpoint fails at startup. */
  static async connect(options: Etcd3ConnectOptions): Promise<Etcd3KV> {
    if (options.endpoints.length === 0) throw new Error('etcd: no endpoints given');
    const dialTimeoutMs = options.dialTimeoutMs ?? 5000;
    const client = new EtcdGrpcClient({
      endpoints: options.endpoints,
      ...(options.tls !== undefined ? { tls: options.tls } : {}),
    });
    const kv = new Etcd3KV(client, options.requestTimeoutMs ?? 60_000);
    try {
      await kv.probe(Date.now() + dialTimeoutMs, options.endpoints.length);
    } catch (err) {
      await kv.close();
      throw new Error(`etcd at ${options.endpoints.join(', ')} did not answer: ${(err as Error).message}`, {
        cause: err,
      });
    }
    kv.progressRequests = await kv.serverOrdersProgress();
    return kv;
  }

  /** One read that must succeed by `deadlineAt`, trying each member once (a member may be down at startup). */
  private async probe(deadlineAt: number, members: number): Promise<void> {
    const request = encodeRange(PROBE);
    for (let tried = 1; ; tried++) {
      try {
        await this.client.unary(METHOD.range, request, decodeRange, deadlineAt);
        return;
      } catch (err) {
        if (tried >= members || !isTransientEtcdError(err) || Date.now() >= deadlineAt) throw err;
      }
    }
  }

  /** Asks the server its version; an answer we cannot read counts as "no". */
  private async serverOrdersProgress(): Promise<boolean> {
    try {
      return reliableProgressRequests((await this.status()).version);
    } catch {
      return false;
    }
  }

  async get(
    key: string,
    revision = 0,
    deadline?: StorageDeadline,
  ): Promise<{ kv: KeyValue | undefined; revision: number }> {
    const res = await this.read({ key: keyBytes(key), revision }, deadline);
    return { kv: res.kvs[0], revision: revision || res.revision };
  }

  async range(
    start: string,
    end: string,
    options: RangeOptions = {},
    deadline?: StorageDeadline,
  ): Promise<RangeResult> {
    const revision = options.revision ?? 0;
    const res = await this.read(
      {
        key: rangeStartBytes(start),
        rangeEnd: rangeEndBytes(end),
        revision,
        limit: options.limit ?? 0,
      },
      deadline,
    );
    return {
      kvs: res.kvs,
      revision: revision || res.revision,
      more: res.more,
      // etcd counts the whole range whatever the limit, so the count costs nothing extra.
      ...(options.count ? { count: res.count } : {}),
    };
  }

  async create(key: string, value: Buffer, deadline?: StorageDeadline): Promise<TxnResult> {
    const k = keyBytes(key);
    const res = await this.txn(
      { key: k, target: 'create', result: 'equal', revision: 0 },
      { op: 'put', key: k, value },
      deadline,
    );
    return txnResult(res);
  }

  async update(
    key: string,
    value: Buffer,
    expectedModRevision: number,
    deadline?: StorageDeadline,
  ): Promise<TxnResult> {
    const k = keyBytes(key);
    const res = await this.txn(
      { key: k, target: 'mod', result: 'equal', revision: expectedModRevision },
      { op: 'put', key: k, value },
      deadline,
    );
    return txnResult(res);
  }

  async delete(key: string, expectedModRevision: number, deadline?: StorageDeadline): Promise<DeleteResult> {
    const k = keyBytes(key);
    // 0 means "whatever it is now": a missing key has mod_revision 0, so > 0 is "exists".
    const compare: TxnCompare =
      expectedModRevision === 0
        ? { key: k, target: 'mod', result: 'greater', revision: 0 }
        : { key: k, target: 'mod', result: 'equal', revision: expectedModRevision };
    const res = await this.txn(compare, { op: 'delete', key: k }, deadline);
    if (!res.succeeded) return txnResult(res);
    const deleted = res.kvs[0];
    return { ok: true, revision: res.revision, ...(deleted ? { deleted } : {}) };
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    const watch = new Etcd3Watch(
      {
        openStream: () => this.client.watch(),
        observeCompaction: (revision) => this.compaction.observe(revision),
        lastKnownCompaction: () => this.compaction.lastKnown,
        done: (w) => this.watches.delete(w),
      },
      rangeStartBytes(prefix),
      rangeEndBytes(prefixEnd(prefix)),
      fromRevision,
      handlers,
    );
    this.watches.add(watch);
    // Without ordered answers, a progress request would be worse than none: leave it out.
    return this.progressRequests ? watch : { cancel: () => watch.cancel() };
  }

  async currentRevision(deadline?: StorageDeadline): Promise<number> {
    return (await this.rangeRaw(PROBE, deadline)).revision;
  }

  compactedRevision(): Promise<number> {
    return this.compaction.current();
  }

  async compact(revision: number): Promise<void> {
    try {
      // physical: return only once the old revisions are really gone, so a read
      // right after compact() sees the compaction.
      await this.client.unary(
        METHOD.compact,
        encodeCompaction(revision, true),
        decodeHeaderOnly,
        this.deadline(),
      );
    } catch (err) {
      // Compacting to a revision at or below the last compaction has nothing to do.
      if (isEtcdCompacted(err)) return;
      if (isEtcdFutureRevision(err)) throw new FutureRevisionError(revision, await this.currentRevision());
      throw err;
    }
    this.compaction.observe(revision);
  }

  /** The member's database size (etcd's Status dbSize), as kube-apiserver's storage monitor reads it. */
  async sizeBytes(): Promise<number | undefined> {
    if (this.closed) return undefined;
    return (await this.status()).dbSize;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches]) watch.fail(new Error('the etcd client was closed'));
    this.client.close();
  }

  /** The deadline of one call: the one it was given (storage/deadline.ts), never past our own bound. */
  private deadline(request?: StorageDeadline): number {
    const own = Date.now() + this.requestTimeoutMs;
    return request !== undefined && request.deadlineAt < own ? request.deadlineAt : own;
  }

  private status(): Promise<StatusReply> {
    return this.client.unary(METHOD.status, EMPTY_MESSAGE, decodeStatus, this.deadline());
  }

  /** A range, retried on transient failures (a read can be repeated safely). */
  private async rangeRaw(req: RangeArgs, deadline?: StorageDeadline): Promise<RangeReply> {
    const request = encodeRange(req);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.unary(METHOD.range, request, decodeRange, this.deadline(deadline));
      } catch (err) {
        if (attempt >= READ_ATTEMPTS || this.closed || !isTransientEtcdError(err)) throw err;
        await sleep(50 * attempt);
      }
    }
  }

  /**
   * A range that turns etcd's revision errors into the contract's. The compacted
   * revision's search is shared by concurrent callers, so it runs under no caller's deadline.
   */
  private async read(req: RangeArgs, deadline?: StorageDeadline): Promise<RangeReply> {
    try {
      return await this.rangeRaw(req, deadline);
    } catch (err) {
      const revision = req.revision ?? 0;
      if (isEtcdCompacted(err)) throw new CompactedError(revision, await this.compaction.current(revision));
      if (isEtcdFutureRevision(err))
        throw new FutureRevisionError(revision, await this.currentRevision(deadline));
      throw err;
    }
  }

  private async readableAt(revision: number): Promise<boolean> {
    try {
      await this.rangeRaw({ key: PROBE_KEY, limit: 1, revision });
      return true;
    } catch (err) {
      if (isEtcdCompacted(err)) return false;
      throw err;
    }
  }

  /** One attempt (see above); on failure the key is read back as it stands. */
  private txn(
    compare: TxnCompare,
    success: Parameters<typeof encodeTxn>[1],
    deadline: StorageDeadline | undefined,
  ): Promise<TxnReply> {
    const request = encodeTxn(compare, success, { op: 'range', key: compare.key });
    return this.client.unary(METHOD.txn, request, decodeTxn, this.deadline(deadline));
  }
}

function txnResult(res: TxnReply): TxnResult {
  if (res.succeeded) return { ok: true, revision: res.revision };
  const current = res.kvs[0];
  return { ok: false, revision: res.revision, ...(current ? { current } : {}) };
}
