// An audit event's JSON line written from the live event, in upstream's field order
// (k8s.io/apiserver pkg/apis/audit/v1 Event, as its encoder writes it), without the
// ordered copy snapshotEvent makes: an audited get paid for a copy of the user, its
// groups and extra, the object reference and the annotations on every event
// (docs/performance/audited-gets.md). An event built by newEvent and the audit filter
// is already in that order and form, and is JSON.stringify of itself; any other is
// written piece by piece. Either way the output is byte for byte
// JSON.stringify(snapshotEvent(ev)), which encode.test.ts checks over generated events;
// a string that needs escaping is escaped by JSON.stringify itself.

import { AUDIT_API_VERSION, type Event, type EventUser, type ObjectReference } from './types.js';

const OBJECT_REF_FIELDS = [
  'resource',
  'namespace',
  'name',
  'uid',
  'apiGroup',
  'apiVersion',
  'resourceVersion',
  'subresource',
] as const satisfies readonly (keyof ObjectReference)[];

/**
 * Whether JSON would write `s` other than between plain quotes: a quote, a backslash,
 * a control character, or a surrogate (JSON.stringify escapes a lone one; a pair goes
 * to JSON.stringify too, which writes it as it is).
 */
function needsEscape(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return true;
  }
  return false;
}

/** A string as JSON writes it; most need no escape and are only quoted. */
const quote = (s: string): string => (needsEscape(s) ? JSON.stringify(s) : `"${s}"`);

/** Any value as JSON.stringify writes it inside an object (undefined when it leaves the key out). */
const value = (v: unknown): string | undefined => (typeof v === 'string' ? quote(v) : JSON.stringify(v));

function stringArray(values: readonly string[]): string {
  let out = '[';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    // An array writes what JSON cannot (undefined) as null.
    out += value(values[i]) ?? 'null';
  }
  return out + ']';
}

/** True for a key an object enumerates before the others: an array index ("0" … "4294967294"). */
function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57) return false;
  if (key.length > 1 && c === 48) return false;
  if (!/^\d+$/.test(key)) return false;
  return Number(key) < 4294967295;
}

/**
 * The keys of a Go map as snapshotEvent's sorted copy enumerates them: sorted by code
 * unit, except that an object lists array-index keys first, in numeric order (the copy
 * is a plain object, and JSON.stringify follows its property order).
 */
function sortedKeys(map: object): string[] {
  const keys = Object.keys(map);
  if (keys.length < 2) return keys;
  keys.sort();
  let indices: string[] | undefined;
  for (const key of keys) if (isArrayIndex(key)) (indices ??= []).push(key);
  if (!indices) return keys;
  indices.sort((a, b) => Number(a) - Number(b));
  return [...indices, ...keys.filter((key) => !isArrayIndex(key))];
}

/** A map with sorted keys, each value through `write` (undefined leaves the key out, as JSON does). */
function sortedMap<T>(map: Readonly<Record<string, T>>, write: (v: T) => string | undefined): string {
  let out = '{';
  let first = true;
  for (const key of sortedKeys(map)) {
    const text = write(map[key] as T);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${quote(key)}:${text}`;
    first = false;
  }
  return out + '}';
}

function user(u: EventUser): string {
  let out = '';
  if (u.username) out += `,"username":${quote(u.username)}`;
  if (u.uid) out += `,"uid":${quote(u.uid)}`;
  if (u.groups && u.groups.length > 0) out += `,"groups":${stringArray(u.groups)}`;
  const extra = u.extra;
  if (extra && Object.keys(extra).length > 0) out += `,"extra":${sortedMap(extra, stringArray)}`;
  return out === '' ? '{}' : `{${out.slice(1)}}`;
}

function objectRef(ref: ObjectReference): string {
  let out = '';
  for (const field of OBJECT_REF_FIELDS) {
    const v = ref[field];
    if (v) out += `,"${field}":${quote(v)}`;
  }
  return out === '' ? '{}' : `{${out.slice(1)}}`;
}

/** The event written piece by piece: what snapshotEvent keeps, in its order. */
function encodePiecewise(ev: Event): string {
  let out = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":${quote(ev.level)},"auditID":${quote(
    ev.auditID,
  )},"stage":${quote(ev.stage)},"requestURI":${quote(ev.requestURI)},"verb":${quote(ev.verb)},"user":${user(
    ev.user,
  )}`;
  if (ev.impersonatedUser) out += `,"impersonatedUser":${user(ev.impersonatedUser)}`;
  if (ev.sourceIPs) out += `,"sourceIPs":${stringArray(ev.sourceIPs)}`;
  if (ev.userAgent) out += `,"userAgent":${quote(ev.userAgent)}`;
  if (ev.objectRef) out += `,"objectRef":${objectRef(ev.objectRef)}`;
  if (ev.responseStatus) {
    const text = value(ev.responseStatus);
    if (text !== undefined) out += `,"responseStatus":${text}`;
  }
  if (ev.requestObject !== undefined) {
    const text = value(ev.requestObject);
    if (text !== undefined) out += `,"requestObject":${text}`;
  }
  if (ev.responseObject !== undefined) {
    const text = value(ev.responseObject);
    if (text !== undefined) out += `,"responseObject":${text}`;
  }
  out += `,"requestReceivedTimestamp":${quote(ev.requestReceivedTimestamp)},"stageTimestamp":${quote(
    ev.stageTimestamp,
  )}`;
  const annotations = ev.annotations;
  if (annotations && Object.keys(annotations).length > 0) out += `,"annotations":${sortedMap(annotations, value)}`;
  return out + '}';
}

// --- The canonical event: one JSON.stringify of the event itself. ---
//
// An event whose fields already are what snapshotEvent would copy (in upstream's order,
// empty fields absent or undefined, map keys sorted) encodes as JSON.stringify of
// itself: V8's serializer writes it into one string, where building the line in script
// makes a cons string per piece (~2.5 KB of them for a get's event, more than the
// snapshot's copies). newEvent and the audit filter build events this way; any other
// event is written piecewise. The checks walk the keys in place (for-in), allocating
// nothing.

const EVENT_RANK: Readonly<Record<string, number>> = {
  kind: 0,
  apiVersion: 1,
  level: 2,
  auditID: 3,
  stage: 4,
  requestURI: 5,
  verb: 6,
  user: 7,
  impersonatedUser: 8,
  sourceIPs: 9,
  userAgent: 10,
  objectRef: 11,
  responseStatus: 12,
  requestObject: 13,
  responseObject: 14,
  requestReceivedTimestamp: 15,
  stageTimestamp: 16,
  annotations: 17,
};
const USER_RANK: Readonly<Record<string, number>> = { username: 0, uid: 1, groups: 2, extra: 3 };
const OBJECT_REF_RANK: Readonly<Record<string, number>> = Object.fromEntries(
  OBJECT_REF_FIELDS.map((f, i) => [f, i]),
);

/** `key`'s place in `ranks`, own (not inherited, so `toString` or `__proto__` is unknown). */
function rankOf(ranks: Readonly<Record<string, number>>, key: string): number {
  return Object.hasOwn(ranks, key) ? (ranks[key] as number) : -1;
}

const isNonEmptyString = (v: unknown): boolean => typeof v === 'string' && v !== '';

function isStringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

/** A map whose own keys are sorted (and none an array index), at least one, each value passing `ok`. */
function isSortedMap(map: unknown, ok: (v: unknown) => boolean): boolean {
  if (typeof map !== 'object' || map === null || Object.getPrototypeOf(map) !== Object.prototype) return false;
  let previous: string | undefined;
  for (const key in map) {
    if (previous !== undefined && !(previous < key)) return false;
    if (isArrayIndex(key) || !ok((map as Record<string, unknown>)[key])) return false;
    previous = key;
  }
  return previous !== undefined;
}

/** Plain object, own keys in `ranks` order, each value undefined or passing `ok` for its key. */
function isOrdered(
  obj: unknown,
  ranks: Readonly<Record<string, number>>,
  ok: (key: string, v: unknown) => boolean,
): boolean {
  if (typeof obj !== 'object' || obj === null || Object.getPrototypeOf(obj) !== Object.prototype) return false;
  let last = -1;
  for (const key in obj) {
    const rank = rankOf(ranks, key);
    if (rank <= last) return false;
    last = rank;
    const v = (obj as Record<string, unknown>)[key];
    if (v !== undefined && !ok(key, v)) return false;
  }
  return true;
}

const userFieldOk = (key: string, v: unknown): boolean => {
  if (key === 'groups') return isStringArray(v) && (v as unknown[]).length > 0;
  if (key === 'extra') return isSortedMap(v, isStringArray);
  return isNonEmptyString(v);
};
const isCanonicalUser = (u: unknown): boolean => isOrdered(u, USER_RANK, userFieldOk);

const eventFieldOk = (key: string, v: unknown): boolean => {
  switch (key) {
    case 'kind':
      return v === 'Event';
    case 'apiVersion':
      return v === AUDIT_API_VERSION;
    case 'user':
    case 'impersonatedUser':
      return isCanonicalUser(v);
    case 'sourceIPs':
      return isStringArray(v);
    case 'userAgent':
      return isNonEmptyString(v);
    case 'objectRef':
      return isOrdered(v, OBJECT_REF_RANK, (_k, x) => isNonEmptyString(x));
    case 'responseStatus':
      // Kept by reference in the snapshot: any object writes the same.
      return typeof v === 'object' && v !== null;
    case 'requestObject':
    case 'responseObject':
      return true;
    case 'annotations':
      return isSortedMap(v, (x) => typeof x === 'string');
    default:
      // level, auditID, stage, requestURI, verb and the timestamps are always written.
      return typeof v === 'string';
  }
};

/** True when JSON.stringify(ev) writes what JSON.stringify(snapshotEvent(ev)) does. */
function isCanonicalEvent(ev: Event): boolean {
  return (
    isOrdered(ev, EVENT_RANK, eventFieldOk) &&
    // Fields the snapshot always writes.
    ev.kind === 'Event' &&
    ev.apiVersion === AUDIT_API_VERSION &&
    typeof ev.level === 'string' &&
    typeof ev.auditID === 'string' &&
    typeof ev.stage === 'string' &&
    typeof ev.requestURI === 'string' &&
    typeof ev.verb === 'string' &&
    ev.user !== undefined &&
    typeof ev.requestReceivedTimestamp === 'string' &&
    typeof ev.stageTimestamp === 'string'
  );
}

/** JSON.stringify(snapshotEvent(ev)), without the snapshot. */
export function encodeEvent(ev: Event): string {
  return isCanonicalEvent(ev) ? JSON.stringify(ev) : encodePiecewise(ev);
}

/** An audit.k8s.io/v1 EventList of already encoded events, as JSON.stringify writes the list. */
export function encodeEventList(lines: readonly string[]): string {
  return `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[${lines.join(',')}]}`;
}
