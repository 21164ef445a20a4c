// One list-and-watch loop with backoff, for everything that keeps a collection (or
// one object) in view for the life of the server: the watch cache, the identity
// informers and the host-cluster object watches. It follows client-go's
// tools/cache reflector (ListAndWatch under wait.BackoffUntil):
//
// - list, hand the state over, then watch from the list's resourceVersion;
// - a watch that ends cleanly (servers close watches every few minutes) is resumed
//   at once from the last resourceVersion it delivered, with no list;
// - a watch that says 410 Gone (its resourceVersion was compacted away), any other
//   ERROR event, or a failed list or watch starts over with a fresh list;
// - failures, and watches that end at once with nothing to say (a server in trouble),
//   wait an exponential backoff first, capped, and reset by a watch that delivered
//   something or lasted a while (upstream's backoff manager), so a broken peer is
//   never hammered and a healthy one is followed without delay;
// - stop() ends the current watch and any wait at once.
//
// It knows nothing of storage or HTTP: the caller says how to list and how to watch.

import { Backoff } from './backoff.js';

/** How one watch ended. */
export interface WatchEnd {
  /** Events (bookmarks included) the watch delivered before it ended. */
  readonly events: number;
  /**
   * The watch cannot be resumed: 410 Gone or another ERROR event, or the caller lost
   * the state a resume would build on. The next attempt lists.
   */
  readonly relist?: boolean;
  /** What went wrong, when something did: the next attempt waits a backoff first. */
  readonly error?: unknown;
}

export interface ListerWatcher {
  /** Lists, hands the whole state to the consumer, and returns the resourceVersion to watch from. */
  list(): Promise<string>;
  /**
   * Watches from `resourceVersion` until the watch ends or `signal` aborts, calling
   * `observe` with the resourceVersion of each event, so that a resume starts after it.
   * A rejection counts as a failure and leads to a relist.
   */
  watch(resourceVersion: string, observe: (resourceVersion: string) => void, signal: AbortSignal): Promise<WatchEnd>;
}

export interface ReflectorOptions {
  readonly listerWatcher: ListerWatcher;
  /** First backoff; it doubles up to maxBackoffMs. */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** A watch that lasted this long counts as healthy even without events. Default 1 s. */
  readonly healthyAfterMs?: number;
  /** Told of each failed attempt before the loop waits `retryInMs` (for the caller's log). */
  readonly onFailure?: (error: unknown, retryInMs: number) => void;
}

export class Reflector {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly options: ReflectorOptions) {}

  /** Starts listing and watching; idempotent. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the current watch and any wait; resolves when the loop has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { listerWatcher, onFailure } = this.options;
    const healthyAfter = this.options.healthyAfterMs ?? 1000;
    const backoff = new Backoff(this.options.initialBackoffMs, this.options.maxBackoffMs);
    let resourceVersion: string | undefined;
    while (!this.stopped) {
      let failure: unknown;
      let wait = false;
      try {
        resourceVersion ??= await listerWatcher.list();
        if (this.stopped) break;
        const started = Date.now();
        this.abort = new AbortController();
        const end = await listerWatcher.watch(
          resourceVersion,
          (rv) => (resourceVersion = rv),
          this.abort.signal,
        );
        if (end.relist) resourceVersion = undefined;
        const healthy = end.events > 0 || Date.now() - started >= healthyAfter;
        if (healthy) backoff.reset();
        if (end.error !== undefined) {
          failure = end.error;
          wait = true;
        } else wait = !healthy;
      } catch (err) {
        failure = err;
        wait = true;
        resourceVersion = undefined;
      } finally {
        this.abort = undefined;
      }
      if (this.stopped) break;
      if (!wait) continue;
      const delay = backoff.step();
      if (failure !== undefined) onFailure?.(failure, delay);
      await this.sleep(delay);
    }
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }
}
