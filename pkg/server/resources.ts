// Kind wiring: the Stores of every management kind (registry/management's
// installKinds, from its one list of kinds), all over the same storage, with what
// identity, authorization and the token services add to them.

import type { IdentityCache } from '../identity/identity-cache.js';
import type { Store } from '../registry/generic/store.js';
import { installKinds, SelfStorage } from '../registry/management/index.js';
import type {
  InstallOptions,
  KindOptions,
  VirtualClusterInstanceOptions,
} from '../registry/management/index.js';
import type { RESTStorage, SubresourceStorage } from '../registry/rest/interfaces.js';
import type { StorageDeadline } from '../storage/deadline.js';
import type { Storage } from '../storage/interfaces.js';
import type { KeyOwnerLookup } from '../registry/management/owned-access-key/owner-reference.js';

/** What identity and authorization add to the kinds (all optional: tests build bare Stores). */
export interface ResourceWiring extends Omit<InstallOptions, 'kinds'> {
  /** The current tokenGeneration of a User, recorded in the keys made for it. */
  readonly tokenGenerationOf?: (name: string, deadline?: StorageDeadline) => Promise<number | undefined>;
  /** The User or Team a key names, for the ownerReference every stored key carries. */
  readonly keyOwner?: KeyOwnerLookup;
  /** Keys record the generation of the User keyOwner reads (one read for both; see the strategy). */
  readonly generationFromKeyOwner?: boolean;
  /** Wraps each stored resource (lists and watches filtered to what the caller may see). */
  readonly filter?: (storage: RESTStorage) => RESTStorage;
  /** Serves `selves` from it. */
  readonly identity?: IdentityCache;
  /** VirtualClusterInstance's server options, and its kubeconfig subresource (issue 5). */
  readonly virtualClusterInstances?: {
    readonly options?: VirtualClusterInstanceOptions;
    readonly kubeConfig?: (instances: Store) => SubresourceStorage;
  };
  /** Resources that are not stored kinds (directclusterendpointtokens), served as they are. */
  readonly extraResources?: readonly RESTStorage[];
}

export function buildResources(
  group: string,
  storage: Storage,
  keyPrefix: string,
  wiring: ResourceWiring = {},
): RESTStorage[] {
  const vciOptions = wiring.virtualClusterInstances?.options;
  const kubeConfig = wiring.virtualClusterInstances?.kubeConfig;
  const kindOptions: KindOptions = {
    accessKeys: {
      ...(wiring.tokenGenerationOf ? { tokenGenerationOf: wiring.tokenGenerationOf } : {}),
      ...(wiring.keyOwner ? { keyOwner: wiring.keyOwner } : {}),
      ...(wiring.generationFromKeyOwner ? { generationFromKeyOwner: true } : {}),
    },
    ...(vciOptions || kubeConfig
      ? { virtualClusterInstances: { ...vciOptions, ...(kubeConfig ? { kubeConfig } : {}) } }
      : {}),
  };
  const filter = wiring.filter ?? ((s: RESTStorage) => s);
  // admission, garbageCollection and onStore (the identity controllers write status through it).
  const { admission, garbageCollection, onStore } = wiring;
  const stores = installKinds(group, storage, keyPrefix, {
    kinds: kindOptions,
    ...(admission ? { admission } : {}),
    ...(garbageCollection !== undefined ? { garbageCollection } : {}),
    ...(onStore ? { onStore } : {}),
  });
  const resources = stores.map(filter);
  if (wiring.identity) {
    // selves reports the project namespace prefix, so clients need not assume `p-`.
    const prefix = wiring.virtualClusterInstances?.options?.projectNamespacePrefix;
    resources.push(
      new SelfStorage(
        group,
        wiring.identity,
        undefined,
        prefix !== undefined ? { projectNamespacePrefix: prefix } : {},
      ),
    );
  }
  resources.push(...(wiring.extraResources ?? []));
  return resources;
}

/** The storage prefix of a cluster-scoped collection, as the generic Store lays keys out. */
export function collectionPrefix(keyPrefix: string, group: string, resource: string): string {
  return `${keyPrefix}/${group}/${resource}/`;
}

/** The Store serving `resource`; throws when the kind is not installed. */
export function resourceStore(resources: readonly RESTStorage[], resource: string): RESTStorage {
  const store = resources.find((r) => r.info.resource === resource);
  if (!store) throw new Error(`resource "${resource}" is not installed`);
  return store;
}
