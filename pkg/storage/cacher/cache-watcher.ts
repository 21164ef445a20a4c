// One watch served from the cache (k8s.io/apiserver storage/cacher
// cache_watcher.go). The cache pushes shared events into it synchronously as it
// applies changes; the consumer pulls them at its own pace, or (receive) is handed
// each one synchronously while it keeps up, the events queueing only while it is
// backed up (upstream's nonblocking add into the buffered channel). A consumer that
// falls more than the queue's capacity behind is cut off (its stream ends and it
// re-watches from the last resourceVersion it saw), so one slow client costs
// bounded memory and never delays the cache or the other watchers.

import { newInternalError } from '../../apis/meta/errors.js';
import type { KubeObject, Status } from '../../apis/meta/types.js';
import { INITIAL_EVENTS_END_ANNOTATION } from '../../apis/meta/types.js';
import type { Predicate, StorageWatchEvent, WatchReceiver, Watcher } from '../interfaces.js';
import { formatResourceVersion } from '../resource-version.js';
import { WatchQueue } from '../watch-queue.js';
import type { CacheEntry, CacheEvent, TypeMeta } from './watch-cache.js';

export interface CacheWatcherConfig {
  /** The watched key; for a recursive watch, a directory ending with "/". */
  readonly key: string;
  readonly recursive: boolean;
  readonly predicate: Predicate;
  readonly allowWatchBookmarks: boolean;
  readonly bookmarkIntervalMs: number;
  readonly queueCapacity: number;
  /** The cache's revision: a periodic bookmark may claim everything up to it. */
  readonly revision: () => number;
  readonly typeMeta: () => TypeMeta | undefined;
  /** Called once when the watch stops, so the cache forgets it. */
  readonly onStopped?: (watcher: CacheWatcher) => void;
}

export class CacheWatcher implements Watcher {
  /**
   * Events waiting for the consumer: made only when one has to wait (initial events, a
   * consumer that holds or iterates, the last ERROR), and let go of once a receiver has
   * drained it. An idle watch that keeps up has none (an empty queue and its array
   * were ~150 B of every idle watch).
   */
  private queue: WatchQueue<StorageWatchEvent> | undefined;
  /** How far behind the consumer may fall: the queue capacity, plus the initial events it was given. */
  private capacity: number;
  private readonly matches: ((obj: KubeObject) => boolean) | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** Changes at or below this revision came with the start (initial state or replay); none is sent twice. */
  private startRevision = 0;
  /** Push delivery (receive): who gets the events, whether it asked to wait, whether it was told the end. */
  private receiver: WatchReceiver | undefined;
  private held = false;
  private flushing = false;
  private toldEnd = false;
  // The config's fields, kept one by one rather than the object: the cache hands every
  // watcher the same functions, so a watcher holds no closure of its own.
  private readonly key: string;
  private readonly recursive: boolean;
  private readonly allowWatchBookmarks: boolean;
  private readonly bookmarkIntervalMs: number;
  private readonly revision: () => number;
  private readonly typeMeta: () => TypeMeta | undefined;
  private readonly onStopped: ((watcher: CacheWatcher) => void) | undefined;

  constructor(config: CacheWatcherConfig) {
    this.key = config.key;
    this.recursive = config.recursive;
    this.allowWatchBookmarks = config.allowWatchBookmarks;
    this.bookmarkIntervalMs = config.bookmarkIntervalMs;
    this.revision = config.revision;
    this.typeMeta = config.typeMeta;
    this.onStopped = config.onStopped;
    this.capacity = config.queueCapacity;
    const predicate = config.predicate;
    this.matches = predicate.empty
      ? undefined
      : (obj) => {
          try {
            return predicate.matches(obj);
          } catch {
            // A selector that cannot evaluate an object does not select it.
            return false;
          }
        };
  }

  /** A watch that only reports `status` and ends. */
  static failed(config: CacheWatcherConfig, status: Status): CacheWatcher {
    const watcher = new CacheWatcher(config);
    watcher.fail(status);
    return watcher;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  covers(key: string): boolean {
    return this.recursive ? key.startsWith(this.key) : key === this.key;
  }

  /** Queues ADDED for the current state: the initial events of a watch. */
  sendInitial(entries: Iterable<CacheEntry>): void {
    for (const entry of entries) {
      if (this.stopped) return;
      if (!this.covers(entry.key)) continue;
      let event: StorageWatchEvent;
      try {
        const obj = entry.object();
        if (this.matches && !this.matches(obj)) continue;
        event = entry.added();
      } catch (err) {
        this.fail(internalError(err));
        return;
      }
      // The state is sent whatever its size; only falling behind on changes counts against the bound.
      this.capacity++;
      this.queued().push(event);
    }
  }

  /** From here on, changes after `revision` are this watcher's business. */
  startAt(revision: number, initialEventsEnd: boolean): void {
    this.startRevision = revision;
    if (initialEventsEnd && this.allowWatchBookmarks) this.pushBookmark(revision, true);
    if (this.allowWatchBookmarks && this.bookmarkIntervalMs > 0 && !this.stopped) {
      this.timer = setInterval(CacheWatcher.bookmarkTick, this.bookmarkIntervalMs, this);
      this.timer.unref();
    }
  }

  /** Queues this watcher's view of a change, if it has one. Called in revision order. */
  dispatch(event: CacheEvent): void {
    if (this.stopped || event.rev <= this.startRevision || !this.covers(event.key)) return;
    const shaped = event.shapeFor(this.matches);
    if (shaped === undefined) return;
    if (shaped.type === 'ERROR') {
      this.fail(shaped.object as unknown as Status);
      return;
    }
    this.push(shaped);
  }

  /** Sends `status` as the last event and ends the watch. */
  fail(status: Status): void {
    if (this.stopped) return;
    this.queued().push({ type: 'ERROR', object: { ...status } });
    this.stop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.queue?.end();
    this.onStopped?.(this);
    // A receiver still gets what was queued (as an iterator would), then the end.
    this.flush();
  }

  /**
   * Switches to push delivery: what is queued now (initial events) and every later
   * event go to `receiver` synchronously, while it keeps up; see Watcher.receive.
   */
  receive(receiver: WatchReceiver): () => void {
    this.receiver = receiver;
    this.flush();
    return this.resume.bind(this);
  }

  /**
   * A plain iterator rather than an async generator: with a thousand watchers every
   * event crosses this once per watcher, and a generator's suspend and resume cost
   * several promise turns each time. Ends (and stops the watch) after the queue ends,
   * after an ERROR, or when the consumer returns.
   */
  [Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    let done = false;
    const queue = this.queued();
    const finish = (): IteratorResult<StorageWatchEvent> => {
      done = true;
      this.stop();
      return { done: true, value: undefined };
    };
    return {
      // Like a generator's, calls are meant one at a time (for await, the watch writer).
      next: () => {
        if (done) return Promise.resolve({ done: true, value: undefined });
        return queue.shift().then((event): IteratorResult<StorageWatchEvent> => {
          if (event === undefined) return finish();
          if (event.type === 'ERROR') finish();
          return { done: false, value: event };
        });
      },
      return: () => Promise.resolve(finish()),
    };
  }

  /** The queue, made now if there is none; ended already if the watch is. */
  private queued(): WatchQueue<StorageWatchEvent> {
    let queue = this.queue;
    if (!queue) {
      queue = this.queue = new WatchQueue<StorageWatchEvent>(this.capacity);
      if (this.stopped) queue.end();
    }
    return queue;
  }

  /** The receiver asked to wait, and now takes events again. */
  private resume(): void {
    this.held = false;
    this.flush();
  }

  private push(event: StorageWatchEvent): void {
    if (this.stopped) return;
    const receiver = this.receiver;
    const waiting = this.queue?.length ?? 0;
    if (receiver && !this.held && !this.flushing && waiting === 0) {
      // Keeping up: straight to the receiver, as the bare fan-out writes straight to a socket.
      if (!receiver.event(event)) this.held = true;
      return;
    }
    if (waiting >= this.capacity) {
      // Too slow: end the watch rather than buffer without bound. The client sees the
      // stream end and re-watches from the last resourceVersion it received.
      this.stop();
      return;
    }
    this.queued().push(event);
    this.flush();
  }

  /** Hands queued events to the receiver until it holds; once the watch has stopped and the queue drained, the end. */
  private flush(): void {
    const receiver = this.receiver;
    if (!receiver || this.flushing) return;
    const queue = this.queue;
    if (queue) {
      this.flushing = true;
      try {
        while (!this.held && queue.length > 0) {
          if (!receiver.event(queue.takeNow() as StorageWatchEvent)) this.held = true;
        }
      } finally {
        this.flushing = false;
      }
      if (queue.length > 0) return;
      // Drained: a receiver that keeps up needs no queue until it falls behind again.
      if (this.queue === queue) this.queue = undefined;
    }
    if (this.stopped && !this.toldEnd) {
      this.toldEnd = true;
      receiver.end();
    }
  }

  /** The bookmark timer's callback: one function for every watcher, handed the watcher, not a closure each. */
  private static bookmarkTick(this: void, watcher: CacheWatcher): void {
    watcher.periodicBookmark();
  }

  private periodicBookmark(): void {
    if (this.stopped) return;
    // A bookmark already waiting says the same thing, only less recently.
    if (this.queue?.last()?.type === 'BOOKMARK') return;
    // The cache hands every change to every watcher as it applies it, so everything
    // up to the cache's revision has been queued here.
    this.pushBookmark(Math.max(this.startRevision, this.revision()), false);
  }

  private pushBookmark(revision: number, initialEventsEnd: boolean): void {
    const metadata: KubeObject['metadata'] = { resourceVersion: formatResourceVersion(revision) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: 'true' };
    this.push({ type: 'BOOKMARK', object: { ...this.typeMeta(), metadata } });
  }
}

function internalError(err: unknown): Status {
  const message = err instanceof Error ? err.message : String(err);
  return newInternalError(message, err).toStatus();
}
