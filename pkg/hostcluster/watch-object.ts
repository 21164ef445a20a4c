// Keeps one named object of the host in view: list it (by metadata.name field
// selector), then watch from the list's resourceVersion, and start over whenever
// the watch ends - the server closes watches every few minutes, networks break,
// and a resourceVersion that is too old (410 Gone) needs a fresh list (the one
// reflector loop, pkg/util/reflector.ts). The handler hears the object only when it
// changed, so reconnects are silent.

import { Reflector, type ListerWatcher } from '../util/reflector.js';
import type { ObjectHandler, WatchHandle } from './types.js';

export interface RawObject {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string };
}

/** One watch event as the API sends it. */
export interface RawWatchEvent {
  readonly type: string;
  readonly object: unknown;
}

export interface WatchObjectSource {
  /** Lists with `fieldSelector`; returns the items and the list's resourceVersion. */
  list(fieldSelector: string): Promise<{ items: readonly unknown[]; resourceVersion: string }>;
  /**
   * Opens a watch; calls `onEvent` per event and resolves when the stream ends
   * (rejects when it could not be opened). `abort` ends it early.
   */
  watch(
    fieldSelector: string,
    resourceVersion: string,
    onEvent: (event: RawWatchEvent) => void,
    abort: AbortSignal,
  ): Promise<void>;
}

export interface WatchObjectOptions<T> {
  readonly name: string;
  readonly source: WatchObjectSource;
  readonly convert: (raw: unknown) => T;
  readonly handler: ObjectHandler<T>;
  readonly onError?: (err: Error) => void;
  /** First retry delay; doubles up to maxBackoffMs. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export function watchObject<T>(options: WatchObjectOptions<T>): WatchHandle {
  const { name, source, convert, handler } = options;
  const fieldSelector = `metadata.name=${name}`;
  let stopped = false;
  /** What the handler last heard: a resourceVersion, '' for "absent", undefined before the first call. */
  let lastSeen: string | undefined;

  const deliver = (raw: unknown | undefined): void => {
    if (stopped) return;
    const rv = raw === undefined ? '' : ((raw as RawObject).metadata?.resourceVersion ?? '?');
    if (rv === lastSeen && rv !== '?') return;
    lastSeen = rv;
    try {
      handler(raw === undefined ? undefined : convert(raw));
    } catch (err) {
      options.onError?.(err instanceof Error ? err : new Error(String(err)));
    }
  };

  const listerWatcher: ListerWatcher = {
    async list() {
      const listed = await source.list(fieldSelector);
      if (!stopped) deliver(listed.items.find((i) => (i as RawObject).metadata?.name === name));
      return listed.resourceVersion;
    },
    async watch(resourceVersion, observe, signal) {
      let events = 0;
      let gone = false;
      // Ended early by stop() or by an ERROR event.
      const abort = new AbortController();
      const onStop = (): void => abort.abort();
      signal.addEventListener('abort', onStop);
      try {
        await source.watch(
          fieldSelector,
          resourceVersion,
          (event) => {
            events++;
            const obj = event.object as RawObject;
            const rv = obj.metadata?.resourceVersion;
            switch (event.type) {
              case 'ADDED':
              case 'MODIFIED':
                if (rv) observe(rv);
                if (obj.metadata?.name === name) deliver(obj);
                break;
              case 'DELETED':
                if (rv) observe(rv);
                if (obj.metadata?.name === name) deliver(undefined);
                break;
              case 'BOOKMARK':
                if (rv) observe(rv);
                break;
              case 'ERROR':
                // 410 Gone: our resourceVersion was compacted away; anything else also restarts cleanly.
                gone = true;
                abort.abort();
                break;
            }
          },
          abort.signal,
        );
      } finally {
        signal.removeEventListener('abort', onStop);
      }
      return { events, relist: gone };
    },
  };

  const reflector = new Reflector({
    listerWatcher,
    initialBackoffMs: options.initialBackoffMs ?? 500,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    onFailure: (err) => options.onError?.(err instanceof Error ? err : new Error(String(err))),
  });
  reflector.start();
  return {
    async stop(): Promise<void> {
      stopped = true;
      await reflector.stop();
    },
  };
}
