// The verb handlers: one path for every resource (a kind adds a strategy, never a
// handler). Each negotiates the answer's encoding first (406 before any work), reads
// its options (400/422), decodes the body (415/413/400), calls the RESTStorage
// method and writes the result, converted to a Table or PartialObjectMetadata when
// asked. The order follows k8s.io/apiserver endpoints/handlers.

import {
  ApiError,
  newBadRequest,
  newMethodNotAllowed,
  newMethodNotSupported,
  type GroupResource,
} from '../apis/meta/errors.js';
import type { DeleteOptions } from '../apis/meta/types.js';
import type {
  DeleteRequestOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  RESTStorage,
  SubresourceStorage,
  WriteOptions,
} from '../registry/rest/interfaces.js';
import { invalidPatch } from '../registry/generic/decode.js';
import { applyPatchYAMLError, decodeBody, decodeJSON, decodeYAML, objectYAMLError, readBody } from './body.js';
import { PROTOBUF_MEDIA_TYPE } from '../apis/meta/protobuf.js';
import {
  JSON_MEDIA_TYPE,
  baseMediaType,
  negotiateInput,
  negotiateOutput,
  negotiatePatchType,
  notAcceptable,
  wantsPretty,
  type NegotiatedOutput,
} from './negotiation.js';
import {
  deleteOptionsFromBody,
  deleteOptionsFromQuery,
  getOptionsFrom,
  listOptionsFrom,
  NO_QUERY,
  validateDeleteDryRun,
  writeOptionsFrom,
} from './query.js';
import { JSON_FORMAT } from './responses.js';
import type { RequestScope } from './scope.js';
import {
  checkConvertible,
  tableNotSupported,
  tableOptionsFrom,
  transformObject,
  type TableOptions,
} from './transform.js';
import type { WatchServer } from './watch.js';

export interface HandlerEnv {
  readonly maxRequestBodyBytes: number;
  readonly watches: WatchServer;
}

/** The generic 404 for API paths that name nothing we serve. */
export function newResourceNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

function groupResource(storage: RESTStorage, subresource = ''): GroupResource {
  const { group, resource } = storage.info;
  return { group, resource: subresource ? `${resource}/${subresource}` : resource };
}

/** What the client will get back, or a 406 (with the Table-specific message when that is all it asked for). */
export function negotiateResourceOutput(
  scope: RequestScope,
  storage: RESTStorage | undefined,
  stream = false,
): NegotiatedOutput {
  const accept = scope.req.headers.accept;
  const table = storage?.convertToTable !== undefined;
  const output = negotiateOutput(accept, { kind: 'resource', table }, stream);
  if (!output) {
    if (storage && !table && accept && /as=Table/.test(accept)) throw tableNotSupported(storage);
    throw notAcceptable(stream);
  }
  const pretty =
    !stream &&
    (output.pretty || wantsPretty(scope.hasQuery ? scope.query : undefined, scope.req.headers['user-agent']));
  // The common answer shares one format object (formats are read-only).
  scope.format =
    output.mediaType === JSON_MEDIA_TYPE && !pretty ? JSON_FORMAT : { mediaType: output.mediaType, pretty };
  return output;
}

/** negotiateResourceOutput for a verb that answers with one object (`list` false) or a list: a conversion to the other shape is a 406 before any work. */
function negotiateVerbOutput(scope: RequestScope, storage: RESTStorage, list: boolean): NegotiatedOutput {
  const output = negotiateResourceOutput(scope, storage);
  checkConvertible(output.convert, list ? storage.info.listKind : storage.info.kind, list);
  return output;
}

function tableOptionsFor(scope: RequestScope, output: NegotiatedOutput): TableOptions | undefined {
  if (output.convert?.kind !== 'Table') return undefined;
  return tableOptionsFrom(scope.hasQuery ? scope.query : undefined);
}

function query(scope: RequestScope): URLSearchParams {
  return scope.hasQuery ? scope.query : NO_QUERY;
}

/** Routes a resource request (group and version already known to be ours). */
export function serveResource(scope: RequestScope, storage: RESTStorage, env: HandlerEnv): Promise<void> {
  // Not async: the verb handler's promise is handed back as it is, rather than an async
  // function's promise resolved with it (a thenable job and two more microtask hops a
  // request). What routing throws is a rejection, as from an async function.
  try {
    return routeResource(scope, storage, env);
  } catch (err) {
    return Promise.reject(err);
  }
}

function routeResource(scope: RequestScope, storage: RESTStorage, env: HandlerEnv): Promise<void> {
  const info = scope.info;
  if (!info) throw new Error('resource request without request info');
  const parts = info.parts;
  if (parts.length > 3 || parts.includes('')) throw newResourceNotFound();
  const pathName = parts[1];
  const namespaced = storage.info.namespaced;
  // Cluster-scoped kinds have no namespaced paths; namespaced kinds have only the
  // all-namespaces list and watch outside a namespace.
  if (!namespaced && info.namespace !== '') throw newResourceNotFound();
  if (namespaced && info.namespace === '' && pathName !== undefined) throw newResourceNotFound();

  if (info.subresource) {
    if (info.watchViaPath) throw newResourceNotFound();
    return serveSubresource(scope, storage, info.subresource, pathName ?? '', env);
  }

  if (info.watchViaPath) {
    if (namespaced && info.namespace === '' && pathName !== undefined) throw newResourceNotFound();
    // installer.go registers the deprecated watch paths for GET only: any other method is a 405.
    if (scope.req.method !== 'GET') throw newMethodNotAllowed();
    // Returned, not awaited, here and below: a watch lives long, and every async frame
    // left waiting on it is heap held per open watch.
    return serveWatch(scope, storage, pathName, env);
  }

  const method = scope.req.method;
  if (pathName === undefined) {
    if (method === 'GET' || method === 'HEAD') {
      if (info.verb === 'watch') return serveWatch(scope, storage, undefined, env);
      return serveList(scope, storage);
    }
    if (namespaced && info.namespace === '') throw newMethodNotAllowed();
    if (method === 'POST') return serveCreate(scope, storage, env);
    if (method === 'DELETE') return serveDeleteCollection(scope, storage, env);
    throw newMethodNotAllowed();
  }
  switch (method) {
    case 'GET':
    case 'HEAD':
      return serveGet(scope, storage, pathName);
    case 'PUT':
      return serveUpdate(scope, storage, pathName, env);
    case 'PATCH':
      return servePatch(scope, storage, pathName, env);
    case 'DELETE':
      return serveDelete(scope, storage, pathName, env);
    default:
      throw newMethodNotAllowed();
  }
}

async function serveGet(scope: RequestScope, storage: RESTStorage, name: string): Promise<void> {
  if (!storage.get) throw newMethodNotSupported(groupResource(storage), 'get');
  const output = negotiateVerbOutput(scope, storage, false);
  const tableOptions = tableOptionsFor(scope, output);
  const options = getOptionsFrom(query(scope));
  const ctx = scope.context(scope.info?.namespace ?? '');
  const obj = await storage.get(ctx, name, options);
  scope.send(200, transformObject(storage, ctx, obj, output.convert, tableOptions));
}

async function serveList(scope: RequestScope, storage: RESTStorage): Promise<void> {
  if (!storage.list) throw newMethodNotSupported(groupResource(storage), 'list');
  const output = negotiateVerbOutput(scope, storage, true);
  const tableOptions = tableOptionsFor(scope, output);
  const options = listOptionsFrom(query(scope));
  const ctx = scope.context(scope.info?.namespace ?? '');
  const list = await storage.list(ctx, options);
  // Clients index `items`; an empty list is `[]`, never absent.
  if (!Array.isArray(list.items)) list.items = [];
  scope.send(200, transformObject(storage, ctx, list, output.convert, tableOptions));
}

async function serveWatch(
  scope: RequestScope,
  storage: RESTStorage,
  name: string | undefined,
  env: HandlerEnv,
): Promise<void> {
  if (!storage.watch) throw newMethodNotSupported(groupResource(storage), 'watch');
  const output = negotiateResourceOutput(scope, storage, true);
  const tableOptions = tableOptionsFor(scope, output);
  let options: ListOptions = listOptionsFrom(query(scope));
  if (name !== undefined) {
    // /watch/<resource>/<name> watches that one object: a name field selector.
    const byName = `metadata.name=${name}`;
    options = {
      ...options,
      fieldSelector: options.fieldSelector ? `${options.fieldSelector},${byName}` : byName,
    };
  }
  return env.watches.serve(scope, storage, options, output, tableOptions);
}

/** A body decoded per Content-Type, with YAML duplicate keys handled per fieldValidation. */
async function readObjectBody(
  scope: RequestScope,
  kind: { readonly kind: string; readonly version: string },
  options: WriteOptions,
  env: HandlerEnv,
  /** The kind's protobuf decoder, for the few kinds clients send only in protobuf. */
  decodeProtobuf?: (raw: Buffer) => unknown,
): Promise<unknown> {
  const contentType = scope.req.headers['content-type'];
  if (decodeProtobuf && baseMediaType(contentType) === PROTOBUF_MEDIA_TYPE) {
    const value = decodeProtobuf(await readBody(scope.req, env.maxRequestBodyBytes));
    scope.audit?.logRequestObject(value);
    return value;
  }
  const format = negotiateInput(contentType);
  const raw = await readBody(scope.req, env.maxRequestBodyBytes);
  const decoded = decodeBody(raw, format, true, objectYAMLError(kind.kind, raw));
  if (decoded.duplicates.length > 0) {
    if (options.fieldValidation === 'Strict') {
      throw newBadRequest(
        `${kind.kind} in version ${JSON.stringify(kind.version)} cannot be handled as a ${kind.kind}: strict decoding error: ${decoded.strictError}`,
      );
    }
    if (options.fieldValidation === 'Warn') scope.warnings.push(...decoded.duplicates);
  }
  scope.audit?.logRequestObject(decoded.value);
  return decoded.value;
}

async function serveCreate(scope: RequestScope, storage: RESTStorage, env: HandlerEnv): Promise<void> {
  if (!storage.create) throw newMethodNotSupported(groupResource(storage), 'create');
  const output = negotiateVerbOutput(scope, storage, false);
  const tableOptions = tableOptionsFor(scope, output);
  const options = writeOptionsFrom(query(scope), 'CreateOptions');
  const body = await readObjectBody(scope, storage.info, options, env, storage.decodeProtobuf?.bind(storage));
  const ctx = scope.context(scope.info?.namespace ?? '');
  const created = await storage.create(ctx, body, options);
  scope.send(201, transformObject(storage, ctx, created, output.convert, tableOptions));
}

async function serveUpdate(
  scope: RequestScope,
  storage: RESTStorage,
  name: string,
  env: HandlerEnv,
): Promise<void> {
  if (!storage.update) throw newMethodNotSupported(groupResource(storage), 'update');
  const output = negotiateVerbOutput(scope, storage, false);
  const tableOptions = tableOptionsFor(scope, output);
  const options = writeOptionsFrom(query(scope), 'UpdateOptions');
  const body = await readObjectBody(scope, storage.info, options, env);
  const ctx = scope.context(scope.info?.namespace ?? '');
  const { object, created } = await storage.update(ctx, name, body, options);
  scope.send(created ? 201 : 200, transformObject(storage, ctx, object, output.convert, tableOptions));
}

async function servePatch(
  scope: RequestScope,
  storage: RESTStorage,
  name: string,
  env: HandlerEnv,
): Promise<void> {
  if (!storage.patch) throw newMethodNotSupported(groupResource(storage), 'patch');
  const output = negotiateVerbOutput(scope, storage, false);
  const tableOptions = tableOptionsFor(scope, output);
  const { patchType, patch, options } = await readPatch(scope, env);
  const ctx = scope.context(scope.info?.namespace ?? '');
  const { object, created } = await storage.patch(ctx, name, patchType, patch, options);
  scope.send(created ? 201 : 200, transformObject(storage, ctx, object, output.convert, tableOptions));
}

/** A PATCH's options and body, decoded per its Content-Type (apply patches are YAML). */
async function readPatch(
  scope: RequestScope,
  env: HandlerEnv,
): Promise<{ patchType: PatchType; patch: unknown; options: PatchOptions }> {
  const q = query(scope);
  const write = writeOptionsFrom(q, 'PatchOptions');
  const force = q.get('force');
  const options =
    force === null ? write : { ...write, force: force !== '0' && force.toLowerCase() !== 'false' };
  const patchType = negotiatePatchType(scope.req.headers['content-type']);
  const raw = await readBody(scope.req, env.maxRequestBodyBytes);
  const decoded =
    patchType === 'apply' ? decodeYAML(raw.toString('utf8'), true, applyPatchYAMLError) : decodeJSON(raw);
  const patch = decoded.value;
  scope.audit?.logRequestPatch(patchType, patch);
  if (decoded.duplicates.length > 0) {
    // handlers/patch.go: apply refuses with 400 while decoding; the other types decode
    // the patch strictly and report with the patched object (422, field `patch`).
    if (options.fieldValidation === 'Strict') {
      if (patchType === 'apply') throw newBadRequest(`error strict decoding patch: ${decoded.strictError}`);
      const prefix = patchType === 'json' ? 'json patch ' : '';
      const errors = decoded.duplicates.map((d) => `${prefix}${d}`).join(', ');
      throw invalidPatch(`strict decoding error: ${errors}`);
    }
    if (options.fieldValidation === 'Warn') {
      scope.warnings.push(...decoded.duplicates.map((d) => (patchType === 'json' ? `json patch ${d}` : d)));
    }
  }
  return { patchType, patch: decoded.value, options };
}

/** DeleteOptions from the body when there is one (JSON or YAML), else from the query. */
async function readDeleteOptions(scope: RequestScope, env: HandlerEnv): Promise<DeleteRequestOptions> {
  let options: DeleteOptions;
  const length = scope.req.headers['content-length'];
  const mayHaveBody =
    scope.req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  const raw = mayHaveBody ? await readBody(scope.req, env.maxRequestBodyBytes) : Buffer.alloc(0);
  if (raw.length > 0 && raw.toString('utf8').trim() !== '') {
    const format = negotiateInput(scope.req.headers['content-type']);
    // Its numbers are read, never stored: they need not survive a round trip exactly.
    const body = decodeBody(raw, format, false).value;
    scope.audit?.logRequestObject(body);
    options = deleteOptionsFromBody(body);
  } else {
    options = deleteOptionsFromQuery(query(scope));
  }
  const dryRunAll = validateDeleteDryRun(options);
  return { ...options, dryRunAll };
}

async function serveDelete(
  scope: RequestScope,
  storage: RESTStorage,
  name: string,
  env: HandlerEnv,
): Promise<void> {
  if (!storage.delete) throw newMethodNotSupported(groupResource(storage), 'delete');
  const output = negotiateVerbOutput(scope, storage, false);
  const tableOptions = tableOptionsFor(scope, output);
  const options = await readDeleteOptions(scope, env);
  const ctx = scope.context(scope.info?.namespace ?? '');
  const result = await storage.delete(ctx, name, options);
  // 202 only in the one case upstream keeps for old clients: not gone yet, and the
  // client explicitly asked for cascading deletion with orphanDependents=false.
  const code = !result.deleted && options.orphanDependents === false ? 202 : 200;
  scope.send(code, transformObject(storage, ctx, result.object, output.convert, tableOptions));
}

async function serveDeleteCollection(
  scope: RequestScope,
  storage: RESTStorage,
  env: HandlerEnv,
): Promise<void> {
  if (!storage.deleteCollection) throw newMethodNotSupported(groupResource(storage), 'deletecollection');
  const output = negotiateVerbOutput(scope, storage, true);
  const tableOptions = tableOptionsFor(scope, output);
  const listOptions = listOptionsFrom(query(scope));
  const options = await readDeleteOptions(scope, env);
  const ctx = scope.context(scope.info?.namespace ?? '');
  const list = await storage.deleteCollection(ctx, options, listOptions);
  if (!Array.isArray(list.items)) list.items = [];
  scope.send(200, transformObject(storage, ctx, list, output.convert, tableOptions));
}

async function serveSubresource(
  scope: RequestScope,
  storage: RESTStorage,
  subresource: string,
  parentName: string,
  env: HandlerEnv,
): Promise<void> {
  const sub: SubresourceStorage | undefined = storage.subresources?.get(subresource);
  if (!sub) throw newResourceNotFound();
  const method = scope.req.method;
  const gr = groupResource(storage, subresource);
  // Objects of another kind than the parent have no Table; `status` is the parent's kind and has.
  const output = sub.parentKind
    ? negotiateResourceOutput(scope, storage)
    : negotiateOutput(scope.req.headers.accept, { kind: 'resource', table: false });
  if (!output) throw notAcceptable();
  checkConvertible(output.convert, sub.info.kind, false);
  if (!sub.parentKind) {
    scope.format = {
      mediaType: output.mediaType,
      pretty:
        output.pretty ||
        wantsPretty(scope.hasQuery ? scope.query : undefined, scope.req.headers['user-agent']),
    };
  }
  const tableOptions = tableOptionsFor(scope, output);
  const ctx = scope.context(scope.info?.namespace ?? '');
  if (method === 'GET' || method === 'HEAD') {
    if (!sub.get) throw newMethodNotSupported(gr, 'get');
    const obj = await sub.get(ctx, parentName, getOptionsFrom(query(scope)));
    scope.send(200, transformObject(storage, ctx, obj, output.convert, tableOptions));
    return;
  }
  if (method === 'PUT') {
    if (!sub.update) throw newMethodNotSupported(gr, 'update');
    const options = writeOptionsFrom(query(scope), 'UpdateOptions');
    const body = await readObjectBody(
      scope,
      { kind: sub.info.kind, version: storage.info.version },
      options,
      env,
    );
    const { object, created } = await sub.update(ctx, parentName, body, options);
    scope.send(created ? 201 : 200, transformObject(storage, ctx, object, output.convert, tableOptions));
    return;
  }
  if (method === 'PATCH') {
    if (!sub.patch) throw newMethodNotSupported(gr, 'patch');
    const { patchType, patch, options } = await readPatch(scope, env);
    const { object, created } = await sub.patch(ctx, parentName, patchType, patch, options);
    scope.send(created ? 201 : 200, transformObject(storage, ctx, object, output.convert, tableOptions));
    return;
  }
  if (method === 'POST') {
    if (!sub.create) throw newMethodNotSupported(gr, 'create');
    const options = writeOptionsFrom(query(scope), 'CreateOptions');
    const body = await readObjectBody(
      scope,
      { kind: sub.info.kind, version: storage.info.version },
      options,
      env,
    );
    const obj = await sub.create(ctx, parentName, body, options);
    scope.send(201, transformObject(storage, ctx, obj, output.convert, undefined));
    return;
  }
  const verb = scope.info?.verb ?? '';
  if (verb === '') throw newMethodNotAllowed();
  throw newMethodNotSupported(gr, verb);
}
