// Keeps a page in step with the server, as client-go's reflector keeps an informer:
// read the state (a list, or a get of one object), then watch from its
// resourceVersion, and
// - resume a watch the server ended cleanly (servers end watches every few minutes)
//   from the last resourceVersion seen, with no new read;
// - read again when the watch says 410 Gone (an ERROR event, or a refused watch: the
//   version was compacted away), on any other ERROR event, or on a stream that cannot be
//   parsed;
// - after a dropped connection or an answer that may pass (429, 5xx, no answer), wait
//   an exponential backoff with jitter and try again: the watch from the last
//   resourceVersion (client-go retries a refused connection the same way), a failed
//   read by reading again. Upstream's numbers: 800 ms doubling to 30 s, jitter 1.0
//   (so [30, 60) s at worst), back to 800 ms once 2 minutes passed without a wait;
// - give up on what will not pass by waiting (401, 403, 404) and say so;
// - stop at once, ending the watch request, when the page is left (`signal`).
// It knows nothing of the DOM or of fetch: the caller says how to read and to watch.

import { ApiError } from './api.js';
import { MalformedWatchEvent, errorStatusOf, resourceVersionOf, type WatchEvent } from './watch-stream.js';

export interface Source {
  /** Reads the whole state, hands it to the page, and returns its resourceVersion. */
  read(): Promise<string>;
  /** Watches from `resourceVersion` until the server ends it, `signal` aborts, or it fails. */
  watch(resourceVersion: string, onEvent: (event: WatchEvent) => void, signal: AbortSignal): Promise<void>;
  /** An ADDED, MODIFIED or DELETED event (BOOKMARKs and ERRORs are the loop's own). */
  onEvent(event: WatchEvent): void;
  /** What the page may show: watching, waiting to try again, or given up. */
  onState?(state: FollowState): void;
}

export type FollowState =
  | { readonly phase: 'live' }
  | { readonly phase: 'retrying'; readonly inMs: number; readonly error: unknown }
  | { readonly phase: 'stopped'; readonly error: unknown };

export interface FollowOptions {
  /** A resourceVersion already read (the page's first read): the loop starts by watching. */
  readonly from?: string;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** The backoff starts over once this long passed since its last wait. */
  readonly resetBackoffAfterMs?: number;
  /** A watch that ends sooner than this having delivered nothing counts as a failure. */
  readonly healthyAfterMs?: number;
  /** Tests: a number in [0, 1) for the jitter, the clock, and the wait. */
  readonly random?: () => number;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Answers that no wait will change: the loop stops and the page says why. */
const PERMANENT = new Set([401, 403, 404]);

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** Runs until `signal` aborts or a permanent failure; resolves then. */
export async function follow(
  source: Source,
  signal: AbortSignal,
  options: FollowOptions = {},
): Promise<void> {
  const initial = options.initialBackoffMs ?? 800;
  const max = options.maxBackoffMs ?? 30_000;
  const resetAfter = options.resetBackoffAfterMs ?? 120_000;
  const healthyAfter = options.healthyAfterMs ?? 1_000;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const wait = options.sleep ?? sleep;
  let next = initial;
  let lastWait = -Infinity;
  let resourceVersion = options.from || undefined;

  while (!signal.aborted) {
    let failure: unknown;
    let mustWait = false;
    try {
      resourceVersion ??= await source.read();
      if (signal.aborted) break;
      source.onState?.({ phase: 'live' });
      const started = now();
      let delivered = 0;
      let error: WatchEvent | undefined;
      // Its own controller: an ERROR event ends the request at once, whatever the server does next.
      const watch = new AbortController();
      const leave = () => watch.abort();
      signal.addEventListener('abort', leave);
      try {
        await source.watch(
          resourceVersion,
          (event) => {
            if (error || watch.signal.aborted) return;
            delivered++;
            if (event.type === 'ERROR') {
              error = event;
              watch.abort();
              return;
            }
            resourceVersion = resourceVersionOf(event.object) ?? resourceVersion;
            if (event.type !== 'BOOKMARK') source.onEvent(event);
          },
          watch.signal,
        );
      } catch (err) {
        if (!error) throw err;
      } finally {
        signal.removeEventListener('abort', leave);
      }
      if (signal.aborted) break;
      if (error) {
        // 410 Gone or another ERROR: what the page shows can no longer be resumed.
        resourceVersion = undefined;
        const status = errorStatusOf(error);
        if (status.code !== 410) {
          failure = new ApiError(status.code ?? 500, status);
          mustWait = true;
        }
      } else if (delivered === 0 && now() - started < healthyAfter) {
        // Ended at once with nothing to say: a server in trouble is not asked again at once.
        mustWait = true;
      }
    } catch (err) {
      if (signal.aborted) break;
      if (err instanceof ApiError && err.code === 410) {
        // The watch was refused: its resourceVersion is too old. Read again now.
        resourceVersion = undefined;
        continue;
      }
      if (err instanceof ApiError && PERMANENT.has(err.code)) {
        source.onState?.({ phase: 'stopped', error: err });
        return;
      }
      // A stream that cannot be parsed may have lost events: read again.
      if (err instanceof MalformedWatchEvent) resourceVersion = undefined;
      failure = err;
      mustWait = true;
    }
    if (!mustWait) continue;
    if (now() - lastWait >= resetAfter) next = initial;
    const base = next;
    next = Math.min(next * 2, max);
    const delay = base + random() * base;
    lastWait = now();
    source.onState?.({ phase: 'retrying', inMs: delay, error: failure });
    await wait(delay, signal);
  }
}
