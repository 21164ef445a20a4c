// Small constructors for the structural-schema subset the kinds are written in.
// They keep each kind's schema readable as a description of the API, and make
// every field carry a description (kubectl explain prints it).

/** A JSON schema node (OpenAPI v3 structural subset plus x-kubernetes-* extensions). */
export type JSONSchema = Record<string, unknown>;

export function str(description: string, extra: JSONSchema = {}): JSONSchema {
  return { type: 'string', description, ...extra };
}

export function bool(description: string): JSONSchema {
  return { type: 'boolean', description };
}

export function int64(description: string): JSONSchema {
  return { type: 'integer', format: 'int64', description };
}

export function int32(description: string): JSONSchema {
  return { type: 'integer', format: 'int32', description };
}

/** An RFC 3339 timestamp. */
export function dateTime(description: string): JSONSchema {
  return { type: 'string', format: 'date-time', description };
}

/** Binary data carried as standard base64 (RFC 4648 section 4) on the wire. */
export function bytes(description: string): JSONSchema {
  return { type: 'string', format: 'byte', description };
}

export function enumOf(description: string, values: readonly string[]): JSONSchema {
  return { type: 'string', description, enum: [...values] };
}

export function obj(
  description: string,
  properties: Record<string, JSONSchema>,
  extra: JSONSchema = {},
): JSONSchema {
  return { type: 'object', description, properties, ...extra };
}

// Merge semantics. Every list says how server-side apply and strategic merge
// patch combine it (`x-kubernetes-list-type`), and a struct or map that must change
// as one says so (`x-kubernetes-map-type: atomic`); structs and maps are granular
// otherwise. Sets and single-key list-maps also carry the strategic-merge-patch
// extensions (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`),
// because kubectl's client-side apply and patch read those, not the list type.

/**
 * A list replaced as a whole by merges and applies: Kubernetes' `atomic` list type,
 * for lists whose items have no identity of their own, or whose items only mean
 * something together (one manager owns the whole list).
 */
export function atomicList(description: string, items: JSONSchema): JSONSchema {
  return { type: 'array', description, items, 'x-kubernetes-list-type': 'atomic' };
}

export function stringList(description: string): JSONSchema {
  return atomicList(description, { type: 'string' });
}

/**
 * A set of unique strings: each member is owned by whoever added it, and merges
 * add to the set instead of replacing it (Kubernetes' `set` list type).
 */
export function stringSet(description: string): JSONSchema {
  return {
    type: 'array',
    description,
    items: { type: 'string' },
    'x-kubernetes-list-type': 'set',
    'x-kubernetes-patch-strategy': 'merge',
  };
}

/**
 * A list of objects identified by their `keys` (which every item must set):
 * items merge by key and each item's fields are owned separately.
 */
export function listMap(description: string, items: JSONSchema, keys: readonly string[]): JSONSchema {
  const list: JSONSchema = {
    type: 'array',
    description,
    items,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [...keys],
  };
  // Strategic merge patch knows a single merge key only.
  if (keys.length === 1) {
    list['x-kubernetes-patch-strategy'] = 'merge';
    list['x-kubernetes-patch-merge-key'] = keys[0];
  }
  return list;
}

/** A struct that is set and replaced as one value (`x-kubernetes-map-type: atomic`). */
export function atomicObj(description: string, properties: Record<string, JSONSchema>): JSONSchema {
  return obj(description, properties, { 'x-kubernetes-map-type': 'atomic' });
}

export function stringMap(description: string): JSONSchema {
  return { type: 'object', description, additionalProperties: { type: 'string' } };
}
