// The schema of ObjectMeta and ListMeta, written once: every kind embeds it as its
// `metadata`, unknown-field detection reads its field list (so `metadata.foo` is
// reported), and the OpenAPI documents publish it under the upstream model names.
// Validation of metadata values is the generic Store's, not the schema's.

import {
  atomicList,
  bool,
  dateTime,
  int64,
  obj,
  str,
  stringMap,
  type JSONSchema,
} from './schema-builders.js';

const ownerReference: JSONSchema = obj(
  'A reference to an object this object depends on. The owner must live in the same namespace as the dependent, or be cluster scoped.',
  {
    apiVersion: str('API version of the owner, as `group/version`.'),
    kind: str('Kind of the owner, in CamelCase.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner; the reference only matches that exact incarnation of it.'),
    controller: bool(
      'True when the owner manages this object. At most one owner reference may be the controller.',
    ),
    blockOwnerDeletion: bool(
      'When true, and the owner is deleted in the foreground, the owner is kept until this object is gone. Setting it requires permission to delete the owner. Defaults to false.',
    ),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], 'x-kubernetes-map-type': 'atomic' },
);

const managedFieldsEntry: JSONSchema = obj(
  'Which manager owns which fields of the object, recorded by the server on every write.',
  {
    manager: str('Name of the client that made the change (its field manager).'),
    operation: str('The kind of write that recorded this entry: `Apply` or `Update`.'),
    apiVersion: str('API version (`group/version`) of the object as the manager wrote it.'),
    time: dateTime('When the fields of this entry last changed.'),
    fieldsType: str('Format of fieldsV1; the only format is `FieldsV1`.'),
    fieldsV1: {
      type: 'object',
      description: 'The set of fields this manager owns, as a nested map of `f:<field>` keys.',
      'x-kubernetes-preserve-unknown-fields': true,
    },
    subresource: str('Subresource the write went through; empty for writes to the main resource.'),
  },
);

/** ObjectMeta: the `metadata` of every stored object. A fresh copy per call. */
export function objectMetaSchema(): JSONSchema {
  return obj(
    'ObjectMeta is the metadata every stored object has: its name and namespace, labels and annotations, and fields the server maintains.',
    {
      name: str(
        'Name of the object, unique among objects of its kind in its namespace. Required on create unless generateName is set. Cannot be changed.',
      ),
      generateName: str(
        'Prefix for a name the server generates when name is empty. The server appends a random suffix; if that name is taken the create fails with 409 Conflict.',
      ),
      namespace: str(
        'Namespace of the object; empty for cluster-scoped kinds. An empty namespace on a namespaced kind means `default`. Cannot be changed.',
      ),
      selfLink: str('Deprecated and no longer set by the server.'),
      uid: str(
        'Unique identifier the server assigns on create. Read only; never changes for the life of the object.',
      ),
      resourceVersion: str(
        'Opaque version of the object, changed by every write. Send it back unmodified on update: a stale value makes the update fail with 409 Conflict.',
      ),
      generation: int64(
        'Sequence number of changes to the desired state (everything outside metadata). Read only.',
      ),
      creationTimestamp: {
        ...dateTime('When the server created the object (RFC 3339, UTC). Read only.'),
        nullable: true,
      },
      deletionTimestamp: {
        ...dateTime(
          'When the object was asked to be deleted. Set by the server; while finalizers remain, the object stays with this field set. Read only.',
        ),
        nullable: true,
      },
      deletionGracePeriodSeconds: {
        ...int64('Seconds allowed for graceful termination once deletion was requested. Read only.'),
        nullable: true,
      },
      labels: stringMap('Key/value pairs to organize and select objects (label selectors match on them).'),
      annotations: stringMap('Key/value pairs for arbitrary non-identifying data; not usable in selectors.'),
      ownerReferences: {
        type: 'array',
        description:
          'Objects this object depends on. When every owner is deleted, the garbage collector deletes this object too.',
        items: ownerReference,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['uid'],
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-patch-strategy': 'merge',
      },
      finalizers: {
        type: 'array',
        description:
          'Names of controllers that must finish work before the object is removed. Deletion waits until this list is empty; while the object is being deleted, entries can only be removed.',
        items: { type: 'string' },
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-patch-strategy': 'merge',
      },
      managedFields: atomicList(
        'Which client manages which fields (server-side apply bookkeeping). Maintained by the server.',
        managedFieldsEntry,
      ),
    },
  );
}

/** ListMeta: the `metadata` of every list. */
export function listMetaSchema(): JSONSchema {
  return obj('ListMeta is the metadata every list has: the version it was read at and how to continue it.', {
    resourceVersion: str(
      'Version of the store the list was read at; start a watch from it to see every later change.',
    ),
    continue: str(
      'Opaque token to fetch the next page of a limited list; empty on the last page. Tokens expire after a while.',
    ),
    remainingItemCount: int64(
      'Approximate number of items after this page; only set for limited lists without selectors.',
    ),
    selfLink: str('Deprecated and no longer set by the server.'),
  });
}
