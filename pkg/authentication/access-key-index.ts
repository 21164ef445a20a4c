// An in-memory index of OwnedAccessKeys by key hash, kept current by a list and a
// watch of the storage prefix (an informer, in client-go terms). Authentication
// then costs one hash and one map lookup instead of a storage round trip, and a
// key that is created, rotated, disabled or deleted takes effect as soon as the
// watch event arrives. A watch that ends or fails (compaction: 410) is replaced
// by a fresh list and watch; lookups keep using the last good state meanwhile.

import type { Logger } from '../apiserver/config.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import type { Storage, Watcher } from '../storage/interfaces.js';

export interface AccessKeyIndexOptions {
  readonly storage: Storage;
  /** The OwnedAccessKey collection prefix, ending with "/" (`/registry/<group>/ownedaccesskeys/`). */
  readonly prefix: string;
  readonly logger?: Logger;
  /** Longest wait between failed list/watch attempts. */
  readonly maxRetryDelayMs?: number;
}

/** The stored hash of a key object (`sha256:<hex>`), or '' when it has none. */
export function storedKeyHash(obj: KubeObject): string {
  const spec = obj.spec;
  return isObject(spec) && typeof spec.key === 'string' ? spec.key : '';
}

export class AccessKeyIndex {
  private byHash = new Map<string, KubeObject>();
  private hashByName = new Map<string, string>();
  private watcher: Watcher | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private synced = false;
  private resolveSynced!: () => void;
  private readonly syncedPromise = new Promise<void>((resolve) => (this.resolveSynced = resolve));
  private wakeRetry: (() => void) | undefined;
  private readonly keyWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly options: AccessKeyIndexOptions) {}

  /** Starts listing and watching; idempotent. */
  start(): void {
    this.loop ??= this.run();
  }

  /** True once the first list has been loaded. */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been loaded, or false after `timeoutMs`. */
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

  /**
   * Resolves true once a key with this stored hash is in the index (false after
   * `timeoutMs`): a key just written through the registry reaches the index only
   * through the watch, and a caller handing the key out must know it works.
   */
  async waitForKey(hash: string, timeoutMs: number): Promise<boolean> {
    if (this.byHash.has(hash)) return true;
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    const arrived = new Promise<boolean>((resolve) => (wake = () => resolve(true)));
    const waiters = this.keyWaiters.get(hash) ?? new Set<() => void>();
    waiters.add(wake);
    this.keyWaiters.set(hash, waiters);
    try {
      return await Promise.race([
        arrived,
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
      waiters.delete(wake);
      if (waiters.size === 0) this.keyWaiters.delete(hash);
    }
  }

  /** The key object whose stored hash is `hash`. */
  lookup(hash: string): KubeObject | undefined {
    return this.byHash.get(hash);
  }

  get size(): number {
    return this.hashByName.size;
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
    const { storage, prefix, logger } = this.options;
    const maxDelay = this.options.maxRetryDelayMs ?? 5000;
    let delay = 100;
    while (!this.stopped) {
      try {
        const list = await storage.getList(prefix, { recursive: true });
        this.replace(list.items);
        if (!this.synced) {
          this.synced = true;
          this.resolveSynced();
          logger?.info('access key index synced', { keys: this.size });
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
            logger?.warn('access key watch ended with an error; relisting', {
              message: event.object.message,
            });
            break;
          }
          healthy = true;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.put(event.object);
          else if (event.type === 'DELETED') this.remove(event.object);
        }
        watcher.stop();
        this.watcher = undefined;
        if (healthy) delay = 100;
      } catch (err) {
        if (this.stopped) break;
        logger?.warn('access key list/watch failed; retrying', { error: err, retryInMs: delay });
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

  private replace(items: readonly KubeObject[]): void {
    const byHash = new Map<string, KubeObject>();
    const hashByName = new Map<string, string>();
    for (const obj of items) {
      const name = obj.metadata.name ?? '';
      const hash = storedKeyHash(obj);
      hashByName.set(name, hash);
      if (hash) byHash.set(hash, obj);
    }
    // Swap in one step so a lookup never sees a half-built index.
    this.byHash = byHash;
    this.hashByName = hashByName;
    for (const hash of byHash.keys()) this.notify(hash);
  }

  private notify(hash: string): void {
    const waiters = this.keyWaiters.get(hash);
    if (waiters) for (const wake of waiters) wake();
  }

  private put(obj: KubeObject): void {
    const name = obj.metadata.name ?? '';
    const previous = this.hashByName.get(name);
    // A rotated key: the old hash must stop working at once.
    if (previous && this.byHash.get(previous)?.metadata.name === name) this.byHash.delete(previous);
    const hash = storedKeyHash(obj);
    this.hashByName.set(name, hash);
    if (hash) {
      this.byHash.set(hash, obj);
      this.notify(hash);
    }
  }

  private remove(obj: KubeObject): void {
    const name = obj.metadata.name ?? '';
    const previous = this.hashByName.get(name) ?? storedKeyHash(obj);
    if (previous && this.byHash.get(previous)?.metadata.name === name) this.byHash.delete(previous);
    this.hashByName.delete(name);
  }
}
