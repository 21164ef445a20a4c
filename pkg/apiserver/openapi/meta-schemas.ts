// Schemas of the meta/v1 types the operations refer to (ObjectMeta, ListMeta,
// Status, DeleteOptions, WatchEvent, Patch), published under their upstream model
// names. ObjectMeta and ListMeta come from the one place the kinds take them from.

import { listMetaSchema, objectMetaSchema } from '../../apis/management/v1/object-meta-schema.js';
import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import { META_MODELS } from './model-names.js';

/** A reference to a model, as the document style wants it (v3 wraps it in allOf to allow a description). */
export type Ref = (model: string) => JSONSchema;

function gvks(kind: string, groups: readonly string[]): JSONSchema[] {
  return groups.map((group) => ({ group, kind, version: 'v1' }));
}

function typeMeta(): Record<string, JSONSchema> {
  return {
    apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
    kind: { type: 'string', description: 'Kind of the object, in CamelCase.' },
  };
}

/** Every meta/v1 component, keyed by model name; `ref` makes a reference in the document's style. */
export function metaSchemas(group: string, ref: Ref): Record<string, JSONSchema> {
  const status: JSONSchema = {
    type: 'object',
    description:
      'The outcome of a request that does not return an object, such as an error or a completed delete.',
    properties: {
      ...typeMeta(),
      code: { type: 'integer', format: 'int32', description: 'HTTP status code of the response.' },
      details: {
        type: 'object',
        description: 'More about what went wrong, depending on the reason.',
        properties: {
          causes: {
            type: 'array',
            description: 'The individual problems, such as one per invalid field.',
            items: {
              type: 'object',
              description: 'One problem and the field it concerns.',
              properties: {
                field: { type: 'string', description: 'Path of the field at fault, e.g. `spec.data[key]`.' },
                message: { type: 'string', description: 'What is wrong, for people.' },
                reason: {
                  type: 'string',
                  description: 'Machine-readable kind of problem, e.g. `FieldValueRequired`.',
                },
              },
            },
            'x-kubernetes-list-type': 'atomic',
          },
          group: { type: 'string', description: 'API group of the resource concerned.' },
          kind: { type: 'string', description: 'Kind or resource of the object concerned.' },
          name: { type: 'string', description: 'Name of the object concerned.' },
          retryAfterSeconds: {
            type: 'integer',
            format: 'int32',
            description: 'Seconds the client should wait before retrying.',
          },
          uid: { type: 'string', description: 'UID of the object concerned.' },
        },
      },
      message: { type: 'string', description: 'What happened, for people.' },
      metadata: { description: 'Standard list metadata.', ...ref(META_MODELS.listMeta) },
      reason: { type: 'string', description: 'Machine-readable reason, e.g. `NotFound` or `Invalid`.' },
      status: { type: 'string', description: '`Success` or `Failure`.' },
    },
    'x-kubernetes-group-version-kind': gvks('Status', ['']),
  };

  const deleteOptions: JSONSchema = {
    type: 'object',
    description: 'Options of a delete request.',
    properties: {
      ...typeMeta(),
      dryRun: {
        type: 'array',
        description: 'When `[All]`, the delete is checked but nothing is removed.',
        items: { type: 'string' },
        'x-kubernetes-list-type': 'atomic',
      },
      gracePeriodSeconds: {
        type: 'integer',
        format: 'int64',
        description: 'Seconds to wait before deleting; objects of this API are deleted at once.',
      },
      orphanDependents: { type: 'boolean', description: 'Deprecated: use propagationPolicy.' },
      preconditions: {
        type: 'object',
        description:
          'Conditions the object must meet to be deleted; the delete fails with 409 Conflict otherwise.',
        properties: {
          resourceVersion: { type: 'string', description: 'The object must have this resourceVersion.' },
          uid: { type: 'string', description: 'The object must have this UID.' },
        },
      },
      propagationPolicy: {
        type: 'string',
        description: 'How dependents are treated: `Orphan`, `Background` or `Foreground`.',
      },
    },
    'x-kubernetes-group-version-kind': gvks('DeleteOptions', ['', group]),
  };

  const watchEvent: JSONSchema = {
    type: 'object',
    description: 'One event of a watch stream.',
    required: ['type', 'object'],
    properties: {
      object: {
        type: 'object',
        description:
          'The object the event is about: the object itself for ADDED, MODIFIED and DELETED; its resourceVersion only for BOOKMARK; a Status for ERROR.',
      },
      type: { type: 'string', description: '`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.' },
    },
    'x-kubernetes-group-version-kind': gvks('WatchEvent', ['', group]),
  };

  return {
    [META_MODELS.objectMeta]: objectMetaSchema(),
    [META_MODELS.listMeta]: listMetaSchema(),
    [META_MODELS.status]: status,
    [META_MODELS.deleteOptions]: deleteOptions,
    [META_MODELS.watchEvent]: watchEvent,
    [META_MODELS.patch]: {
      type: 'object',
      description:
        'A patch document: a JSON patch (RFC 6902) array or a JSON merge patch (RFC 7386) object, as the Content-Type says.',
    },
  };
}
