// `kubectl get` tables: Name, the kind's own columns, then Age, with one row
// per object (k8s.io/apiserver registry/rest/table.go and kubectl's printers).

import { age } from '../../apis/meta/duration.js';
import type {
  KubeList,
  KubeObject,
  ListMeta,
  Table,
  TableColumnDefinition,
  TableRow,
} from '../../apis/meta/types.js';
import type { IncludeObject, TableColumn } from '../rest/interfaces.js';

export const META_API_VERSION = 'meta.k8s.io/v1';

const NAME_COLUMN: TableColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'The name of the object, unique among objects of its kind (within its namespace, for namespaced kinds).',
  priority: 0,
};

const AGE_COLUMN: TableColumnDefinition = {
  name: 'Age',
  type: 'date',
  format: '',
  description: 'How long ago the server created the object (from metadata.creationTimestamp).',
  priority: 0,
};

export function isList(value: KubeObject | KubeList): value is KubeList {
  return Array.isArray((value as { items?: unknown }).items);
}

function rowObject(obj: KubeObject, includeObject: IncludeObject): unknown {
  switch (includeObject) {
    case 'None':
      return undefined;
    case 'Object':
      return obj;
    case 'Metadata':
      return { kind: 'PartialObjectMetadata', apiVersion: META_API_VERSION, metadata: obj.metadata };
  }
}

function cell(column: TableColumn, obj: KubeObject): unknown {
  try {
    const v = column.cell(obj);
    return v === undefined ? null : v;
  } catch {
    // A column that cannot be computed for one odd object must not fail the whole listing.
    return '<error>';
  }
}

/** Builds the Table for an object or a list. `now` is injectable for tests. */
export function convertToTable(
  value: KubeObject | KubeList,
  columns: readonly TableColumn[],
  includeObject: IncludeObject,
  now: number = Date.now(),
): Table {
  const items = isList(value) ? value.items : [value];
  const rows: TableRow[] = items.map((obj) => {
    const row: TableRow = {
      cells: [
        obj.metadata.name ?? '',
        ...columns.map((c) => cell(c, obj)),
        age(obj.metadata.creationTimestamp, now),
      ],
    };
    const object = rowObject(obj, includeObject);
    if (object !== undefined) row.object = object;
    return row;
  });
  const metadata: ListMeta = {};
  if (isList(value)) {
    if (value.metadata.resourceVersion) metadata.resourceVersion = value.metadata.resourceVersion;
    if (value.metadata.continue) metadata.continue = value.metadata.continue;
    if (value.metadata.remainingItemCount !== undefined)
      metadata.remainingItemCount = value.metadata.remainingItemCount;
  } else if (value.metadata.resourceVersion) {
    metadata.resourceVersion = value.metadata.resourceVersion;
  }
  return {
    kind: 'Table',
    apiVersion: META_API_VERSION,
    metadata,
    columnDefinitions: [NAME_COLUMN, ...columns.map((c) => c.definition), AGE_COLUMN],
    rows,
  };
}
