// Walking an object alongside its structural schema. Both field paths for errors
// and unknown-field detection need the same step: which sub-schema describes a
// child, and whether the child is a declared property (`.name`) or a map entry or
// list item (`[key]`, `[0]`).

import { isObject } from '../meta/types.js';

export type SchemaNode = Record<string, unknown>;

function asSchema(value: unknown): SchemaNode | undefined {
  return isObject(value) ? value : undefined;
}

export function propertiesOf(schema: SchemaNode): Record<string, unknown> | undefined {
  return asSchema(schema['properties']);
}

/** The schema of a declared property, if `key` is one. */
export function propertySchema(schema: SchemaNode, key: string): SchemaNode | undefined {
  const props = propertiesOf(schema);
  return props && Object.hasOwn(props, key) ? asSchema(props[key]) : undefined;
}

/** The schema of map values, when the node is a map (`additionalProperties: {...}`). */
export function mapValueSchema(schema: SchemaNode): SchemaNode | undefined {
  return asSchema(schema['additionalProperties']);
}

export function itemSchema(schema: SchemaNode): SchemaNode | undefined {
  return asSchema(schema['items']);
}

export function preservesUnknownFields(schema: SchemaNode): boolean {
  return schema['x-kubernetes-preserve-unknown-fields'] === true || schema['additionalProperties'] === true;
}

export function isNullable(schema: SchemaNode): boolean {
  return schema['nullable'] === true;
}

/**
 * The schema of child `key` of an object described by `schema`, and whether it is a
 * declared property (else a map entry). Undefined when the schema does not know it.
 */
export function childSchema(
  schema: SchemaNode,
  key: string,
): { schema: SchemaNode; property: boolean } | undefined {
  const prop = propertySchema(schema, key);
  if (prop) return { schema: prop, property: true };
  const value = mapValueSchema(schema);
  if (value) return { schema: value, property: false };
  return undefined;
}
