// Lists and watches return what the caller may see; they are not refused. A caller
// who may list the whole collection (an administrator, or a host identity the host
// allows) gets it as storage has it. Anyone else may list and watch every kind,
// and gets the objects they may `get`: their own User, their teams, their keys,
// objects whose access rules or owner name them, within their key's scope.
//
// CollectionAuthorizer lets such lists through the request's authorization;
// withListFiltering wraps a resource's storage so list and watch drop, object by
// object, what the strict authorizer (the chain without CollectionAuthorizer)
// would not let the caller get. A filtered list has no remainingItemCount (it
// would count hidden objects) and may hold fewer items than its limit; a filtered
// watch turns an object that stops being visible into DELETED, and never sends
// anything about objects the caller cannot see.

import type { KubeList, KubeObject, ListMeta } from '../apis/meta/types.js';
import { noteListSubset } from '../registry/generic/encoded.js';
import { delegateTo } from '../registry/rest/delegate.js';
import type { ListOptions, RequestContext, RESTStorage } from '../registry/rest/interfaces.js';
import type { StorageWatchEvent, Watcher } from '../storage/interfaces.js';
import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

const COLLECTION_VERBS = new Set(['list', 'watch']);

/** Lets every caller list and watch the named resources: the storage filters. */
export class CollectionAuthorizer implements Authorizer {
  constructor(
    private readonly group: string,
    private readonly resources: ReadonlySet<string>,
  ) {}

  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    const allowed =
      attrs.isResourceRequest &&
      attrs.apiGroup === this.group &&
      COLLECTION_VERBS.has(attrs.verb) &&
      attrs.subresource === '' &&
      this.resources.has(attrs.resource);
    return Promise.resolve({ decision: allowed ? 'allow' : 'no-opinion' });
  }
}

function objectKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

function tombstone(obj: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  const metadata: KubeObject['metadata'] = {};
  if (name !== undefined) metadata.name = name;
  if (namespace !== undefined) metadata.namespace = namespace;
  if (uid !== undefined) metadata.uid = uid;
  if (resourceVersion !== undefined) metadata.resourceVersion = resourceVersion;
  const out: KubeObject = { metadata };
  if (obj.apiVersion !== undefined) out.apiVersion = obj.apiVersion;
  if (obj.kind !== undefined) out.kind = obj.kind;
  return out;
}

/**
 * `storage` with list and watch filtered by what `authorizer` lets the caller get.
 * `items` (default: `authorizer`) decides object by object; it should be the same
 * rules without the host cluster's SubjectAccessReview, so a list costs the host at
 * most two reviews (list, and get of every name), never one per object: a host
 * identity sees everything when the host lets it list or get the whole collection,
 * and otherwise what the platform's own rules show it. Kubernetes authorizes a list
 * as a whole too: a host RBAC grant on one resourceName never shows that object in
 * a list.
 */
export function withListFiltering(
  storage: RESTStorage,
  authorizer: Authorizer,
  items: Authorizer = authorizer,
): RESTStorage {
  const { info } = storage;
  const attributes = (ctx: RequestContext, verb: string, namespace: string, name: string): Attributes => ({
    // The HTTP layer hands the registry the AuthenticatedUser it authenticated.
    user: ctx.user,
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: '',
    namespace,
    name,
  });
  const allowed = async (attrs: Attributes, by: Authorizer = authorizer): Promise<boolean> =>
    (await by.authorize(attrs)).decision === 'allow';
  /** May the caller see the whole collection: list (or watch) it, or get every name in it? */
  const maySeeAll = async (ctx: RequestContext, verb: string): Promise<boolean> =>
    (await allowed(attributes(ctx, verb, ctx.namespace, ''))) ||
    allowed(attributes(ctx, 'get', ctx.namespace, ''));
  const mayGet = (ctx: RequestContext, obj: KubeObject): Promise<boolean> =>
    allowed(attributes(ctx, 'get', obj.metadata.namespace ?? '', obj.metadata.name ?? ''), items);
  const visibleItems = async (ctx: RequestContext, items: readonly KubeObject[]): Promise<KubeObject[]> => {
    const kept: KubeObject[] = [];
    for (const item of items) if (await mayGet(ctx, item)) kept.push(item);
    return kept;
  };

  // Every other member as the wrapped resource has it (delegateTo forwards them all).
  const out = delegateTo(storage);

  const list = storage.list?.bind(storage);
  if (list) {
    out.list = async (ctx: RequestContext, options: ListOptions): Promise<KubeList> => {
      if (await maySeeAll(ctx, 'list')) return list(ctx, options);
      const result = await list(ctx, options);
      const { remainingItemCount: _hidden, ...metadata } = result.metadata;
      // The items kept are the Store's: their JSON stays the memo's, written in chunks.
      const items = noteListSubset(await visibleItems(ctx, result.items), result.items);
      return { ...result, metadata: metadata as ListMeta, items };
    };
  }

  const watch = storage.watch?.bind(storage);
  if (watch) {
    out.watch = async (ctx: RequestContext, options: ListOptions): Promise<Watcher> => {
      if (await maySeeAll(ctx, 'watch')) return watch(ctx, options);
      // What the client may already hold (from the list it started from) and may
      // have to be told is gone: the objects it may see now.
      const visible = new Set<string>();
      const startsFromList =
        options.resourceVersion !== undefined &&
        options.resourceVersion !== '' &&
        options.resourceVersion !== '0';
      if (startsFromList && list && options.sendInitialEvents !== true) {
        const current = await list(ctx, {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
        });
        for (const item of await visibleItems(ctx, current.items)) visible.add(objectKey(item));
      }
      const inner = await watch(ctx, options);
      return {
        stop: () => inner.stop(),
        async *[Symbol.asyncIterator]() {
          try {
            for await (const event of inner) {
              const shown = await filterEvent(event);
              if (shown) yield shown;
            }
          } finally {
            inner.stop();
          }
        },
      };

      async function filterEvent(event: StorageWatchEvent): Promise<StorageWatchEvent | undefined> {
        if (event.type === 'BOOKMARK' || event.type === 'ERROR') return event;
        const key = objectKey(event.object);
        const wasVisible = visible.has(key);
        if (event.type === 'DELETED') {
          visible.delete(key);
          return wasVisible || (await mayGet(ctx, event.object)) ? event : undefined;
        }
        if (await mayGet(ctx, event.object)) {
          visible.add(key);
          return event;
        }
        if (!wasVisible) return undefined;
        visible.delete(key);
        // Only what names the object: its new content is no longer the caller's to see.
        return { type: 'DELETED', object: tombstone(event.object) };
      }
    };
  }
  return out;
}
