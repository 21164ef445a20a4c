// The KV contract over etcd v3, through the etcd3 package's low-level gRPC clients.
// The only module that talks to etcd; Kubernetes semantics live in ../store.ts.

import { Etcd3, isRecoverableError } from 'etcd3';
import type { IOptions, IRangeRequest, IRangeResponse, IResponseOp, ITxnRequest, ITxnResponse } from 'etcd3';
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
import { CompactedRevisionTracker } from './compacted-revision.js';
import { headerRevision, keyBytes, rangeEndBytes, rangeStartBytes, toKeyValue } from './convert.js';
import { isEtcdCompacted, isEtcdFutureRevision } from './errors.js';
import { reliableProgressRequests } from './progress-support.js';
import { Etcd3Watch } from './watch.js';

export interface Etcd3TLS {
  /** PEM: the CA that signed etcd's serving certificate. */
  readonly ca: string | Buffer;
  /** PEM client certificate and key, when etcd asks for client certificates. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

export interface Etcd3ConnectOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379` (`https://` with `tls`). */
  readonly endpoints: readonly string[];
  readonly tls?: Etcd3TLS;
  /** How long connect() waits for etcd to answer. Default 5s. */
  readonly dialTimeoutMs?: number;
  /** Deadline for each request (not watches). Default 60s, Kubernetes' request timeout. */
  readonly requestTimeoutMs?: number;
}

// Any key works for a read that only wants the header; this one sorts before
// every real key and is never written.
const PROBE_KEY = Buffer.from([0]);

const READ_ATTEMPTS = 3;

const toBuffer = (pem: string | Buffer): Buffer => (typeof pem === 'string' ? Buffer.from(pem) : pem);

type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * The etcd3 package retries every call that fails with a transient gRPC error. For a
 * conditional write that is wrong: if the first attempt was applied and only its
 * answer lost, the retry's compare fails against our own write, and a create that
 * succeeded reports "already exists". So the package makes one attempt, and reads,
 * which are safe to repeat, are retried here.
 */
// Nothing aborts a single attempt: one signal serves every call (an AbortController
// per call showed in request profiles).
const NEVER_ABORTED = new AbortController().signal;
const SINGLE_ATTEMPT = {
  execute: <T>(fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve().then(() => fn({ signal: NEVER_ABORTED, attempt: 0 })),
} as unknown as GlobalPolicy;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class Etcd3KV implements KV {
  private readonly compaction: CompactedRevisionTracker;
  private readonly watches = new Set<Etcd3Watch>();
  private closed = false;
  /** The server orders requested progress notifications after events (see progress-support.ts). */
  private progressRequests = false;

  private constructor(private readonly client: Etcd3) {
    this.compaction = new CompactedRevisionTracker(
      (revision) => this.readableAt(revision),
      () => this.currentRevision(),
    );
  }

  /** Connects and checks that etcd answers, so a wrong endpoint fails at startup. */
  static async connect(options: Etcd3ConnectOptions): Promise<Etcd3KV> {
    if (options.endpoints.length === 0) throw new Error('etcd: no endpoints given');
    const dialTimeoutMs = options.dialTimeoutMs ?? 5000;
    const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    const clientOptions: IOptions = {
      hosts: [...options.endpoints],
      faultHandling: { global: SINGLE_ATTEMPT },
      // A request to an etcd that stopped answering (not refusing) would otherwise wait forever.
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
      grpcOptions: {
        // A full list can exceed gRPC's 4 MiB default; etcd bounds requests itself.
        'grpc.max_receive_message_length': -1,
        // Notice a dead connection under a long-idle watch (etcd allows pings every 5s).
        'grpc.keepalive_time_ms': 30_000,
        'grpc.keepalive_timeout_ms': 10_000,
      },
    };
    if (options.tls !== undefined) {
      clientOptions.credentials = {
        rootCertificate: toBuffer(options.tls.ca),
        ...(options.tls.key !== undefined ? { privateKey: toBuffer(options.tls.key) } : {}),
        ...(options.tls.cert !== undefined ? { certChain: toBuffer(options.tls.cert) } : {}),
      };
    }
    const kv = new Etcd3KV(new Etcd3(clientOptions));
    try {
      await kv.client.kv.range({ key: PROBE_KEY, limit: 1 }, { deadline: Date.now() + dialTimeoutMs });
    } catch (err) {
      await kv.close();
      throw new Error(`etcd at ${options.endpoints.join(', ')} did not answer: ${(err as Error).message}`, {
        cause: err,
      });
    }
    kv.progressRequests = await kv.serverOrdersProgress();
    return kv;
  }

  /** Asks the server its version; an answer we cannot read counts as "no". */
  private async serverOrdersProgress(): Promise<boolean> {
    try {
      const status = await this.client.maintenance.status();
      return reliableProgressRequests(status.version);
    } catch {
      return false;
    }
  }

  async get(key: string, revision = 0): Promise<{ kv: KeyValue | undefined; revision: number }> {
    const res = await this.read({ key: keyBytes(key), revision });
    const first = res.kvs[0];
    return { kv: first ? toKeyValue(first) : undefined, revision: revision || headerRevision(res.header) };
  }

  async range(start: string, end: string, options: RangeOptions = {}): Promise<RangeResult> {
    const revision = options.revision ?? 0;
    const res = await this.read({
      key: rangeStartBytes(start),
      range_end: rangeEndBytes(end),
      revision,
      limit: options.limit ?? 0,
    });
    return {
      kvs: res.kvs.map(toKeyValue),
      revision: revision || headerRevision(res.header),
      more: res.more,
      // etcd counts the whole range whatever the limit, so the count costs nothing extra.
      ...(options.count ? { count: Number(res.count) } : {}),
    };
  }

  async create(key: string, value: Buffer): Promise<TxnResult> {
    const k = keyBytes(key);
    const res = await this.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value } }],
      failure: [{ request_range: { key: k } }],
    });
    return this.txnResult(res);
  }

  async update(key: string, value: Buffer, expectedModRevision: number): Promise<TxnResult> {
    const k = keyBytes(key);
    const res = await this.txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision }],
      success: [{ request_put: { key: k, value } }],
      failure: [{ request_range: { key: k } }],
    });
    return this.txnResult(res);
  }

  async delete(key: string, expectedModRevision: number): Promise<DeleteResult> {
    const k = keyBytes(key);
    // 0 means "whatever it is now": a missing key has mod_revision 0, so > 0 is "exists".
    const compare =
      expectedModRevision === 0
        ? { key: k, target: 'Mod' as const, result: 'Greater' as const, mod_revision: 0 }
        : { key: k, target: 'Mod' as const, result: 'Equal' as const, mod_revision: expectedModRevision };
    const res = await this.txn({
      compare: [compare],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) return this.txnResult(res);
    const deleted = firstResponse(res).response_delete_range?.prev_kvs[0];
    return {
      ok: true,
      revision: headerRevision(res.header),
      ...(deleted ? { deleted: toKeyValue(deleted) } : {}),
    };
  }

  watch(prefix: string, fromRevision: number, handlers: KVWatchHandlers): KVWatch {
    const watch = new Etcd3Watch(
      {
        openStream: () => this.client.watchClient.watch(),
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

  async currentRevision(): Promise<number> {
    const res = await this.rangeRaw({ key: PROBE_KEY, limit: 1 });
    return headerRevision(res.header);
  }

  compactedRevision(): Promise<number> {
    return this.compaction.current();
  }

  async compact(revision: number): Promise<void> {
    try {
      // physical: return only once the old revisions are really gone, so a read
      // right after compact() sees the compaction.
      await this.client.kv.compact({ revision, physical: true });
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
    const status = await this.client.maintenance.status();
    const size = Number(status.dbSize);
    return Number.isFinite(size) ? size : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches]) watch.fail(new Error('the etcd client was closed'));
    this.client.close();
  }

  /** A range, retried on transient failures (a read can be repeated safely). */
  private async rangeRaw(req: IRangeRequest): Promise<IRangeResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.kv.range(req);
      } catch (err) {
        if (attempt >= READ_ATTEMPTS || this.closed || !(err instanceof Error) || !isRecoverableError(err))
          throw err;
        await sleep(50 * attempt);
      }
    }
  }

  /** A range that turns etcd's revision errors into the contract's. */
  private async read(req: IRangeRequest): Promise<IRangeResponse> {
    try {
      return await this.rangeRaw(req);
    } catch (err) {
      const revision = Number(req.revision ?? 0);
      if (isEtcdCompacted(err)) throw new CompactedError(revision, await this.compaction.current(revision));
      if (isEtcdFutureRevision(err)) throw new FutureRevisionError(revision, await this.currentRevision());
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

  private txn(req: ITxnRequest): Promise<ITxnResponse> {
    return this.client.kv.txn(req);
  }

  private txnResult(res: ITxnResponse): TxnResult {
    const revision = headerRevision(res.header);
    if (res.succeeded) return { ok: true, revision };
    const current = firstResponse(res).response_range?.kvs[0];
    return { ok: false, revision, ...(current ? { current: toKeyValue(current) } : {}) };
  }
}

function firstResponse(res: ITxnResponse): Partial<IResponseOp> {
  return res.responses[0] ?? {};
}
