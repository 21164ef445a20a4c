// Unknown fields and disallowed nulls, found by walking an object against its
// structural schema as apiextensions' pruning does: declared properties and map
// values are known, `x-kubernetes-preserve-unknown-fields` keeps everything below
// it, and an object schema without properties knows no fields at all.

import { setOwn } from '../../util/own-member.js';
import { FieldPath } from '../meta/field-errors.js';
import { isObject } from '../meta/types.js';
import {
  childSchema,
  isNullable,
  itemSchema,
  preservesUnknownFields,
  propertiesOf,
  type SchemaNode,
} from './walk.js';

/** True when the schema says nothing about the shape below it (not even `type: object`). */
function unconstrained(schema: SchemaNode): boolean {
  return (
    schema['type'] === undefined &&
    propertiesOf(schema) === undefined &&
    schema['additionalProperties'] === undefined &&
    schema['items'] === undefined
  );
}

/**
 * Reports (and with `remove`, deletes) fields the schema does not know, in document
 * order, as field paths: `spec.colour`, `spec.access[0].foo`, `metadata.foo`.
 */
export function walkUnknownFields(
  value: unknown,
  schema: SchemaNode,
  path: FieldPath,
  remove: boolean,
  out: string[],
): void {
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return;
    value.forEach((item, i) => walkUnknownFields(item, items, path.index(i), remove, out));
    return;
  }
  if (!isObject(value) || unconstrained(schema)) return;
  const keep = preservesUnknownFields(schema);
  for (const key of Object.keys(value)) {
    const child = childSchema(schema, key);
    if (child) {
      const childPath = child.property ? path.child(key) : path.key(key);
      walkUnknownFields(value[key], child.schema, childPath, remove, out);
    } else if (!keep) {
      out.push(path.child(key).toString());
      if (remove) delete value[key];
    }
  }
}

/**
 * Returns `value` without nulls in known fields that are not nullable, copying only
 * the objects on the way to a removed null (the input is never changed). apiextensions
 * drops such nulls before validating, so a client's `description: null` means "unset".
 */
export function withoutDisallowedNulls(value: unknown, schema: SchemaNode): unknown {
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (!items) return value;
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = withoutDisallowedNulls(item, items);
      if (next !== item) {
        copy ??= [...value];
        copy[i] = next;
      }
    });
    return copy ?? value;
  }
  if (!isObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const child = childSchema(schema, key);
    if (!child) continue;
    const current = value[key];
    if (current === null) {
      if (isNullable(child.schema)) continue;
      copy ??= { ...value };
      delete copy[key];
      continue;
    }
    const next = withoutDisallowedNulls(current, child.schema);
    if (next !== current) {
      copy ??= { ...value };
      setOwn(copy, key, next);
    }
  }
  return copy ?? value;
}

/** Deletes, in place, nulls in known fields that are not nullable. */
export function dropDisallowedNulls(value: unknown, schema: SchemaNode): void {
  if (Array.isArray(value)) {
    const items = itemSchema(schema);
    if (items) for (const item of value) dropDisallowedNulls(item, items);
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    const child = childSchema(schema, key);
    if (!child) continue;
    if (value[key] === null) {
      if (!isNullable(child.schema)) delete value[key];
    } else {
      dropDisallowedNulls(value[key], child.schema);
    }
  }
}

export function rootPath(): FieldPath {
  return FieldPath.root('');
}
