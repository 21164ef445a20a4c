// A kind's JSON schema for the field manager's tests: the object fields every kind
// has (apiVersion, kind, metadata, left open as the engine reads it) around the
// fields a test is about.

/** `{ type: object, properties: { apiVersion, kind, metadata, ...fields } }`. */
export function kindSchema(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      ...fields,
    },
  };
}
