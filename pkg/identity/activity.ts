// status.lastActivity of access keys, kept current without a storage write per
// request. A request only notes the time in memory; a timer writes it, at most
// once per key per interval (--access-key-activity-interval), off the request path.
// The first use after a quiet interval is written at once, so a key's
// lastActivity is never older than one interval while it is in use.
//
// With several replicas each writes at most once per interval per key, and a
// replica that sees a fresh enough value in storage (another replica wrote it)
// counts that as its own write. Keys whose ttl counts from their last activity are
// written at least every half ttl, so another replica never expires a key that is
// in use just because the next write is not due yet.

import type { Logger } from '../util/log/index.js';
import { isApiError } from '../apis/meta/errors.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import { ACCESS_KEY_ACTIVITY_MANAGER, type StatusWriter } from './status-writer.js';

export const DEFAULT_ACTIVITY_INTERVAL_MS = 60_000;
/** No key is written more often than this, however short its ttl. */
const MIN_INTERVAL_MS = 1000;

/** The time in `status.lastActivity` (ms since the epoch), or undefined. */
export function storedLastActivity(key: KubeObject): number | undefined {
  const status = key['status'];
  if (!isObject(status) || typeof status['lastActivity'] !== 'string') return undefined;
  const t = Date.parse(status['lastActivity']);
  return Number.isNaN(t) ? undefined : t;
}

/** RFC 3339 with whole seconds, as Kubernetes writes metav1.Time. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface KeyState {
  /** Last use seen by this replica. */
  lastUse: number;
  /** Last time this replica wrote (or saw a fresh value in storage). */
  lastWrite: number;
  intervalMs: number;
  timer: NodeJS.Timeout | undefined;
}

export interface AccessKeyActivityOptions {
  /** OwnedAccessKeys' status subresource (writes are recorded for platform-access-key-activity). */
  readonly writer: StatusWriter;
  readonly intervalMs?: number;
  readonly now?: () => number;
  readonly logger?: Logger;
}

export class AccessKeyActivity {
  private readonly states = new Map<string, KeyState>();
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly writes = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: AccessKeyActivityOptions) {
    this.intervalMs = Math.max(MIN_INTERVAL_MS, options.intervalMs ?? DEFAULT_ACTIVITY_INTERVAL_MS);
    this.now = options.now ?? Date.now;
  }

  /** Notes that `key` authenticated a request just now. Cheap; never waits. */
  record(key: KubeObject): void {
    if (this.stopped) return;
    const name = key.metadata.name ?? '';
    if (!name) return;
    const now = this.now();
    let state = this.states.get(name);
    if (!state) {
      state = { lastUse: now, lastWrite: 0, intervalMs: this.intervalFor(key), timer: undefined };
      this.states.set(name, state);
    }
    state.lastUse = now;
    state.intervalMs = this.intervalFor(key);
    const stored = storedLastActivity(key);
    if (stored !== undefined) state.lastWrite = Math.max(state.lastWrite, stored);
    if (state.timer) return;
    // Written values have whole seconds: the stored value may be up to 1 s behind.
    if (stored !== undefined && now - stored < Math.min(MIN_INTERVAL_MS, state.intervalMs)) return;
    const due = Math.max(0, state.lastWrite + state.intervalMs - now);
    state.timer = setTimeout(() => this.write(name), due);
    state.timer.unref();
  }

  /** The last use this replica saw of the key named `name` (ms since the epoch). */
  lastUse(name: string): number | undefined {
    return this.states.get(name)?.lastUse;
  }

  /** Writes every pending use now (tests; shutdown). */
  async flush(): Promise<void> {
    for (const [name, state] of this.states) {
      if (state.timer) {
        clearTimeout(state.timer);
        this.write(name);
      }
    }
    await Promise.all([...this.writes]);
  }

  /** Writes what is pending and stops writing; call before storage closes. */
  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
  }

  private intervalFor(key: KubeObject): number {
    const spec = isObject(key['spec']) ? key['spec'] : {};
    const ttl = typeof spec['ttl'] === 'number' ? spec['ttl'] : 0;
    if (spec['ttlAfterLastActivity'] !== true || ttl <= 0) return this.intervalMs;
    return Math.max(MIN_INTERVAL_MS, Math.min(this.intervalMs, (ttl * 1000) / 2));
  }

  private write(name: string): void {
    const state = this.states.get(name);
    if (!state) return;
    state.timer = undefined;
    const lastUse = state.lastUse;
    state.lastWrite = this.now();
    const value = rfc3339Seconds(lastUse);
    const done = this.options.writer
      .writeStatus(
        name,
        (current) => {
          const stored = storedLastActivity(current);
          // Another replica (or an earlier write) already has this or a later time.
          if (stored !== undefined && stored >= Date.parse(value)) return undefined;
          const status = isObject(current['status']) ? current['status'] : {};
          return { ...status, lastActivity: value };
        },
        ACCESS_KEY_ACTIVITY_MANAGER,
      )
      .then(
        () => undefined,
        (err: unknown) => {
          if (isApiError(err) && err.code === 404) {
            this.states.delete(name);
            return;
          }
          this.options.logger?.warn('could not record access key activity', {
            accessKey: name,
            error: err instanceof Error ? err.message : String(err),
          });
        },
      );
    this.writes.add(done);
    void done.finally(() => this.writes.delete(done));
  }
}
