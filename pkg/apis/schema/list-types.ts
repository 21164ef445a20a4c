// The uniqueness a list type promises (apiextensions-apiserver's listtype
// validation): a `set` holds each value once, a `map` each key once. Server-side
// apply relies on it, since a set member or a list-map key is the identity of the
// field a manager owns. As upstream, the second occurrence of a value is reported,
// once, as `Duplicate value`; for a list-map the value shown is the item's key.

import { duplicate, type FieldError } from '../meta/field-errors.js';
import { isObject } from '../meta/types.js';
import { itemSchema, mapValueSchema, propertySchema, type SchemaNode } from './walk.js';

/** The second index at which each repeated identity appears. */
function secondOccurrences(identities: readonly string[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  identities.forEach((id, i) => {
    const times = seen.get(id) ?? 0;
    seen.set(id, times + 1);
    if (times === 1) out.push(i);
  });
  return out;
}

function keyOf(item: unknown, keys: readonly string[]): Record<string, unknown> {
  const key: Record<string, unknown> = {};
  if (!isObject(item)) return key;
  for (const k of keys) if (k in item) key[k] = item[k];
  return key;
}

function checkList(path: string, schema: SchemaNode, list: readonly unknown[], errs: FieldError[]): void {
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of secondOccurrences(list.map((v) => JSON.stringify(v) ?? 'undefined')))
      errs.push(duplicate(`${path}[${i}]`, list[i]));
  } else if (listType === 'map') {
    const raw = schema['x-kubernetes-list-map-keys'];
    const keys = Array.isArray(raw) ? raw.filter((k): k is string => typeof k === 'string') : [];
    const identities = list.map((item) => keyOf(item, keys));
    for (const i of secondOccurrences(identities.map((k) => JSON.stringify(k))))
      errs.push(duplicate(`${path}[${i}]`, identities[i]));
  }
  const items = itemSchema(schema);
  if (items) list.forEach((item, i) => walk(`${path}[${i}]`, items, item, errs));
}

function walk(path: string, schema: SchemaNode, value: unknown, errs: FieldError[]): void {
  if (Array.isArray(value)) return checkList(path, schema, value, errs);
  if (!isObject(value)) return;
  const additional = mapValueSchema(schema);
  for (const [k, v] of Object.entries(value)) {
    const sub = propertySchema(schema, k);
    if (sub) walk(path ? `${path}.${k}` : k, sub, v, errs);
    else if (additional) walk(`${path}[${k}]`, additional, v, errs);
  }
}

/** Duplicate set members and list-map keys anywhere in `obj` (metadata excluded: the Store checks it). */
export function validateListTypes(schema: SchemaNode, obj: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(obj)) return errs;
  for (const [k, v] of Object.entries(obj)) {
    const sub = propertySchema(schema, k);
    if (k !== 'metadata' && sub) walk(k, sub, v, errs);
  }
  return errs;
}
