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

/**
 * A list replaced as a whole by merges and applies: Kubernetes' `atomic` list type,
 * which is right for every list here that has no natural merge key.
 */
export function atomicList(description: string, items: JSONSchema): JSONSchema {
  return { type: 'array', description, items, 'x-kubernetes-list-type': 'atomic' };
}

export function stringList(description: string): JSONSchema {
  return atomicList(description, { type: 'string' });
}

export function stringMap(description: string): JSONSchema {
  return { type: 'object', description, additionalProperties: { type: 'string' } };
}
