// Watch streaming (k8s.io/apiserver endpoints/handlers/watch.go): 200 and headers at
// once, then one `{"type":…,"object":…}` JSON document per line, never indented,
// because client-node splits the stream on newlines. The stream ends cleanly (no
// ERROR) on timeoutSeconds, or a random time in [minRequestTimeout, 2×) so that
// clients spread their re-watches, and on shutdown; an ERROR event is the last one.
// A client that stops reading is waited for, not buffered for: past a bound it is
// cut off and will re-watch from its last resourceVersion.

import { ApiError, isApiError, toApiError } from '../apis/meta/errors.js';
import type { KubeList, KubeObject } from '../apis/meta/types.js';
import type { ListOptions, RESTStorage, RequestContext } from '../registry/rest/interfaces.js';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { StorageWatchEvent, WatchReceiver, Watcher } from '../storage/interfaces.js';
import type { Logger } from '../util/log/index.js';
import type { NegotiatedOutput } from './negotiation.js';
import { watchEventsTotal } from '../metrics/apiserver.js';
import { describe } from './responses.js';
import type { RequestScope } from './scope.js';
import {
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  asTable,
  type TableOptions,
} from './transform.js';

export interface WatchServerOptions {
  readonly minRequestTimeoutSeconds: number;
  readonly logger: Logger;
  /** How long a watch may wait for a full socket buffer to drain before it is cut off. */
  readonly drainTimeoutMs?: number;
  /** After shutdown ends a stream, how long a client that does not read it gets before the socket is destroyed. */
  readonly shutdownGraceMs?: number;
}

const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;
const DEFAULT_SHUTDOWN_GRACE_MS = 5_000;
/**
 * The memo key under which a shared event keeps its encoding: its line framed as one
 * HTTP/1.1 chunk, with the line itself a view into those bytes. One copy, not two: the
 * memo lives as long as the event stays in the watch cache's history, which may hold
 * up to 102,400 events of a burst.
 */
const EVENT_ENCODING = {};

interface EventEncoding {
  /** The line as one chunk of a chunked body, as Node's response frames it: size in hex, CRLF, bytes, CRLF. */
  readonly chunk: Buffer;
  /** The encoded line alone: a view into `chunk`. */
  readonly line: Buffer;
}

function encodingOf(line: string): EventEncoding {
  const size = Buffer.byteLength(line);
  const head = `${size.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafe(head.length + size + 2);
  chunk.write(head, 0, 'latin1');
  chunk.write(line, head.length);
  chunk.write('\r\n', head.length + size, 'latin1');
  return { chunk, line: chunk.subarray(head.length, head.length + size) };
}

/** A shared event's encoding, made once for every watcher it goes to. */
function sharedEncoding(shared: NonNullable<StorageWatchEvent['shared']>, event: StorageWatchEvent): EventEncoding {
  return shared.memo(EVENT_ENCODING, () => encodingOf(watchEventLine(event.type, event.object)));
}

function uncork(socket: Socket): void {
  socket.uncork();
}

/**
 * Events sent, by resource, counted here and added to the counter once a tick: the
 * counter's label hashing per event and watcher showed in fan-out profiles.
 */
const eventTally = new Map<WatchLabels, number>();
let tallyScheduled = false;

interface WatchLabels {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

function countEvent(labels: WatchLabels): void {
  eventTally.set(labels, (eventTally.get(labels) ?? 0) + 1);
  if (tallyScheduled) return;
  tallyScheduled = true;
  process.nextTick(flushEventTally);
}

function flushEventTally(): void {
  tallyScheduled = false;
  for (const [labels, n] of eventTally) watchEventsTotal.inc(labels, n);
  eventTally.clear();
}

/** The one encoding of a watch event on the wire: compact JSON and a newline (watch.go's framer). */
function watchEventLine(type: string, object: unknown): string {
  return `${JSON.stringify({ type, object })}\n`;
}

/**
 * What the open watches of one server share, so that an idle watch holds no closure or
 * copy of its own: the settings, the open watches by response, the one 'close' listener
 * they all use (a closure per watch, wrapped by once(), was ~250 B per idle watch), and
 * the metric labels of each resource.
 */
class OpenWatches {
  readonly byResponse = new Map<ServerResponse, ActiveWatch>();
  readonly onResponseClose: (this: ServerResponse) => void;
  private readonly labels = new WeakMap<RESTStorage, WatchLabels>();

  constructor(
    readonly logger: Logger,
    readonly drainTimeoutMs: number,
  ) {
    const byResponse = this.byResponse;
    this.onResponseClose = function (this: ServerResponse): void {
      byResponse.get(this)?.end();
    };
  }

  labelsOf(storage: RESTStorage): WatchLabels {
    let labels = this.labels.get(storage);
    if (!labels) {
      const { group, version, resource } = storage.info;
      labels = { group, version, resource };
      this.labels.set(storage, labels);
    }
    return labels;
  }
}

/** Serves watch requests and keeps track of the open ones, so shutdown can end them. */
export class WatchServer {
  private readonly open: OpenWatches;
  private shuttingDown = false;

  constructor(private readonly options: WatchServerOptions) {
    this.open = new OpenWatches(options.logger, options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS);
  }

  get openWatches(): number {
    return this.open.byResponse.size;
  }

  async serve(
    scope: RequestScope,
    storage: RESTStorage,
    listOptions: ListOptions,
    output: NegotiatedOutput,
    tableOptions: TableOptions | undefined,
  ): Promise<void> {
    if (this.shuttingDown) {
      throw new ApiError(503, 'ServiceUnavailable', 'apiserver is shutting down', { retryAfterSeconds: 1 });
    }
    if (!storage.watch) throw new Error(`${storage.info.resource} cannot be watched`);
    const ctx = scope.context(scope.info?.namespace ?? '');
    const watcher = await storage.watch(ctx, listOptions);
    if (scope.isClosed || this.shuttingDown) {
      // The client left (or we began shutting down) while the watch was being set up.
      watcher.stop();
      if (!scope.isClosed) {
        scope.applyWarnings();
        scope.res.writeHead(200, { 'Content-Type': 'application/json' });
        scope.res.end();
      }
      return;
    }
    const watch = new ActiveWatch(this.open, scope, storage, ctx, watcher, output, tableOptions);
    this.open.byResponse.set(scope.res, watch);
    // A pushed-to watch is not waited for: the request's chain of async frames (handler,
    // filters, each a promise adopting the next) then settles as the stream begins,
    // where waiting kept ~2 KiB of promises and their resolving functions per idle watch.
    // Everything that follows the watch's end hangs on the response's close instead
    // (the request log line, audit, metrics), as it did. A pulled one is still waited for.
    return watch.run(this.timeoutMs(listOptions));
  }

  /** Ends every open watch cleanly and refuses new ones. */
  shutdown(): void {
    this.shuttingDown = true;
    const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    for (const watch of this.open.byResponse.values()) watch.end(grace);
  }

  private timeoutMs(options: ListOptions): number {
    const t = options.timeoutSeconds;
    if (t !== undefined && t !== 0) return Math.max(0, t) * 1000;
    const min = this.options.minRequestTimeoutSeconds;
    return (min + Math.random() * min) * 1000;
  }
}

/** A watch's timeout: a function for all of them, handed the watch, rather than a closure each. */
function endOnTimeout(watch: ActiveWatch): void {
  watch.end();
}

class ActiveWatch implements WatchReceiver {
  private ended = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeDrainWaiter: (() => void) | undefined;
  private firstTable = true;
  /** What the last write went to (the socket, for a chunk written straight to it), and so what says it drained. */
  private drainSource: NodeJS.EventEmitter | undefined;
  /**
   * Whether shared chunks may go straight to the socket: only where the response would
   * send them framed as chunks (not for HEAD, which sends no body; not to an HTTP/1.0
   * client, which gets no chunked encoding).
   */
  private framesOwnChunks = false;
  /** Push delivery: the watcher's resume. */
  private resume: (() => void) | undefined;
  private readonly labels: WatchLabels;
  private readonly conversion: NegotiatedOutput['convert'];
  /**
   * The request's context and table options, kept only for a Table conversion (which
   * is handed them); any other watch lets go of the context, and of the user and the
   * signal getter it holds.
   */
  private readonly table: { readonly ctx: RequestContext; readonly options: TableOptions } | undefined;

  constructor(
    private readonly open: OpenWatches,
    private readonly scope: RequestScope,
    private readonly storage: RESTStorage,
    ctx: RequestContext,
    private readonly watcher: Watcher,
    output: NegotiatedOutput,
    tableOptions: TableOptions | undefined,
  ) {
    this.labels = open.labelsOf(storage);
    this.conversion = output.convert;
    this.table =
      output.convert?.kind === 'Table'
        ? { ctx, options: tableOptions ?? { includeObject: 'Metadata' } }
        : undefined;
  }

  /**
   * Starts streaming the events, ending them after `timeoutMs`. A watcher that pushes
   * needs nothing more from the caller: it writes each event as it comes, and returns at
   * once. One that must be pulled returns the pull loop, which resolves when the watch ends.
   */
  run(timeoutMs: number): Promise<void> | undefined {
    const res = this.scope.res;
    this.scope.applyWarnings();
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    this.framesOwnChunks = res.chunkedEncoding && this.scope.req.method !== 'HEAD';
    // on(), not once(): a response closes once, and end() takes the listener off.
    res.on('close', this.open.onResponseClose);
    this.timer = setTimeout(endOnTimeout, timeoutMs, this);
    if (!this.watcher.receive) return this.pull();
    // Pushed to: the dispatcher writes each event as it goes, with no promise per event.
    if (!this.ended) this.resume = this.watcher.receive(this);
    return undefined;
  }

  /** WatchReceiver: writes one event; false (hold) while the socket drains, or once the stream is over. */
  event(event: StorageWatchEvent): boolean {
    if (this.ended) return false;
    let writable: boolean;
    try {
      writable = this.write(event);
    } catch (err) {
      // Called from the cache's dispatch loop: a failure ends this stream, not the loop.
      this.end(err);
      return false;
    }
    if (event.type === 'ERROR') {
      this.end();
      return false;
    }
    if (writable) return true;
    void this.waitForDrain().then((drained) => {
      if (drained) this.resume?.();
      else this.end();
    });
    return false;
  }

  /** Pulls events from an iterated watcher (one that cannot push). */
  private async pull(): Promise<void> {
    const it = this.watcher[Symbol.asyncIterator]();
    try {
      while (!this.ended) {
        const next = await it.next();
        if (next.done || this.ended) break;
        const event = next.value;
        const writable = this.write(event);
        if (event.type === 'ERROR') break;
        if (!writable && !(await this.waitForDrain())) break;
      }
    } catch (err) {
      if (!this.ended) this.writeErrorEvent(err);
    } finally {
      this.end();
    }
  }

  /**
   * Ends the stream (idempotent); also the WatchReceiver's end. With `graceMs` (shutdown),
   * a client that will not read the end is cut off after it; with an error (delivering an
   * event failed), that is sent as the last event.
   */
  end(graceMsOrError?: unknown): void {
    if (this.ended) return;
    const graceMs = typeof graceMsOrError === 'number' ? graceMsOrError : undefined;
    if (graceMsOrError !== undefined && graceMs === undefined) this.writeErrorEvent(graceMsOrError);
    this.ended = true;
    this.open.byResponse.delete(this.scope.res);
    this.scope.res.off('close', this.open.onResponseClose);
    if (this.timer) clearTimeout(this.timer);
    this.wakeDrainWaiter?.();
    try {
      this.watcher.stop();
    } catch (err) {
      this.open.logger.error('stopping a watcher failed', {
        ...this.scope.logFields(),
        error: describe(err),
      });
    }
    const res = this.scope.res;
    if (!res.writableEnded && !res.destroyed) res.end();
    if (graceMs !== undefined && !res.writableFinished && !res.destroyed) {
      setTimeout(() => {
        if (!res.writableFinished) res.destroy();
      }, graceMs).unref();
    }
  }

  /**
   * Writes one event; false when the socket wants draining first. A shared event (the
   * watch cache hands one to every watcher) is encoded and framed as a chunk once, and
   * those bytes go straight to every socket that sends it unconverted, while nothing of
   * the response is queued in front of them: one write per event and watcher, as the
   * bare broadcast server does, where the response's own chunking makes four. The
   * socket is corked until the next tick, as the response does, so events dispatched in
   * one tick leave in one TLS write (without that, an earlier socket fast path cost
   * 16-18% more CPU at ten events a tick). Anything else goes through the response.
   */
  private write(event: StorageWatchEvent): boolean {
    countEvent(this.labels);
    const res = this.scope.res;
    const shared = this.conversion ? undefined : event.shared;
    if (shared) {
      const socket = res.socket;
      if (
        this.framesOwnChunks &&
        socket &&
        !socket.destroyed &&
        res.headersSent &&
        !res.writableEnded &&
        res.writableLength === socket.writableLength
      ) {
        const chunk = sharedEncoding(shared, event).chunk;
        if (!socket.writableCorked) {
          socket.cork();
          process.nextTick(uncork, socket);
        }
        this.drainSource = socket;
        return socket.write(chunk);
      }
    }
    this.drainSource = res;
    return res.write(shared ? sharedEncoding(shared, event).line : this.encode(event));
  }

  private encode(event: StorageWatchEvent): string {
    const convert = this.conversion;
    let object: unknown = event.object;
    if (convert && event.type !== 'ERROR') {
      try {
        object = this.convert(event, convert.kind, convert.version);
      } catch (err) {
        // As upstream: a failed conversion is logged and the object sent as it is.
        this.open.logger.error('watch event conversion failed', {
          ...this.scope.logFields(),
          error: describe(err),
        });
      }
    }
    return watchEventLine(event.type, object);
  }

  private convert(event: StorageWatchEvent, kind: string, version: string): unknown {
    switch (kind) {
      case 'Table': {
        // Bookmarks carry only a resourceVersion: there is no row to show.
        if (event.type === 'BOOKMARK' || !this.table) return event.object;
        const table = asTable(
          this.storage,
          this.table.ctx,
          event.object as KubeObject | KubeList,
          version,
          this.table.options,
          !this.firstTable,
        );
        this.firstTable = false;
        return table;
      }
      case 'PartialObjectMetadata':
        // Bookmarks too: the metadata client cannot decode any other kind.
        return asPartialObjectMetadata(event.object, version);
      case 'PartialObjectMetadataList':
        return asPartialObjectMetadataList(event.object, version);
      default:
        return event.object;
    }
  }

  /** Waits for the socket buffer to drain; false when the stream ended or the client is hopelessly behind. */
  private waitForDrain(): Promise<boolean> {
    const res = this.scope.res;
    const source = this.drainSource ?? res;
    return new Promise((resolve) => {
      const settle = (ok: boolean): void => {
        clearTimeout(timer);
        source.off('drain', onDrain);
        this.wakeDrainWaiter = undefined;
        resolve(ok);
      };
      const onDrain = (): void => settle(true);
      const timer = setTimeout(() => {
        this.open.logger.warn('watch client is not reading; closing its stream', this.scope.logFields());
        settle(false);
        res.destroy();
      }, this.open.drainTimeoutMs);
      source.on('drain', onDrain);
      this.wakeDrainWaiter = () => settle(false);
    });
  }

  private writeErrorEvent(err: unknown): void {
    if (!isApiError(err)) {
      this.open.logger.error('watch failed', { ...this.scope.logFields(), error: describe(err) });
    }
    const res = this.scope.res;
    if (res.writableEnded || res.destroyed) return;
    res.write(watchEventLine('ERROR', toApiError(err).toStatus()));
  }
}
