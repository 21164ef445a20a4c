// Compact JSON of objects served from the watch cache, encoded once per cached state.
// The cache holds each object decoded and deep-frozen, and a Store answers with a
// shallow copy that puts apiVersion and kind first; every get and list of the same
// state used to stringify the same ~1 KiB again (7% of a get's server time, ~40% of a
// list's). The Store notes which frozen object an output copy copies; the response
// writer asks for its JSON, which is made on first use and kept with the cached object
// (a WeakMap: it goes when the cache lets go of that state).
//
// The memo is the UTF-8 bytes, not a string, laid end to end with a comma before each
// (memo-slab.ts): a list of 10,000 items is then written as a few runs of memory the
// memos already hold, with nothing encoded, converted or copied per list. Kept as
// strings, every list turned ~11 MB of them into UTF-8 again on its write and, built
// into chunk strings first, left megabytes of garbage that the young generation copied
// while the socket held them: together most of a list's server time.

import type { KubeObject } from '../../apis/meta/types.js';
import { BodyPieces, memoBytes, type MemoBytes } from './memo-slab.js';

interface Encoded extends MemoBytes {
  readonly apiVersion: unknown;
  readonly kind: unknown;
  /** False on an encoding made for one use and not kept (only a list's overflow makes those). */
  readonly kept?: false;
  /** `bytes` as a response body, made on the first get that writes it and shared by the next. */
  body?: EncodedBody | undefined;
}

/** Output copy -> the frozen cached object it copies. */
const sources = new WeakMap<object, KubeObject>();
/** Frozen cached object -> the JSON of its output copy. */
const encodings = new WeakMap<KubeObject, Encoded>();

/**
 * At most this many states keep their JSON (~1.1 KiB of bytes each with the bench's
 * Users): the most recently encoded ones. Without a bound a store whose every object is
 * read would hold a memo per object; with it, the memo costs at most ~12 MiB however
 * big the store (outside the V8 heap: Buffers).
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

/**
 * Arrays whose every item is a deep-frozen cached state already as a client sees it
 * (apiVersion and kind first, and current): a list's items handed out with no copy at
 * all. Frozen themselves, so nothing can put another object in.
 */
const stateLists = new WeakSet<readonly unknown[]>();

/** `items` (cached states in output form) as a list's items; see stateLists. */
export function noteStateList<T extends KubeObject>(items: T[]): T[] {
  stateLists.add(Object.freeze(items));
  return items;
}

/** `subset`, picked from `of`, holds such states too when `of` does (a filtered list). */
export function noteListSubset<T>(subset: T[], of: readonly T[]): T[] {
  if (stateLists.has(of)) stateLists.add(Object.freeze(subset));
  return subset;
}

/** `output` is `source` with apiVersion and kind (re)set first; remembered when `source` is frozen. */
export function noteOutputOf(output: KubeObject, source: KubeObject): void {
  if (Object.isFrozen(source)) sources.set(output, source);
}

/**
 * JSON.stringify(value) in UTF-8 for an output copy of a cached object, from the memo
 * when the copy is still what the Store made (the same keys in the same order, the
 * same values: nested values are frozen); undefined for anything else. The memo's own
 * Buffer: never to be written into.
 */
export function cachedBytes(value: unknown): Buffer | undefined {
  return encodedItem(value, true)?.bytes;
}

/**
 * cachedBytes as a one-piece response body: the same object for every response of the
 * same state (frozen, as the memo's bytes are never written into).
 */
export function cachedItemBody(value: unknown): EncodedBody | undefined {
  const memo = encodedItem(value, true);
  if (memo === undefined) return undefined;
  return (memo.body ??= Object.freeze({ parts: Object.freeze([memo.bytes]), bytes: memo.bytes.length }));
}

/** cachedBytes as a string (tests, and callers that need one). */
export function cachedJSON(value: unknown): string | undefined {
  return cachedBytes(value)?.toString();
}

/**
 * The memo of an output copy, made (and kept when `keep`) if it has none; undefined
 * when `value` is not an unchanged output copy of a cached object.
 */
function encodedItem(value: unknown, keep: boolean): Encoded | undefined {
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
  if (memo && memo.apiVersion === output['apiVersion'] && memo.kind === output['kind']) return memo;
  return encodeNow(output, source, keep);
}

/** The memo of a cached state handed out as it is (an item of a state list): frozen, so no check. */
function encodedState(state: KubeObject, keep: boolean): Encoded {
  const memo = encodings.get(state);
  if (memo && memo.apiVersion === state.apiVersion && memo.kind === state.kind) return memo;
  return encodeNow(state, state, keep);
}

/** `output`'s JSON, kept as `source`'s memo when `keep`. */
function encodeNow(output: object, source: KubeObject, keep: boolean): Encoded {
  const { apiVersion, kind } = output as Record<string, unknown>;
  const { bytes, listed } = memoBytes(JSON.stringify(output), keep);
  if (!keep) return { apiVersion, kind, bytes, listed, kept: false, body: undefined };
  const encoded: Encoded = { apiVersion, kind, bytes, listed, body: undefined };
  remember(source, encoded);
  return encoded;
}

/** A response body as UTF-8 pieces to write in order, and its length in bytes. */
export interface EncodedBody {
  readonly parts: readonly Buffer[];
  readonly bytes: number;
}

/**
 * JSON.stringify(list) as pieces, for a list whose items are cached states handed out
 * as they are (a state list) or output copies of them: the envelope's bytes around the
 * items' memos (or, past the memo's bound, Buffers made for this list), memos that
 * follow each other in memory joined into one piece. Undefined for any other list (the
 * caller stringifies as usual). The pieces are the memos' memory: a writer sends them
 * as they are, never into.
 */
export function cachedListBody(list: unknown): EncodedBody | undefined {
  if (typeof list !== 'object' || list === null || Array.isArray(list)) return undefined;
  const items = (list as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length === 0) return undefined;
  const states = stateLists.has(items);
  if (!states && !sources.has(items[0] as object)) return undefined;
  const body = new BodyPieces();
  // The envelope's text between the items, added as one piece where the items begin and after them.
  let text = '';
  let first = true;
  for (const [key, value] of Object.entries(list)) {
    const prefix = `${first ? '{' : ','}${JSON.stringify(key)}:`;
    if (key === 'items') {
      first = false;
      body.add(Buffer.from(`${text}${prefix}[`));
      // A list longer than the memo keeps memos for as many of its items as the memo
      // holds, and encodes the rest each time: keeping them would only push out, one by
      // one, the memos it needs next.
      let room = MAX_ENCODED_STATES;
      for (let i = 0; i < items.length; i++) {
        const item: unknown = items[i];
        const encoded = states ? encodedState(item as KubeObject, room > 0) : encodedItem(item, room > 0);
        // A memo found counts as one kept: otherwise the item past the bound would take
        // the oldest memo's place, that one the next's on the next list, and so on.
        if (encoded !== undefined && encoded.kept === undefined) room--;
        const piece = encoded ?? memoBytes(JSON.stringify(item) ?? 'null', false);
        body.add(i === 0 ? piece.bytes : piece.listed);
      }
      text = ']';
      continue;
    }
    const json = JSON.stringify(value);
    if (json === undefined) continue;
    first = false;
    text += prefix + json;
  }
  body.add(Buffer.from(`${text}}`)); // `items` was there: never an empty object
  return { parts: body.parts(), bytes: body.bytes };
}

/** JSON.stringify(list) for the lists cachedListBody encodes (one string: for tests and callers that need one). */
export function cachedListJSON(list: unknown): string | undefined {
  const body = cachedListBody(list);
  return body && Buffer.concat(body.parts, body.bytes).toString();
}
