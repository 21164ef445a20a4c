// Small helpers over plain JSON objects that the store needs in several places.

import { isObject, type KubeObject } from '../../apis/meta/types.js';
import { structuredCopy } from '../../util/plain-copy.js';
import { rfc3339Seconds } from '../../util/timestamp.js';

/**
 * How deep objects and arrays may nest in anything a client sends (the top-level
 * object is 1). kube-apiserver's decoders stop at 10000 ("exceeded max depth"), a
 * bound for Go's stack; ours is lower because every walk of a decoded object
 * (validation, patches, managedFields, the copy before a write) must stay far within
 * V8's stack, and no Kubernetes object comes near it (real ones nest a few dozen levels).
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * How deep objects and arrays nest in `value` (a scalar is 0, `{}` is 1), counting no
 * further than `stopAbove` + 1. Iterative, so any depth is safe to ask about.
 */
export function nestingDepth(value: unknown, stopAbove: number = MAX_NESTING_DEPTH): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const v = next.value;
    if (v === null || typeof v !== 'object') continue;
    const depth = next.depth + 1;
    if (depth > deepest) deepest = depth;
    if (depth > stopAbove) return depth;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') pending.push({ value: child, depth });
    }
  }
  return deepest;
}

/** Whether objects and arrays in `value` nest deeper than `limit`. */
export function nestsDeeperThan(value: unknown, limit: number = MAX_NESTING_DEPTH): boolean {
  return nestingDepth(value, limit) > limit;
}

/** A deep copy, as structuredClone makes it (plain data is copied without its serialization). */
export function clone<T>(value: T): T {
  return structuredCopy(value, MAX_NESTING_DEPTH);
}

/** Structural equality of JSON values; key order does not matter, array order does. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return (
      ka.length === kb.length &&
      ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/** Now, as Kubernetes writes timestamps: RFC 3339 in UTC, whole seconds. */
export function nowTimestamp(now: Date = new Date()): string {
  return rfc3339Seconds(now);
}

/** A copy of the object without the fields that only describe its storage state. */
function withoutVolatileMeta(obj: KubeObject): KubeObject {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** Whether an update would change anything a client can see besides bookkeeping. */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  return deepEqual(withoutVolatileMeta(a), withoutVolatileMeta(b));
}

/**
 * Whether two managedFields lists are the same but for their entries' `time`
 * (upstream's IgnoreManagedFieldsTimestampsTransformer compares them so): a write
 * recorded against an object the strategy then put back changed nothing.
 */
export function sameManagedFieldsButTimes(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return deepEqual(a, b);
  if (a.length !== b.length) return false;
  return a.every((entry, i) => deepEqual(withoutTime(entry), withoutTime(b[i])));
}

function withoutTime(entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  const { time: _time, ...rest } = entry as Record<string, unknown>;
  return rest;
}

/**
 * Whether anything outside metadata and status differs: the rule for bumping
 * generation (status is the server's report, not the desired state).
 */
export function sameDesiredState(a: KubeObject, b: KubeObject): boolean {
  const { metadata: _a, apiVersion: _av, kind: _ak, status: _as, ...restA } = a;
  const { metadata: _b, apiVersion: _bv, kind: _bk, status: _bs, ...restB } = b;
  return deepEqual(restA, restB);
}
