// Keeps one named object of the host in view: list it (by metadata.name field
// selector), then watch from the list's resourceVersion, and start over whenever
// the watch ends - the server closes watches every few minutes, networks break,
// and a resourceVersion that is too old (410 Gone) needs a fresh list. The handler
// hears the object only when it changed, so reconnects are silent.

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
  const initialBackoff = options.initialBackoffMs ?? 500;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  let stopped = false;
  let abort = new AbortController();
  let wake: (() => void) | undefined;
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

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = async (): Promise<void> => {
    let resourceVersion: string | undefined;
    let backoff = initialBackoff;
    while (!stopped) {
      const started = Date.now();
      let events = 0;
      try {
        if (resourceVersion === undefined) {
          const listed = await source.list(fieldSelector);
          if (stopped) break;
          const item = listed.items.find((i) => (i as RawObject).metadata?.name === name);
          deliver(item);
          resourceVersion = listed.resourceVersion;
        }
        let gone = false;
        abort = new AbortController();
        await source.watch(
          fieldSelector,
          resourceVersion,
          (event) => {
            events++;
            const obj = event.object as RawObject & { code?: unknown };
            switch (event.type) {
              case 'ADDED':
              case 'MODIFIED':
                if (obj.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
                if (obj.metadata?.name === name) deliver(obj);
                break;
              case 'DELETED':
                if (obj.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
                if (obj.metadata?.name === name) deliver(undefined);
                break;
              case 'BOOKMARK':
                if (obj.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
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
        if (gone) resourceVersion = undefined;
        // A watch that ends at once with nothing to say is a server in trouble: do not spin.
        if (events === 0 && Date.now() - started < 1000) {
          await sleep(backoff);
          backoff = Math.min(backoff * 2, maxBackoff);
        } else backoff = initialBackoff;
      } catch (err) {
        if (stopped) break;
        options.onError?.(err instanceof Error ? err : new Error(String(err)));
        resourceVersion = undefined;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, maxBackoff);
      }
    }
  };

  const done = loop();
  return {
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      wake?.();
      await done;
    },
  };
}
