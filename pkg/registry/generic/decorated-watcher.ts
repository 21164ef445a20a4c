// The registry's view of a storage watch: each event as the Store hands objects out
// (apiVersion and kind, the strategy's decoration), stopping and push delivery passed
// through. One object per watch, with no closure of its own: the decoration is the
// Store's (one function for all its watches), and an idle watch is held for as long as
// the client keeps it open (an object literal of closures here was ~650 B per watch).

import type { StorageWatchEvent, WatchReceiver, Watcher } from '../../storage/interfaces.js';

/** One event as the registry hands it out; may throw (the watch then ends with that error). */
export type WatchEventDecorator = (event: StorageWatchEvent) => StorageWatchEvent;

/** `inner`'s events, each through `decorate`; pushes when `inner` can. */
export function decorateWatcher(inner: Watcher, decorate: WatchEventDecorator): Watcher {
  return inner.receive ? new PushingDecoratedWatcher(inner, decorate) : new DecoratedWatcher(inner, decorate);
}

/**
 * An iterated watcher. A plain iterator, not an async generator: it sits on the fan-out
 * path once per watcher per event, where a generator's extra promise turns add up.
 */
class DecoratedWatcher implements Watcher {
  constructor(
    protected readonly inner: Watcher,
    protected readonly decorate: WatchEventDecorator,
  ) {}

  stop(): void {
    this.inner.stop();
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    const inner = this.inner;
    const decorate = this.decorate;
    const it = inner[Symbol.asyncIterator]();
    // A consumer that stops iterating, or an iteration that ends or fails, is done with the watch.
    const finish = (): IteratorResult<StorageWatchEvent> => {
      inner.stop();
      return { done: true, value: undefined };
    };
    const fail = (err: unknown): never => {
      finish();
      throw err;
    };
    return {
      // Like a generator's, calls are meant one at a time (for await, the watch writer).
      next: () =>
        it.next().then((r) => {
          if (r.done) return finish();
          try {
            return { done: false, value: decorate(r.value) };
          } catch (err) {
            return fail(err);
          }
        }, fail),
      return: async () => {
        try {
          await it.return?.();
        } finally {
          finish();
        }
        return { done: true, value: undefined };
      },
    };
  }
}

/**
 * A watcher that pushes (the watch cache's): the fan-out then costs no promise per
 * event and watcher. It is its inner watcher's receiver, and hands each event on decorated.
 */
class PushingDecoratedWatcher extends DecoratedWatcher implements WatchReceiver {
  private receiver: WatchReceiver | undefined;

  receive(receiver: WatchReceiver): () => void {
    this.receiver = receiver;
    return (this.inner.receive as NonNullable<Watcher['receive']>).call(this.inner, this);
  }

  event(e: StorageWatchEvent): boolean {
    const receiver = this.receiver as WatchReceiver;
    let decorated: StorageWatchEvent;
    try {
      decorated = this.decorate(e);
    } catch (err) {
      // The error first: stopping the inner watcher ends the receiver too
      // (cleanly), and the first end is the one the client sees.
      receiver.end(err);
      this.inner.stop();
      return false;
    }
    return receiver.event(decorated);
  }

  end(err?: unknown): void {
    this.receiver?.end(err);
  }
}
