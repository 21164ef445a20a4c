// Schemas of the group's kinds as OpenAPI publishes them: the kind's own schema
// with metadata pointing at the shared ObjectMeta model, lists built around their
// items, and every kind tagged with `x-kubernetes-group-version-kind` (an array, as
// kubectl explain and the aggregator expect).

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import { isObject } from '../../apis/meta/types.js';
import type { Ref } from './meta-schemas.js';
import { META_MODELS } from './model-names.js';
import { reviewSchemas } from './review-schemas.js';
import type { KindModel } from './routes.js';

export type DocumentStyle = 'v2' | 'v3';

function typeMetaProperties(): Record<string, JSONSchema> {
  return {
    apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
    kind: { type: 'string', description: 'Kind of the object, in CamelCase.' },
  };
}

function metadataRef(model: string, description: string, ref: Ref, style: DocumentStyle): JSONSchema {
  return style === 'v3' ? { ...ref(model), default: {}, description } : { ...ref(model), description };
}

/** Swagger 2.0 has no `nullable`; drop it everywhere below `schema`. */
export function stripNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripNullable);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable') continue;
    out[key] = stripNullable(value);
  }
  return out;
}

/** The component for one kind model. */
export function kindComponent(k: KindModel, ref: Ref, style: DocumentStyle): JSONSchema {
  const gvk = [{ group: k.gvk.group, kind: k.gvk.kind, version: k.gvk.version }];
  let schema: JSONSchema;
  if (k.itemModel !== undefined) {
    schema = {
      type: 'object',
      description: `${k.gvk.kind} is a list of objects of one kind.`,
      required: ['items'],
      properties: {
        ...typeMetaProperties(),
        items: { type: 'array', description: 'The objects of the list.', items: ref(k.itemModel) },
        metadata: metadataRef(META_MODELS.listMeta, 'Standard list metadata.', ref, style),
      },
    };
  } else if (k.schema !== undefined) {
    schema = structuredClone(k.schema);
    const props = isObject(schema['properties']) ? { ...schema['properties'] } : {};
    const ownMeta = props['metadata'];
    const description =
      isObject(ownMeta) && typeof ownMeta['description'] === 'string'
        ? ownMeta['description']
        : 'Standard object metadata.';
    props['metadata'] = metadataRef(META_MODELS.objectMeta, description, ref, style);
    schema['properties'] = props;
    if (schema['type'] === undefined) schema['type'] = 'object';
  } else {
    schema = {
      type: 'object',
      description: `${k.gvk.kind} of ${k.gvk.group}/${k.gvk.version}.`,
      properties: {
        ...typeMetaProperties(),
        metadata: metadataRef(META_MODELS.objectMeta, 'Standard object metadata.', ref, style),
      },
      'x-kubernetes-preserve-unknown-fields': true,
    };
  }
  schema['x-kubernetes-group-version-kind'] = gvk;
  return style === 'v2' ? (stripNullable(schema) as JSONSchema) : schema;
}

/**
 * The components of a group version's kinds, keyed by model name: Kubernetes' own
 * kinds served here (the reviews) with their upstream schemas and the types those
 * are made of, every other kind built from its resource's schema.
 */
export function kindSchemas(
  group: string,
  version: string,
  kinds: readonly KindModel[],
  ref: Ref,
  style: DocumentStyle,
): Record<string, JSONSchema> {
  const known = reviewSchemas(group, version, ref, style);
  const out: Record<string, JSONSchema> = {};
  for (const k of kinds) out[k.model] = known[k.model] ?? kindComponent(k, ref, style);
  if (kinds.length > 0) for (const [name, schema] of Object.entries(known)) out[name] ??= schema;
  return out;
}

/** Every `$ref` target below `value`, by model name. */
function refsIn(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) refsIn(v, into);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string') into.add(v.slice(v.lastIndexOf('/') + 1));
    else refsIn(v, into);
  }
}

/** `schemas` and those of `more` they refer to, directly or not (a document holds no unused model). */
export function withReferenced(
  schemas: Record<string, JSONSchema>,
  more: Record<string, JSONSchema>,
): Record<string, JSONSchema> {
  const out = { ...schemas };
  const pending = Object.values(out);
  while (pending.length > 0) {
    const names = new Set<string>();
    refsIn(pending.pop(), names);
    for (const name of names) {
      const schema = more[name];
      if (out[name] !== undefined || schema === undefined) continue;
      out[name] = schema;
      pending.push(schema);
    }
  }
  return out;
}
