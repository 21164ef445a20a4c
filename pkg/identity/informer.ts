// A list and a watch of one storage prefix, kept going for the life of the server
// (an informer, in client-go terms). The first list replaces the handler's state
// in one step, then every watch event is handed over in revision order. The loop is
// the one reflector (pkg/util/reflector.ts): a watch that ends is resumed from the
// last resourceVersion, one that fails (compaction: 410) is replaced by a fresh
// list and watch; readers keep using the last good state meanwhile.

import type { Logger } from '../util/log/index.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { Storage } from '../storage/interfaces.js';
import { Reflector, type WatchEnd } from '../util/reflector.js';
import { settlesWithin } from '../util/within.js';

export interface InformerHandler {
  /** The whole collection, from a (re)list: replace everything known. */
  replace(items: readonly KubeObject[]): void;
  upsert(obj: KubeObject): void;
  remove(obj: KubeObject): void;
}

export interface InformerOptions {
  readonly storage: Storage;
  /** A collection prefix ending with "/" (`/registry/<group>/users/`). */
  readonly prefix: string;
  readonly handler: InformerHandler;
  /** Names the informer in log lines. */
  readonly name: string;
  readonly logger?: Logger;
  /** Longest wait between failed list/watch attempts. */
  readonly maxRetryDelayMs?: number;
}

export class Informer {
  private synced = false;
  private lastFailure: string | undefined;
  /**
   * Who waits for the first list, each removed when its wait ends: a shared promise
   * would keep one reaction per wait that timed out for as long as storage stays down
   * (every request at start-up waits here, and retries).
   */
  private readonly syncWaiters = new Set<() => void>();
  private readonly reflector: Reflector;

  constructor(private readonly options: InformerOptions) {
    this.reflector = new Reflector({
      listerWatcher: { list: () => this.list(), watch: (rv, observe, signal) => this.watch(rv, observe, signal) },
      initialBackoffMs: 100,
      maxBackoffMs: options.maxRetryDelayMs ?? 5000,
      onFailure: (err, retryInMs) => {
        this.lastFailure = describe(err);
        options.logger?.warn('list/watch failed; retrying', {
          informer: options.name,
          error: describe(err),
          retryInMs,
        });
      },
    });
  }

  /** Starts listing and watching; idempotent. */
  start(): void {
    this.reflector.start();
  }

  /** True once the first list has been handed over. */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** Why the last list or watch failed, until one succeeds again (for readiness to say why it waits). */
  get lastError(): string | undefined {
    return this.lastFailure;
  }

  /** Resolves true once the first list has been handed over, or false after `timeoutMs`. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    if (this.synced) return true;
    let wake!: () => void;
    const arrived = new Promise<void>((resolve) => (wake = resolve));
    this.syncWaiters.add(wake);
    try {
      return await settlesWithin(arrived, timeoutMs);
    } finally {
      this.syncWaiters.delete(wake);
    }
  }

  /** Ends the watch; resolves when the loop has finished (or after a few seconds if storage hangs). */
  async stop(): Promise<void> {
    await settlesWithin(this.reflector.stop(), 5000);
  }

  private async list(): Promise<string> {
    const { storage, prefix, logger, handler, name } = this.options;
    const list = await storage.getList(prefix, { recursive: true });
    this.lastFailure = undefined;
    // Synced before the hand-over, so that listeners told of this first
    // replace already see every collection that is complete as complete.
    const first = !this.synced;
    this.synced = true;
    handler.replace(list.items);
    if (first) {
      for (const wake of this.syncWaiters) wake();
      logger?.info('informer synced', { informer: name, items: list.items.length });
    }
    return list.resourceVersion;
  }

  private async watch(
    resourceVersion: string,
    observe: (resourceVersion: string) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    const { storage, prefix, logger, handler, name } = this.options;
    const watcher = await storage.watch(prefix, { recursive: true, resourceVersion });
    const stop = (): void => watcher.stop();
    signal.addEventListener('abort', stop);
    if (signal.aborted) watcher.stop();
    let events = 0;
    try {
      for await (const event of watcher) {
        events++;
        if (event.type === 'ERROR') {
          // Usually 410 Expired after compaction: relist to catch up.
          logger?.warn('watch ended with an error; relisting', {
            informer: name,
            message: event.object['message'],
          });
          // Anything but 410 Gone is a failure: back off before the list.
          const gone = event.object['code'] === 410;
          return gone ? { events, relist: true } : { events, relist: true, error: new Error(String(event.object['message'] ?? 'watch error')) };
        }
        if (event.type === 'ADDED' || event.type === 'MODIFIED') handler.upsert(event.object);
        else if (event.type === 'DELETED') handler.remove(event.object);
        const rv = event.object.metadata?.resourceVersion;
        if (rv) observe(rv);
      }
      return { events };
    } finally {
      signal.removeEventListener('abort', stop);
      watcher.stop();
    }
  }
}

/** Only the message: a storage error's other fields are not for logs. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
