// Small helpers over plain JSON objects that the store needs in several places.

import { isObject, type KubeObject } from '../../apis/meta/types.js';

export function clone<T>(value: T): T {
  return structuredClone(value);
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
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
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
 * Whether anything outside metadata and status differs: the rule for bumping
 * generation (status is the server's report, not the desired state).
 */
export function sameDesiredState(a: KubeObject, b: KubeObject): boolean {
  const { metadata: _a, apiVersion: _av, kind: _ak, status: _as, ...restA } = a;
  const { metadata: _b, apiVersion: _bv, kind: _bk, status: _bs, ...restB } = b;
  return deepEqual(restA, restB);
}
