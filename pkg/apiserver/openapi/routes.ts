// The operations of a group version as a neutral list of routes, from which both
// OpenAPI documents are rendered. It follows what apiserver's installer and the
// CRD OpenAPI builder publish: collection and item operations on each resource
// (plus the all-namespaces list for namespaced kinds), watch through `?watch` on
// the lists, and subresource operations, each tagged with its action and the
// group-version-kind kubectl looks for.

import type { RESTStorage, SubresourceInfo, Verb } from '../../registry/rest/interfaces.js';
import { META_MODELS, modelName, toOperationIdPart, type GroupVersionKind } from './model-names.js';
import {
  DELETE_PARAMETERS,
  DELETECOLLECTION_PARAMETERS,
  LIST_PARAMETERS,
  PATCH_PARAMETERS,
  READ_PARAMETERS,
  WRITE_PARAMETERS,
  type QueryParameter,
} from './parameters.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Action = 'list' | 'post' | 'deletecollection' | 'get' | 'put' | 'patch' | 'delete';

/**
 * Media types a PATCH accepts, as published for custom resources: JSON patch, merge
 * patch and server-side apply. Not strategic merge (kubectl then sends JSON merge
 * patches for client-side apply, as it does to custom resources).
 */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
] as const;
/** Media types of request bodies other than patches. */
export const BODY_CONTENT_TYPES = ['application/json', 'application/yaml'] as const;
/** Media types of responses. */
export const RESPONSE_CONTENT_TYPES = ['application/json', 'application/yaml'] as const;
/** Lists also stream watch events. */
export const LIST_RESPONSE_CONTENT_TYPES = [
  ...RESPONSE_CONTENT_TYPES,
  'application/json;stream=watch',
] as const;

export interface RouteResponse {
  readonly code: string;
  readonly description: string;
  readonly model: string;
}

export interface Route {
  readonly path: string;
  readonly pathParameters: readonly ('namespace' | 'name')[];
  readonly method: HttpMethod;
  readonly action: Action;
  readonly operationId: string;
  readonly tag: string;
  readonly description: string;
  readonly gvk: GroupVersionKind;
  readonly query: readonly QueryParameter[];
  readonly body?: {
    readonly model: string;
    readonly contentTypes: readonly string[];
    readonly required: boolean;
  };
  readonly responses: readonly RouteResponse[];
  readonly produces: readonly string[];
}

/** A kind the document defines a schema for: each resource's kind and list kind, and subresource kinds. */
export interface KindModel {
  readonly gvk: GroupVersionKind;
  readonly model: string;
  readonly schema?: Record<string, unknown>;
  /** For list kinds: the model of the items. */
  readonly itemModel?: string;
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? 'an' : 'a';
}

function title(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

interface Naming {
  readonly group: string;
  readonly version: string;
  /** `ManagementPlatformDevV1`: what apiserver puts between the verb and the rest of an operation id. */
  readonly idPrefix: string;
  readonly tag: string;
}

function naming(group: string, version: string): Naming {
  // Kubernetes' own groups go by their name without `.k8s.io`, as upstream's
  // operation ids and tags have them (createAuthorizationV1SelfSubjectAccessReview, authorization_v1).
  const friendly = group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group;
  return {
    group,
    version,
    idPrefix: toOperationIdPart(friendly, true) + toOperationIdPart(version, true),
    tag: `${toOperationIdPart(friendly, false)}_${toOperationIdPart(version, false)}`,
  };
}

function operationId(n: Naming, verb: string, rest: string): string {
  return verb + n.idPrefix + toOperationIdPart(rest, true);
}

function ok(model: string, ...more: [string, string][]): RouteResponse[] {
  return [
    { code: '200', description: 'OK', model },
    ...more.map(([code, description]) => ({ code, description, model })),
  ];
}

/** Every route of `storage`, in a stable order. */
function resourceRoutes(n: Naming, storage: RESTStorage): { routes: Route[]; kinds: KindModel[] } {
  const info = storage.info;
  const gvk: GroupVersionKind = { group: n.group, version: n.version, kind: info.kind };
  const listGvk: GroupVersionKind = { group: n.group, version: n.version, kind: info.listKind };
  const model = modelName(gvk);
  const listModel = modelName(listGvk);
  const verbs = new Set<Verb>(info.verbs);
  const scope = info.namespaced ? 'Namespaced' : '';
  const base = `/apis/${n.group}/${n.version}`;
  const collection = info.namespaced
    ? `${base}/namespaces/{namespace}/${info.resource}`
    : `${base}/${info.resource}`;
  const collectionParams: ('namespace' | 'name')[] = info.namespaced ? ['namespace'] : [];
  const item = `${collection}/{name}`;
  const itemParams: ('namespace' | 'name')[] = [...collectionParams, 'name'];
  const common = { tag: n.tag, gvk };
  const routes: Route[] = [];

  if (verbs.has('list') || verbs.has('watch')) {
    if (info.namespaced) {
      routes.push({
        ...common,
        path: `${base}/${info.resource}`,
        pathParameters: [],
        method: 'get',
        action: 'list',
        operationId: operationId(n, 'list', `${info.kind}ForAllNamespaces`),
        description: `list or watch objects of kind ${info.kind} in every namespace`,
        query: LIST_PARAMETERS,
        responses: ok(listModel),
        produces: LIST_RESPONSE_CONTENT_TYPES,
      });
    }
    routes.push({
      ...common,
      path: collection,
      pathParameters: collectionParams,
      method: 'get',
      action: 'list',
      operationId: operationId(n, 'list', `${scope}${info.kind}`),
      description: `list or watch objects of kind ${info.kind}`,
      query: LIST_PARAMETERS,
      responses: ok(listModel),
      produces: LIST_RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('create')) {
    routes.push({
      ...common,
      path: collection,
      pathParameters: collectionParams,
      method: 'post',
      action: 'post',
      operationId: operationId(n, 'create', `${scope}${info.kind}`),
      description: `create ${article(info.kind)} ${info.kind}`,
      query: WRITE_PARAMETERS,
      body: { model, contentTypes: BODY_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created'], ['202', 'Accepted']),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('deletecollection')) {
    routes.push({
      ...common,
      path: collection,
      pathParameters: collectionParams,
      method: 'delete',
      action: 'deletecollection',
      operationId: operationId(n, 'delete', `Collection${scope}${info.kind}`),
      description: `delete collection of ${info.kind}`,
      query: DELETECOLLECTION_PARAMETERS,
      body: { model: META_MODELS.deleteOptions, contentTypes: BODY_CONTENT_TYPES, required: false },
      responses: ok(META_MODELS.status),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('get')) {
    routes.push({
      ...common,
      path: item,
      pathParameters: itemParams,
      method: 'get',
      action: 'get',
      operationId: operationId(n, 'read', `${scope}${info.kind}`),
      description: `read the specified ${info.kind}`,
      query: READ_PARAMETERS,
      responses: ok(model),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('update')) {
    routes.push({
      ...common,
      path: item,
      pathParameters: itemParams,
      method: 'put',
      action: 'put',
      operationId: operationId(n, 'replace', `${scope}${info.kind}`),
      description: `replace the specified ${info.kind}`,
      query: WRITE_PARAMETERS,
      body: { model, contentTypes: BODY_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created']),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('patch')) {
    routes.push({
      ...common,
      path: item,
      pathParameters: itemParams,
      method: 'patch',
      action: 'patch',
      operationId: operationId(n, 'patch', `${scope}${info.kind}`),
      description: `partially update the specified ${info.kind}`,
      query: PATCH_PARAMETERS,
      body: { model: META_MODELS.patch, contentTypes: PATCH_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created']),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }
  if (verbs.has('delete')) {
    routes.push({
      ...common,
      path: item,
      pathParameters: itemParams,
      method: 'delete',
      action: 'delete',
      operationId: operationId(n, 'delete', `${scope}${info.kind}`),
      description: `delete ${article(info.kind)} ${info.kind}`,
      query: DELETE_PARAMETERS,
      body: { model: META_MODELS.deleteOptions, contentTypes: BODY_CONTENT_TYPES, required: false },
      // While finalizers hold it, the response is the object; once gone, a Status.
      responses: ok(META_MODELS.status, ['202', 'Accepted']),
      produces: RESPONSE_CONTENT_TYPES,
    });
  }

  // A list kind only where there is a list to read: a create-only resource (a review,
  // a token request) has none, as upstream's installer defines none for it.
  const kinds: KindModel[] = [{ gvk, model, schema: storage.schema }];
  if (verbs.has('list') || verbs.has('watch')) kinds.push({ gvk: listGvk, model: listModel, itemModel: model });
  for (const sub of subresourcesOf(storage)) {
    const subGvk: GroupVersionKind = {
      group: sub.info.group || n.group,
      version: n.version,
      kind: sub.info.kind,
    };
    const subModel = modelName(subGvk);
    kinds.push({ gvk: subGvk, model: subModel, schema: sub.schema });
    routes.push(...subresourceRoutes(n, info.kind, scope, item, itemParams, sub.info, subGvk, subModel));
  }
  return { routes, kinds };
}

function subresourcesOf(storage: RESTStorage): { info: SubresourceInfo; schema?: Record<string, unknown> }[] {
  const byName = new Map<string, { info: SubresourceInfo; schema?: Record<string, unknown> }>();
  for (const info of storage.info.subresources) byName.set(info.name, { info });
  for (const sub of storage.subresources?.values() ?? [])
    byName.set(sub.info.name, { info: sub.info, schema: sub.schema });
  return [...byName.values()].sort((a, b) => a.info.name.localeCompare(b.info.name));
}

function subresourceRoutes(
  n: Naming,
  parentKind: string,
  scope: string,
  item: string,
  itemParams: readonly ('namespace' | 'name')[],
  sub: SubresourceInfo,
  gvk: GroupVersionKind,
  model: string,
): Route[] {
  const path = `${item}/${sub.name}`;
  const rest = `${scope}${parentKind}${title(sub.name)}`;
  const common = { path, pathParameters: itemParams, tag: n.tag, gvk, produces: RESPONSE_CONTENT_TYPES };
  const verbs = new Set<Verb>(sub.verbs);
  const routes: Route[] = [];
  if (verbs.has('get') || verbs.has('list')) {
    routes.push({
      ...common,
      method: 'get',
      action: 'get',
      operationId: operationId(n, 'read', rest),
      description: `read ${sub.name} of the specified ${parentKind}`,
      query: READ_PARAMETERS,
      responses: ok(model),
    });
  }
  if (verbs.has('create')) {
    routes.push({
      ...common,
      method: 'post',
      action: 'post',
      operationId: operationId(n, 'create', rest),
      description: `create ${sub.name} of ${article(parentKind)} ${parentKind}`,
      query: WRITE_PARAMETERS,
      body: { model, contentTypes: BODY_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created'], ['202', 'Accepted']),
    });
  }
  if (verbs.has('update')) {
    routes.push({
      ...common,
      method: 'put',
      action: 'put',
      operationId: operationId(n, 'replace', rest),
      description: `replace ${sub.name} of the specified ${parentKind}`,
      query: WRITE_PARAMETERS,
      body: { model, contentTypes: BODY_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created']),
    });
  }
  if (verbs.has('patch')) {
    routes.push({
      ...common,
      method: 'patch',
      action: 'patch',
      operationId: operationId(n, 'patch', rest),
      description: `partially update ${sub.name} of the specified ${parentKind}`,
      query: PATCH_PARAMETERS,
      body: { model: META_MODELS.patch, contentTypes: PATCH_CONTENT_TYPES, required: true },
      responses: ok(model, ['201', 'Created']),
    });
  }
  return routes;
}

export interface GroupVersionRoutes {
  readonly routes: Route[];
  /** Kind models, first definition of each model wins. */
  readonly kinds: KindModel[];
}

export function groupVersionRoutes(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): GroupVersionRoutes {
  const n = naming(group, version);
  const routes: Route[] = [];
  const kinds = new Map<string, KindModel>();
  const sorted = [...resources].sort((a, b) => a.info.resource.localeCompare(b.info.resource));
  for (const storage of sorted) {
    const r = resourceRoutes(n, storage);
    routes.push(...r.routes);
    for (const k of r.kinds) {
      const existing = kinds.get(k.model);
      // A subresource may return a kind the group already defines (a list of keys):
      // keep the richer definition.
      if (!existing || (existing.schema === undefined && existing.itemModel === undefined))
        kinds.set(k.model, k);
    }
  }
  return { routes, kinds: [...kinds.values()] };
}
