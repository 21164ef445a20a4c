// Kind wiring: one generic registry Store per management kind, all over the same
// storage. This is the one place concrete kinds meet a storage instance.

import { compileSchema } from '../apis/schema/compile.js';
import type { IdentityCache } from '../identity/identity-cache.js';
import { Store } from '../registry/generic/store.js';
import {
  ACCESS_KEYS_SUBRESOURCE,
  managementStrategies,
  ownerAccessKeysSubresource,
  SelfStorage,
} from '../registry/management/index.js';
import type { VirtualClusterInstanceOptions } from '../registry/management/index.js';
import type { Admission, RESTStorage, SubresourceStorage } from '../registry/rest/interfaces.js';
import type { Storage } from '../storage/interfaces.js';
import type { KeyOwnerLookup } from '../registry/management/owned-access-key/owner-reference.js';

/** What identity and authorization add to the kinds (all optional: tests build bare Stores). */
export interface ResourceWiring {
  /** Checks every write against its caller (access keys, escalation, blockOwnerDeletion). */
  readonly admission?: Admission;
  /** The current tokenGeneration of a User, recorded in the keys made for it. */
  readonly tokenGenerationOf?: (name: string) => Promise<number | undefined>;
  /** The User or Team a key names, for the ownerReference every stored key carries. */
  readonly keyOwner?: KeyOwnerLookup;
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
  /** Whether a garbage collector honours deletion finalizers (see StoreOptions.garbageCollection). */
  readonly garbageCollection?: boolean;
  /** Told of each kind's Store (the identity controllers write status through them). */
  readonly onStore?: (store: Store) => void;
}

export function buildResources(
  group: string,
  storage: Storage,
  keyPrefix: string,
  wiring: ResourceWiring = {},
): RESTStorage[] {
  const vciOptions = wiring.virtualClusterInstances?.options;
  const strategies = managementStrategies(group, {
    accessKeys: {
      ...(wiring.tokenGenerationOf ? { tokenGenerationOf: wiring.tokenGenerationOf } : {}),
      ...(wiring.keyOwner ? { keyOwner: wiring.keyOwner } : {}),
    },
    ...(vciOptions ? { virtualClusterInstances: vciOptions } : {}),
  });
  const admission = wiring.admission ? { admission: wiring.admission } : {};
  const store = (
    strategy: (typeof strategies)[number],
    subresources?: Map<string, SubresourceStorage>,
  ): Store => {
    const made = new Store({
      strategy,
      storage,
      keyPrefix,
      compileSchema,
      ...admission,
      ...(wiring.garbageCollection !== undefined ? { garbageCollection: wiring.garbageCollection } : {}),
      ...(subresources ? { subresources } : {}),
    });
    wiring.onStore?.(made);
    return made;
  };
  const keys = store(
    strategies.find((s) => s.info.resource === 'ownedaccesskeys') ?? fail('ownedaccesskeys'),
  );
  const stores: RESTStorage[] = strategies.map((strategy) => {
    const resource = strategy.info.resource;
    if (resource === 'ownedaccesskeys') return keys;
    if (resource === 'virtualclusterinstances') {
      // virtualclusterinstances/<name>/kubeconfig reads the instance through its Store.
      const subresources = new Map<string, SubresourceStorage>();
      const instances = store(strategy, subresources);
      const kubeConfig = wiring.virtualClusterInstances?.kubeConfig?.(instances);
      if (kubeConfig) subresources.set(kubeConfig.info.name, kubeConfig);
      return instances;
    }
    if (resource !== 'users' && resource !== 'teams') return store(strategy);
    // users/<name>/accesskeys and teams/<name>/accesskeys need the Store they hang on.
    const subresources = new Map<string, SubresourceStorage>();
    const owners = store(strategy, subresources);
    subresources.set(
      ACCESS_KEYS_SUBRESOURCE,
      ownerAccessKeysSubresource({ owner: resource === 'users' ? 'user' : 'team', owners, keys }),
    );
    return owners;
  });
  const filter = wiring.filter ?? ((s: RESTStorage) => s);
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

function fail(resource: string): never {
  throw new Error(`no strategy for ${resource}`);
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
