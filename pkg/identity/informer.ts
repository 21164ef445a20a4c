// A list and a watch of one storage prefix, kept going for the life of the server
// (an informer, in client-go terms). The first list replaces the handler's state
// in one step, then every watch event is handed over in revision order. A watch
// that ends or fails (compaction: 410) is replaced by a fresh list and watch;
// readers keep using the last good state meanwhile.

import type { Logger } from '../util/log/index.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { Storage, Watcher } from '../storage/interfaces.js';

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
  private watcher: Watcher | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private synced = false;
  private lastFailure: string | undefined;
  private resolveSynced!: () => void;
  private readonly syncedPromise = new Promise<void>((resolve) => (this.resolveSynced = resolve));
  private wakeRetry: (() => void) | undefined;

  constructor(private readonly options: InformerOptions) {}

  /** Starts listing and watching; idempotent. */
  start(): void {
    this.loop ??= this.run();
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
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([this.syncedPromise.then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the watch; resolves when the loop has finished (or after a few seconds if storage hangs). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.stop();
    this.wakeRetry?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loop, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    const { storage, prefix, logger, handler, name } = this.options;
    const maxDelay = this.options.maxRetryDelayMs ?? 5000;
    let delay = 100;
    while (!this.stopped) {
      try {
        const list = await storage.getList(prefix, { recursive: true });
        this.lastFailure = undefined;
        // Synced before the hand-over, so that listeners told of this first
        // replace already see every collection that is complete as complete.
        const first = !this.synced;
        this.synced = true;
        handler.replace(list.items);
        if (first) {
          this.resolveSynced();
          logger?.info('informer synced', { informer: name, items: list.items.length });
        }
        if (this.stopped) break;
        const watcher = await storage.watch(prefix, {
          recursive: true,
          resourceVersion: list.resourceVersion,
        });
        this.watcher = watcher;
        if (this.stopped) watcher.stop();
        let healthy = false;
        for await (const event of watcher) {
          if (event.type === 'ERROR') {
            // Usually 410 Expired after compaction: relist to catch up.
            logger?.warn('watch ended with an error; relisting', {
              informer: name,
              message: event.object['message'],
            });
            break;
          }
          healthy = true;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') handler.upsert(event.object);
          else if (event.type === 'DELETED') handler.remove(event.object);
        }
        watcher.stop();
        this.watcher = undefined;
        if (healthy) delay = 100;
      } catch (err) {
        if (this.stopped) break;
        this.lastFailure = describe(err);
        logger?.warn('list/watch failed; retrying', {
          informer: name,
          error: describe(err),
          retryInMs: delay,
        });
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeRetry = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeRetry = undefined;
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/** Only the message: a storage error's other fields are not for logs. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
