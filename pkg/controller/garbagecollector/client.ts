// How the collector reads and changes objects: through the registry's Stores, so
// that every rule a client's request meets (preconditions, deletion finalizers,
// "last finalizer removed deletes the object", watch events) applies to the
// collector's writes too. Upstream's collector goes through the API the same way
// (its metadata client); in-process there is no HTTP hop and no authorization.

import { isApiError } from '../../apis/meta/errors.js';
import type { DeleteOptions, KubeObject } from '../../apis/meta/types.js';
import type { RequestContext, RESTStorage } from '../../registry/rest/interfaces.js';
import type { ObjectIdentity } from './graph.js';
import type { KindScope } from './graph-builder.js';

/** The collector's only way to the objects. Errors are the Stores' ApiErrors (NotFound, Conflict). */
export interface GarbageCollectorClient extends KindScope {
  /** The object, or null when it does not exist. Throws when the kind is not served. */
  get(id: ObjectIdentity): Promise<KubeObject | null>;
  /** A JSON merge patch (upstream's fallback form, which carries metadata.resourceVersion). */
  mergePatch(id: ObjectIdentity, patch: Record<string, unknown>): Promise<void>;
  delete(id: ObjectIdentity, options: DeleteOptions): Promise<void>;
}

/** The user agent the collector's writes are recorded under (managedFields' manager). */
const COLLECTOR_USER_AGENT = 'kube-controller-manager/garbage-collector';

export class StoreClient implements GarbageCollectorClient {
  private readonly byKind = new Map<string, RESTStorage>();

  constructor(stores: readonly RESTStorage[]) {
    for (const store of stores) {
      const { group, version, kind } = store.info;
      this.byKind.set(kindKey(group ? `${group}/${version}` : version, kind), store);
    }
  }

  namespaced(apiVersion: string, kind: string): boolean | undefined {
    return this.byKind.get(kindKey(apiVersion, kind))?.info.namespaced;
  }

  async get(id: ObjectIdentity): Promise<KubeObject | null> {
    const store = this.store(id);
    if (!store.get) throw new Error(`${store.info.resource} cannot be read`);
    try {
      return await store.get(this.context(id), id.name, {});
    } catch (err) {
      if (isApiError(err) && err.reason === 'NotFound') return null;
      throw err;
    }
  }

  async mergePatch(id: ObjectIdentity, patch: Record<string, unknown>): Promise<void> {
    const store = this.store(id);
    if (!store.patch) throw new Error(`${store.info.resource} cannot be patched`);
    await store.patch(this.context(id), id.name, 'merge', patch, {
      dryRun: false,
      fieldManager: '',
      fieldValidation: 'Ignore',
    });
  }

  async delete(id: ObjectIdentity, options: DeleteOptions): Promise<void> {
    const store = this.store(id);
    if (!store.delete) throw new Error(`${store.info.resource} cannot be deleted`);
    await store.delete(this.context(id), id.name, { ...options, dryRunAll: false });
  }

  private store(id: ObjectIdentity): RESTStorage {
    const store = this.byKind.get(kindKey(id.apiVersion, id.kind));
    if (!store) throw new Error(`kind ${id.kind} of ${id.apiVersion} is not served`);
    return store;
  }

  private context(id: ObjectIdentity): RequestContext {
    return {
      user: { name: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: [] },
      namespace: id.namespace,
      userAgent: COLLECTOR_USER_AGENT,
      warnings: [],
    };
  }
}

function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}\n${kind}`;
}
