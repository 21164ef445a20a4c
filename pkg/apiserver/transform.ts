// Conversions a client may ask for through Accept's `as=` (k8s.io/apiserver
// endpoints/handlers/response.go): a Table for `kubectl get`, PartialObjectMetadata
// (and its List) for the metadata client that garbage collection and namespace
// deletion use. Status objects are never converted.

import { ApiError, newBadRequest } from '../apis/meta/errors.js';
import { fieldErrorString, invalid } from '../apis/meta/field-errors.js';
import { isObject, type KubeList, type KubeObject, type ListMeta, type Table } from '../apis/meta/types.js';
import type { IncludeObject, RESTStorage, RequestContext } from '../registry/rest/interfaces.js';
import { META_GROUP, type ConversionTarget } from './negotiation.js';

export interface TableOptions {
  readonly includeObject: IncludeObject;
}

/** Reads `includeObject` the way ValidateTableOptions does; '' means Metadata. */
export function tableOptionsFrom(query: URLSearchParams | undefined): TableOptions {
  const raw = query?.get('includeObject') ?? '';
  switch (raw) {
    case '':
    case 'Metadata':
      return { includeObject: 'Metadata' };
    case 'Object':
    case 'None':
      return { includeObject: raw };
    default:
      throw newBadRequest(
        `Unable to convert to Table as requested: ${fieldErrorString(
          invalid('includeObject', raw, "must be 'Metadata', 'Object', 'None', or empty"),
        )}`,
      );
  }
}

function notAcceptableMessage(message: string): ApiError {
  return new ApiError(406, 'NotAcceptable', message);
}

export function isStatus(obj: unknown): boolean {
  return isObject(obj) && obj.kind === 'Status' && obj.apiVersion === 'v1';
}

export function isList(obj: unknown): obj is KubeList {
  return isObject(obj) && Array.isArray(obj.items);
}

function typeName(obj: unknown): string {
  return isObject(obj) && typeof obj.kind === 'string' && obj.kind !== '' ? obj.kind : 'unknown';
}

/** The table-unsupported 406, for when a client asked for nothing but a Table. */
export function tableNotSupported(storage: RESTStorage): ApiError {
  const { resource, group } = storage.info;
  return notAcceptableMessage(
    `the resource ${group ? `${resource}.${group}` : resource} does not support being converted to a Table`,
  );
}

function isListError(kind: string): ApiError {
  return notAcceptableMessage(
    `you requested PartialObjectMetadata, but the requested object is a list (${kind})`,
  );
}

function notListError(kind: string): ApiError {
  return notAcceptableMessage(
    `you requested PartialObjectMetadataList, but the requested object is not a list (${kind})`,
  );
}

/**
 * The 406 a conversion would end in, raised before the verb does its work: upstream
 * finds the list/object mismatch only when it encodes the answer, after a write has
 * happened; answering 406 first leaves the store unchanged by a request that fails.
 */
export function checkConvertible(target: ConversionTarget | undefined, kind: string, list: boolean): void {
  if (target?.kind === 'PartialObjectMetadata' && list) throw isListError(kind);
  if (target?.kind === 'PartialObjectMetadataList' && !list) throw notListError(kind);
}

export function asPartialObjectMetadata(obj: unknown, version: string): KubeObject {
  if (isList(obj)) throw isListError(typeName(obj));
  const metadata = isObject(obj) && isObject(obj.metadata) ? obj.metadata : {};
  return { kind: 'PartialObjectMetadata', apiVersion: `${META_GROUP}/${version}`, metadata };
}

export function asPartialObjectMetadataList(obj: unknown, version: string): KubeList {
  if (!isList(obj)) throw notListError(typeName(obj));
  const apiVersion = `${META_GROUP}/${version}`;
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion,
    metadata: listMeta(obj.metadata),
    items: obj.items.map((item) => ({
      kind: 'PartialObjectMetadata',
      apiVersion,
      metadata: isObject(item) && isObject(item.metadata) ? item.metadata : {},
    })),
  };
}

function listMeta(meta: ListMeta | undefined): ListMeta {
  const out: ListMeta = {};
  if (!meta) return out;
  if (meta.resourceVersion !== undefined) out.resourceVersion = meta.resourceVersion;
  if (meta.continue) out.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) out.remainingItemCount = meta.remainingItemCount;
  return out;
}

export function asTable(
  storage: RESTStorage,
  ctx: RequestContext,
  obj: KubeObject | KubeList,
  version: string,
  options: TableOptions,
  noHeaders = false,
): Table {
  if (!storage.convertToTable) throw tableNotSupported(storage);
  const table = storage.convertToTable(ctx, obj, options.includeObject);
  const apiVersion = `${META_GROUP}/${version}`;
  const rows = (table.rows ?? []).map((row) => {
    if (options.includeObject === 'None') return { cells: row.cells };
    // Embedded metadata speaks the Table's own group version (v1beta1 when asked for).
    if (isObject(row.object) && row.object.kind === 'PartialObjectMetadata') {
      return { ...row, object: { ...row.object, apiVersion } };
    }
    return row;
  });
  return {
    kind: 'Table',
    apiVersion,
    // Paging must survive the conversion (kubectl pages tables with `continue`).
    metadata: isList(obj) ? { ...listMeta(obj.metadata), ...table.metadata } : (table.metadata ?? {}),
    columnDefinitions: noHeaders ? [] : (table.columnDefinitions ?? []),
    rows,
  };
}

/**
 * Applies the negotiated conversion to a response object. Status objects pass as
 * they are; an unknown target cannot reach here (negotiation skipped it).
 */
export function transformObject(
  storage: RESTStorage,
  ctx: RequestContext,
  obj: unknown,
  target: ConversionTarget | undefined,
  tableOptions: TableOptions | undefined,
  noHeaders = false,
): unknown {
  if (!target || isStatus(obj)) return obj;
  switch (target.kind) {
    case 'PartialObjectMetadata':
      return asPartialObjectMetadata(obj, target.version);
    case 'PartialObjectMetadataList':
      return asPartialObjectMetadataList(obj, target.version);
    case 'Table':
      return asTable(
        storage,
        ctx,
        obj as KubeObject | KubeList,
        target.version,
        tableOptions ?? { includeObject: 'Metadata' },
        noHeaders,
      );
    default:
      return obj;
  }
}
