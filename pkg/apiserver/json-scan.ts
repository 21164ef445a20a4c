// One pass over a JSON body's text for what JSON.parse cannot tell us: how deep it
// nests, which keys repeat within an object, which integer literals lie outside
// int64, and which ones JSON.parse and JSON.stringify would change. kube-apiserver's decoder
// (sigs.k8s.io/json, a fork of encoding/json) stops at a nesting depth limit
// ("exceeded max depth"), reports duplicate fields as strict decoding errors
// (`duplicate field "metadata.name"`), refuses an integer that does not fit an int64
// field and keeps every other integer exact (int64 fields, and int64 in unstructured
// content: UnmarshalCaseSensitivePreserveInts); JSON.parse silently keeps the last
// duplicate, rounds 9223372036854775808 to a double that passes an int64 range check,
// and turns 9007199254740993 into 9007199254740992 (and JSON.stringify writes 2^62,
// which a double holds exactly, as 4611686018427388000).
//
// The scan is iterative (an explicit stack), so no input can exhaust the call stack.
// It never throws: on text that is not JSON its findings mean nothing but its depth
// verdict still holds, so callers bound depth first and leave syntax to JSON.parse.

/** What the scan found besides the parsed value. */
export interface JSONScan {
  /** True when objects and arrays nest deeper than the limit; nothing else is then reported. */
  readonly tooDeep: boolean;
  /** Paths of keys set twice in one object, as kjson prints them: `metadata.name`, `spec.items[0].a`. */
  readonly duplicates: readonly string[];
  /** Integer literals outside int64, with their path. */
  readonly outOfRange: readonly IntegerLiteral[];
  /** Integer literals within int64 that a parse and a write as JSON would change, with their path. */
  readonly inexact: readonly IntegerLiteral[];
}

export interface IntegerLiteral {
  readonly path: string;
  readonly literal: string;
}

interface Level {
  readonly isObject: boolean;
  /** The key (object) or index (array) of this level's current member, for paths. */
  member: string | number | undefined;
  keys: Set<string> | undefined;
}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Whether an integer does not fit an int64 (what Go's decoder refuses for int64 fields). */
export function outsideInt64(value: bigint): boolean {
  return value > INT64_MAX || value < INT64_MIN;
}

/**
 * Whether an integer comes back changed once held as a double and written out again:
 * rounded (9007199254740993 -> ...992), or held exactly but printed in its shortest
 * form (2^62 -> 4611686018427388000). Every integer of up to 15 digits survives (2^53
 * has 16), so a shorter literal needs no look.
 */
export const EXACT_INTEGER_DIGITS = 15;
export function changedByDouble(value: bigint): boolean {
  return String(Number(value)) !== value.toString();
}

/** A key or index path the way kjson names fields: dots between keys, brackets for indexes. */
function pathOf(stack: readonly Level[], last?: string): string {
  let out = '';
  const add = (member: string | number | undefined): void => {
    if (member === undefined) return;
    if (typeof member === 'number') out += `[${member}]`;
    else out += out === '' ? member : `.${member}`;
  };
  for (const level of stack) add(level.member);
  if (last !== undefined) add(last);
  return out;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The end (exclusive) of the string literal that opens at `start` (a quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) return text.length;
    let backslashes = 0;
    for (let j = q - 1; j > start && text.charCodeAt(j) === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** A key's text with its escapes decoded; as written when they are malformed (JSON.parse reports those). */
function unescapeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/**
 * Scans JSON text; `maxDepth` is the deepest nesting allowed (the top-level object is 1).
 * `exact` asks for the integers a double would change (`inexact`); without it only
 * those outside int64 are looked at.
 */
export function scanJSON(text: string, maxDepth: number, exact = true): JSONScan {
  const stack: Level[] = [];
  const duplicates: string[] = [];
  const outOfRange: IntegerLiteral[] = [];
  const inexact: IntegerLiteral[] = [];
  // 19 digits is where int64 ends; shorter literals always fit it.
  const longDigits = exact ? EXACT_INTEGER_DIGITS + 1 : 19;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) return { tooDeep: true, duplicates: [], outOfRange: [], inexact: [] };
      const isObject = c === 0x7b;
      stack.push({ isObject, member: isObject ? undefined : 0, keys: undefined });
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      if (top && !top.isObject) top.member = (top.member as number) + 1;
      i++;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      // A string directly followed by a colon is a key.
      let k = end;
      while (k < n && (text.charCodeAt(k) === 0x20 || text.charCodeAt(k) <= 0x0d)) k++;
      if (top?.isObject && text.charCodeAt(k) === 0x3a /* : */) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? unescapeKey(raw) : raw;
        top.keys ??= new Set();
        if (top.keys.has(key)) duplicates.push(pathOf(stack.slice(0, -1), key));
        top.keys.add(key);
        top.member = key;
        i = k + 1;
      } else {
        i = end;
      }
    } else if (c === 0x2d /* - */ || isDigit(c)) {
      let j = i + 1;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      const integral = next !== 0x2e /* . */ && next !== 0x65 /* e */ && next !== 0x45; /* E */
      // The sign counts as a digit here: a shorter run is exact and fits int64.
      if (integral && j - i >= longDigits && isDigit(text.charCodeAt(j - 1))) {
        const literal = text.slice(i, j);
        const value = BigInt(literal);
        if (outsideInt64(value)) outOfRange.push({ path: pathOf(stack), literal });
        else if (exact && changedByDouble(value)) inexact.push({ path: pathOf(stack), literal });
      }
      while (j < n && /[0-9.eE+-]/.test(text.charAt(j))) j++;
      i = j;
    } else {
      i++;
    }
  }
  return { tooDeep: false, duplicates, outOfRange, inexact };
}
