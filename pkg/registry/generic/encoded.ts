// Compact JSON of objects served from the watch cache, encoded once per cached state.
// The cache holds each object decoded and deep-frozen, and a Store answers with a
// shallow copy that puts apiVersion and kind first; every get and list of the same
// state used to stringify the same ~1 KiB again (7% of a get's server time, ~40% of a
// list's). The Store notes which frozen object an output copies; the response writer
// asks for its JSON, which is made on first use and kept with the cached object (a
// WeakMap: it goes when the cache lets go of that state).

import type { KubeObject } from '../../apis/meta/types.js';

interface Encoded {
  readonly apiVersion: unknown;
  readonly kind: unknown;
  readonly json: string;
}

/** Output copy -> the frozen cached object it copies. */
const sources = new WeakMap<object, KubeObject>();
/** Frozen cached object -> the JSON of its output copy. */
const encodings = new WeakMap<KubeObject, Encoded>();

/**
 * At most this many states keep their JSON (~1.9 KiB each with these Users): the most
 * recently encoded ones. Without a bound a store whose every object is read would hold
 * a string per object; with it, the memo costs at most ~20 MiB however big the store.
 */
export const MAX_ENCODED_STATES = 10_000;
/** The states holding a memo, oldest first (a ring; weak, so the cache can drop them). */
const order: (WeakRef<KubeObject> | undefined)[] = [];
let next = 0;

function remember(source: KubeObject, encoded: Encoded): void {
  const had = encodings.has(source);
  encodings.set(source, encoded);
  if (had) return;
  const evicted = order[next]?.deref();
  if (evicted !== undefined) encodings.delete(evicted);
  order[next] = new WeakRef(source);
  next = (next + 1) % MAX_ENCODED_STATES;
}

/** How many of the given states hold a memo (tests). */
export function encodedCount(states: readonly KubeObject[]): number {
  return states.filter((s) => encodings.has(s)).length;
}

/** `output` is `source` with apiVersion and kind (re)set first; remembered when `source` is frozen. */
export function noteOutputOf(output: KubeObject, source: KubeObject): void {
  if (Object.isFrozen(source)) sources.set(output, source);
}

/**
 * JSON.stringify(value) for an output copy of a cached object, from the memo when the
 * copy is still what the Store made (the same keys in the same order, the same values:
 * nested values are frozen); undefined for anything else.
 */
export function cachedJSON(value: unknown): string | undefined {
  return encode(value, true);
}

function encode(value: unknown, keep: boolean): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const source = sources.get(value);
  if (source === undefined) return undefined;
  const output = value as Record<string, unknown>;
  const from = source as Record<string, unknown>;
  // Nobody changed the copy after the Store made it: apiVersion and kind first, then
  // the source's own keys in its order (so a field deleted, or deleted and set again,
  // shows), each with the identical value.
  const outputKeys = Object.keys(output);
  if (outputKeys[0] !== 'apiVersion' || outputKeys[1] !== 'kind') return undefined;
  let i = 2;
  for (const key in from) {
    if (key === 'apiVersion' || key === 'kind') continue;
    if (outputKeys[i++] !== key || output[key] !== from[key]) return undefined;
  }
  if (i !== outputKeys.length) return undefined;
  const memo = encodings.get(source);
  if (memo && memo.apiVersion === output['apiVersion'] && memo.kind === output['kind']) return memo.json;
  const json = JSON.stringify(output);
  if (keep) remember(source, { apiVersion: output['apiVersion'], kind: output['kind'], json });
  return json;
}

/**
 * JSON.stringify(list) for a list whose items are output copies of cached objects,
 * joining their memoized JSON; undefined when it has no such items.
 */
export function cachedListJSON(list: unknown): string | undefined {
  if (typeof list !== 'object' || list === null || Array.isArray(list)) return undefined;
  const items = (list as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length === 0 || !sources.has(items[0] as object)) return undefined;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(list)) {
    if (key === 'items') {
      // A list longer than the memo would only push out, one by one, the memos it needs
      // next: it uses those it finds and keeps none of its own.
      const keep = items.length <= MAX_ENCODED_STATES;
      const encoded = Array.from(
        items,
        (item: unknown) => encode(item, keep) ?? JSON.stringify(item) ?? 'null',
      );
      parts.push(`"items":[${encoded.join(',')}]`);
      continue;
    }
    const json = JSON.stringify(value);
    if (json !== undefined) parts.push(`${JSON.stringify(key)}:${json}`);
  }
  return `{${parts.join(',')}}`;
}
