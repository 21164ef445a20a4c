// Small tools the conformance cases share: test objects, selectors, error matchers
// and a watch reader that fails (instead of hanging) when an event never comes.

import assert from 'node:assert/strict';
import type { KubeObject } from '../../apis/meta/types.js';
import type { StorageErrorCode } from '../errors.js';
import { isStorageError } from '../errors.js';
import type { KV } from '../kv.js';
import type { Predicate, Storage, StorageWatchEvent, Watcher } from '../interfaces.js';

export interface ConformanceEnv {
  readonly storage: Storage;
  readonly kv: KV;
  cleanup(): Promise<void>;
}

/** What every case gets: the backend under test and a key prefix no other case uses. */
export interface CaseContext {
  env(): ConformanceEnv;
  /** A fresh directory key ending in "/", unique to this call. */
  prefix(label: string): string;
}

export const TEST_API_VERSION = 'conformance.platform.dev/v1';
export const TEST_KIND = 'Widget';

/** A test object: cluster-scoped unless a namespace is given. */
export function widget(
  name: string,
  options: {
    namespace?: string;
    labels?: Record<string, string>;
    uid?: string;
    spec?: Record<string, unknown>;
  } = {},
): KubeObject {
  const metadata: KubeObject['metadata'] = { name, uid: options.uid ?? `uid-${name}` };
  if (options.namespace !== undefined) metadata.namespace = options.namespace;
  if (options.labels !== undefined) metadata.labels = options.labels;
  return { apiVersion: TEST_API_VERSION, kind: TEST_KIND, metadata, spec: options.spec ?? { size: 1 } };
}

/** Selects objects whose label `key` equals `value` (a non-empty predicate). */
export function labelEquals(key: string, value: string): Predicate {
  return { empty: false, matches: (obj) => obj.metadata.labels?.[key] === value };
}

/** Selects objects by name (a non-empty predicate), like fieldSelector=metadata.name in (...). */
export function nameIn(...names: string[]): Predicate {
  const set = new Set(names);
  return { empty: false, matches: (obj) => set.has(obj.metadata.name ?? '') };
}

export function rv(obj: KubeObject | null | undefined): number {
  assert.ok(obj, 'expected an object');
  const value = obj.metadata.resourceVersion;
  assert.ok(
    value !== undefined && /^[1-9][0-9]*$/.test(value),
    `expected a resourceVersion, got ${String(value)}`,
  );
  return Number(value);
}

export function names(items: readonly KubeObject[]): string[] {
  return items.map((o) => o.metadata.name ?? '');
}

/** Asserts that `promise` rejects with a StorageError of `code` (and, if given, a message matching). */
export async function rejectsWithCode(
  promise: Promise<unknown>,
  code: StorageErrorCode,
  message?: string | RegExp,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isStorageError(err), `expected a StorageError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected code ${code}, got ${err.code}: ${err.message}`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else if (message) assert.match(err.message, message);
    return true;
  });
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Resolves like `promise`, or rejects after `ms` so a missing event fails the case instead of hanging it. */
export async function withTimeout<T>(promise: Promise<T>, what: string, ms = DEFAULT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a Watcher one event at a time. */
export class EventReader {
  private readonly it: AsyncIterator<StorageWatchEvent>;

  constructor(readonly watcher: Watcher) {
    this.it = watcher[Symbol.asyncIterator]();
  }

  async next(what = 'a watch event'): Promise<StorageWatchEvent> {
    const r = await withTimeout(this.it.next(), what);
    assert.ok(!r.done, `the watch ended while waiting for ${what}`);
    return r.value;
  }

  async take(n: number): Promise<StorageWatchEvent[]> {
    const out: StorageWatchEvent[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next(`event ${i + 1} of ${n}`));
    return out;
  }

  /** Skips BOOKMARK events. */
  async nextChange(): Promise<StorageWatchEvent> {
    while (true) {
      const e = await this.next('a change event');
      if (e.type !== 'BOOKMARK') return e;
    }
  }

  /** Asserts that the watch ends, returning the events it still yielded before ending. */
  async drainToEnd(): Promise<StorageWatchEvent[]> {
    const out: StorageWatchEvent[] = [];
    while (true) {
      const r = await withTimeout(this.it.next(), 'the watch to end');
      if (r.done) return out;
      out.push(r.value);
    }
  }
}

/** A compact description of an event for comparing sequences. */
export function summary(e: StorageWatchEvent): string {
  return `${e.type} ${e.object.metadata.name ?? ''} ${e.object.metadata.resourceVersion ?? ''}`;
}
