// Strategic merge patch for kinds described by a JSON schema: JSON merge patch,
// except that lists the schema marks `x-kubernetes-patch-strategy: merge` are
// merged (primitives as a set, objects by `x-kubernetes-patch-merge-key`)
// rather than replaced, and the patch may carry the directives kubectl sends:
// `$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<f>`
// and `$setElementOrder/<f>` (k8s.io/apimachinery/pkg/util/strategicpatch).
// ObjectMeta's own rules are built in: finalizers merge as a set and
// ownerReferences merge by uid, whatever the kind's schema says.

import { newBadRequest } from '../../apis/meta/errors.js';
import { isObject } from '../../apis/meta/types.js';
import { ownMember, setOwn } from '../../util/own-member.js';
import { clone, deepEqual } from './object.js';

type Schema = Record<string, unknown>;
type Json = Record<string, unknown>;

const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const RETAIN_KEYS = '$retainKeys';
const PATCH = '$patch';

const OBJECT_META_PATCH_SCHEMA: Schema = {
  type: 'object',
  properties: {
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
    ownerReferences: {
      type: 'array',
      items: { type: 'object' },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'uid',
    },
  },
};

/** Marks an element or map the patch deleted with `$patch: delete`. */
const DELETED = Symbol('deleted');

function subSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (!schema) return undefined;
  const props = schema.properties;
  const prop = isObject(props) ? ownMember(props, key) : undefined;
  if (isObject(prop)) return prop;
  const additional = schema.additionalProperties;
  return isObject(additional) ? additional : undefined;
}

function itemsSchema(schema: Schema | undefined): Schema | undefined {
  const items = schema?.items;
  return isObject(items) ? items : undefined;
}

interface ListStrategy {
  readonly merge: boolean;
  readonly mergeKey: string | undefined;
}

function listStrategy(schema: Schema | undefined): ListStrategy {
  if (!schema) return { merge: false, mergeKey: undefined };
  const strategy = schema['x-kubernetes-patch-strategy'];
  const mergeKey = schema['x-kubernetes-patch-merge-key'];
  if (typeof strategy === 'string' && strategy.split(',').includes('merge')) {
    return { merge: true, mergeKey: typeof mergeKey === 'string' ? mergeKey : undefined };
  }
  // Structural schemas say the same thing with list types.
  const listType = schema['x-kubernetes-list-type'];
  const mapKeys = schema['x-kubernetes-list-map-keys'];
  if (listType === 'set') return { merge: true, mergeKey: undefined };
  if (
    listType === 'map' &&
    Array.isArray(mapKeys) &&
    mapKeys.length === 1 &&
    typeof mapKeys[0] === 'string'
  ) {
    return { merge: true, mergeKey: mapKeys[0] };
  }
  return { merge: false, mergeKey: undefined };
}

function isDirectiveKey(key: string): boolean {
  return (
    key === PATCH ||
    key === RETAIN_KEYS ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST) ||
    key.startsWith(SET_ELEMENT_ORDER)
  );
}

/** A value from the patch, without directives, as it lands where nothing was. */
function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((v) => !(isObject(v) && PATCH in v && Object.keys(v).length === 1))
      .map(stripDirectives);
  }
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value))
    if (!isDirectiveKey(k) && v !== null) setOwn(out, k, stripDirectives(v));
  return out;
}

function stringList(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw newBadRequest(`invalid patch format: ${what} must be a list of strings`);
  }
  return value;
}

function mergeMap(
  original: Json | undefined,
  patch: Json,
  schema: Schema | undefined,
): Json | typeof DELETED {
  const directive = patch[PATCH];
  if (directive === 'delete') return DELETED;
  if (directive === 'replace') return stripDirectives(patch) as Json;
  if (directive !== undefined && directive !== 'merge') {
    throw newBadRequest(`unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(patch)}`);
  }
  const result: Json = original ? clone(original) : {};

  if (RETAIN_KEYS in patch) {
    const retain = new Set(stringList(patch[RETAIN_KEYS], RETAIN_KEYS));
    for (const k of Object.keys(result)) if (!retain.has(k) && !Object.hasOwn(patch, k)) delete result[k];
  }
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    const field = k.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (!Array.isArray(v)) throw newBadRequest(`invalid patch format: ${k} must be a list`);
    const current = ownMember(result, field);
    if (Array.isArray(current)) setOwn(result, field, current.filter((e) => !v.some((d) => deepEqual(d, e))));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (isDirectiveKey(k)) continue;
    if (v === null) {
      delete result[k];
      continue;
    }
    const sub = subSchema(schema, k);
    const current = ownMember(result, k);
    if (isObject(v)) {
      const merged = mergeMap(isObject(current) ? current : undefined, v, sub);
      if (merged === DELETED) delete result[k];
      else setOwn(result, k, merged);
    } else if (Array.isArray(v)) {
      setOwn(result, k, mergeList(Array.isArray(current) ? current : [], v, sub));
    } else {
      setOwn(result, k, v);
    }
  }
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = k.slice(SET_ELEMENT_ORDER.length);
    if (!Array.isArray(v)) throw newBadRequest(`invalid patch format: ${k} must be a list`);
    const current = ownMember(result, field);
    if (Array.isArray(current))
      setOwn(result, field, reorder(current, v, listStrategy(subSchema(schema, field)).mergeKey));
  }
  return result;
}

function sameElement(a: unknown, b: unknown, mergeKey: string | undefined): boolean {
  if (mergeKey && isObject(a) && isObject(b)) return deepEqual(a[mergeKey], b[mergeKey]);
  return deepEqual(a, b);
}

/** Puts the elements named by `order` first, in that order; the rest keep their relative order. */
function reorder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const placed = new Set<number>();
  const out: unknown[] = [];
  for (const o of order) {
    const i = list.findIndex((e, idx) => !placed.has(idx) && sameElement(e, o, mergeKey));
    if (i >= 0) {
      placed.add(i);
      out.push(list[i]);
    }
  }
  list.forEach((e, i) => {
    if (!placed.has(i)) out.push(e);
  });
  return out;
}

function mergeList(original: unknown[], patch: unknown[], schema: Schema | undefined): unknown[] {
  const replaceAll = patch.findIndex((e) => isObject(e) && e[PATCH] === 'replace');
  if (replaceAll >= 0) return stripDirectives(patch.filter((_, i) => i !== replaceAll)) as unknown[];
  const { merge, mergeKey } = listStrategy(schema);
  if (!merge) return stripDirectives(patch) as unknown[];
  const result = clone(original);
  if (!mergeKey) {
    // A set of primitives: union, keeping the original order first.
    for (const v of patch) {
      if (isObject(v) || Array.isArray(v)) return stripDirectives(patch) as unknown[];
      if (!result.some((e) => deepEqual(e, v))) result.push(v);
    }
    return result;
  }
  const items = itemsSchema(schema);
  for (const element of patch) {
    if (!isObject(element)) {
      throw newBadRequest(
        `invalid patch format: list items merged by ${JSON.stringify(mergeKey)} must be objects`,
      );
    }
    if (!Object.hasOwn(element, mergeKey)) {
      throw newBadRequest(`map: ${JSON.stringify(element)} does not contain declared merge key: ${mergeKey}`);
    }
    const i = result.findIndex((e) => isObject(e) && deepEqual(e[mergeKey], element[mergeKey]));
    if (element[PATCH] === 'delete') {
      if (i >= 0) result.splice(i, 1);
      continue;
    }
    const existing = i >= 0 ? result[i] : undefined;
    const merged = mergeMap(isObject(existing) ? existing : undefined, element, items);
    if (merged === DELETED) {
      if (i >= 0) result.splice(i, 1);
    } else if (i >= 0) {
      result[i] = merged;
    } else {
      result.push(merged);
    }
  }
  return result;
}

/**
 * Applies a strategic merge patch to `original` under `schema` (the kind's
 * top-level schema). Throws a 400 ApiError when the patch is malformed.
 */
export function strategicMergePatch(original: Json, patch: Json, schema: Schema): Json {
  const withMeta: Schema = {
    ...schema,
    properties: {
      ...(isObject(schema.properties) ? schema.properties : {}),
      metadata: OBJECT_META_PATCH_SCHEMA,
    },
  };
  const merged = mergeMap(original, patch, withMeta);
  if (merged === DELETED) throw newBadRequest('a strategic merge patch may not delete the whole object');
  return merged;
}
