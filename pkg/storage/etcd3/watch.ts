// One KV watch over its own etcd gRPC watch stream.
//
// The etcd3 package's Watcher was never used (nor, now, the package): on (re)connect it moves its resume
// point to the revision in the server's header, not to the last event delivered,
// so a stream that breaks while etcd is still replaying history (etcd sends at most
// 1000 revisions per response) resumes past events it never delivered; and it
// reports a compacted start as a bare "Watcher canceled" without the compact
// revision. Here the resume point is the revision after the last event handed
// over (or the last progress notification), a broken stream reconnects from
// exactly there, and a compacted start ends the watch with CompactedError.
// One stream per watch keeps cancellation simple: ending it releases everything
// on both sides.

import { Backoff } from '../../util/backoff.js';
import { CompactedError } from '../kv.js';
import type { KVEvent, KVWatch, KVWatchHandlers } from '../kv.js';
import { encodeWatchCreate, WATCH_PROGRESS_REQUEST } from './codecs.js';
import type { WatchEvent, WatchReply } from './codecs.js';
import { EtcdClientClosedError } from './grpc-client.js';
import type { WatchStream } from './grpc-client.js';

export interface WatchContext {
  /** A new stream; throws EtcdClientClosedError once the client is closed. */
  openStream(): WatchStream;
  /** etcd told us its compacted revision. */
  observeCompaction(revision: number): void;
  /** The best known compacted revision, for errors raised without etcd saying it. */
  lastKnownCompaction(): number;
  /** The watch ended (cancelled or failed); it no longer needs closing. */
  done(watch: Etcd3Watch): void;
}

const INITIAL_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 3000;

/** Ends a stream for good: half-close, then cancel (its CANCELLED error is expected). */
function release(stream: WatchStream): void {
  stream.on('error', () => undefined);
  stream.end();
  stream.cancel();
}

export class Etcd3Watch implements KVWatch {
  private stream: WatchStream | undefined;
  /** Events at revisions >= next are still owed (0: "from now", until etcd says when now is). */
  private next: number;
  private stopped = false;
  private readonly backoff = new Backoff(INITIAL_BACKOFF_MS, MAX_BACKOFF_MS);
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: WatchContext,
    private readonly start: Buffer,
    private readonly end: Buffer,
    fromRevision: number,
    private readonly handlers: KVWatchHandlers,
  ) {
    this.next = fromRevision;
    this.connect();
  }

  cancel(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.teardown();
  }

  /**
   * Asks etcd for a progress notification. etcd answers only once this watch has
   * caught up with its current revision; a request made while reconnecting is
   * dropped, and the caller asks again.
   */
  requestProgress(): void {
    if (this.stopped || this.stream === undefined) return;
    this.stream.write(WATCH_PROGRESS_REQUEST);
  }

  /** Ends the watch with `err` (once), as the contract's onError. */
  fail(err: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.teardown();
    try {
      this.handlers.onError(err);
    } catch (handlerErr) {
      // Nowhere left to report it; do not let it vanish.
      queueMicrotask(() => {
        throw handlerErr;
      });
    }
  }

  private teardown(): void {
    clearTimeout(this.retryTimer);
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined) release(stream);
    this.ctx.done(this);
  }

  private connect(): void {
    let stream: WatchStream;
    try {
      stream = this.ctx.openStream();
    } catch (err) {
      this.onBroken(undefined, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.stream = stream;
    stream.on('data', (res: WatchReply) => this.onResponse(stream, res));
    stream.on('error', (err: Error) => this.onBroken(stream, err));
    stream.on('end', () => this.onBroken(stream, new Error('etcd ended the watch stream')));
    stream.write(
      encodeWatchCreate({
        key: this.start,
        rangeEnd: this.end,
        startRevision: this.next,
        prevKv: this.handlers.withoutPrevious !== true,
        progressNotify: true,
      }),
    );
  }

  /** The stream failed (etcd restarted, network): reconnect from the resume point. */
  private onBroken(stream: WatchStream | undefined, err: Error): void {
    if (this.stopped || stream !== this.stream) return;
    if (err instanceof EtcdClientClosedError) {
      this.fail(err);
      return;
    }
    if (stream !== undefined) release(stream);
    this.stream = undefined;
    this.retryTimer = setTimeout(() => this.connect(), this.backoff.step());
  }

  private onResponse(stream: WatchStream, res: WatchReply): void {
    if (this.stopped || stream !== this.stream) return;
    if (res.canceled) {
      this.onCanceled(res);
      return;
    }
    if (res.created) {
      this.backoff.reset();
      // "From now" is fixed once, at the first creation; a reconnect resumes from there.
      if (this.next === 0) this.next = res.revision + 1;
      return;
    }
    if (res.events.length === 0) {
      this.onProgressNotify(res.revision);
      return;
    }
    this.deliver(res.events);
  }

  private onCanceled(res: WatchReply): void {
    const compactRevision = res.compactRevision;
    if (compactRevision > 0) {
      this.ctx.observeCompaction(compactRevision);
      this.fail(new CompactedError(this.next, compactRevision));
      return;
    }
    this.fail(new Error(`etcd cancelled the watch${res.cancelReason ? `: ${res.cancelReason}` : ''}`));
  }

  private onProgressNotify(revision: number): void {
    // Every event up to `revision` has been sent on this stream.
    if (revision < this.next - 1) return;
    this.next = revision + 1;
    try {
      this.handlers.onProgress?.(revision);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Hands events over one revision at a time, advancing the resume point first. */
  private deliver(raw: readonly WatchEvent[]): void {
    let batch: KVEvent[] = [];
    let batchRevision = 0;
    const flush = (): boolean => {
      if (batch.length === 0) return true;
      const events = batch;
      batch = [];
      this.next = batchRevision + 1;
      try {
        this.handlers.onEvents(events);
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
      }
      return !this.stopped;
    };
    for (const ev of raw) {
      const event = this.toEvent(ev);
      if (event instanceof Error) {
        if (flush()) this.fail(event);
        return;
      }
      if (event.kv.modRevision !== batchRevision && !flush()) return;
      batchRevision = event.kv.modRevision;
      batch.push(event);
    }
    flush();
  }

  private toEvent(ev: WatchEvent): KVEvent | Error {
    const { kv, prevKv } = ev;
    const isDelete = ev.type === 'delete';
    const isCreate = !isDelete && ev.version === 1;
    if (prevKv === undefined && !isCreate && this.handlers.withoutPrevious !== true) {
      // etcd reads the previous value at revision-1 when it sends the event; if a
      // compaction got there first the value is gone and the event cannot be shaped
      // (a delete without its last state). Kubernetes ends the watch in this case;
      // a compaction error makes the consumer relist, which is the right recovery.
      return new CompactedError(kv.modRevision - 1, this.ctx.lastKnownCompaction());
    }
    // etcd sends a deleted key without a value; the contract says so explicitly.
    if (isDelete) {
      return {
        type: 'delete',
        kv: kv.value.length === 0 ? kv : { ...kv, value: Buffer.alloc(0) },
        ...(prevKv ? { prevKv } : {}),
      };
    }
    return { type: 'put', kv, ...(prevKv ? { prevKv } : {}) };
  }
}
