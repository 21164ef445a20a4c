// Kind wiring: one generic registry Store per management kind, all over the same
// storage. This is the one place concrete kinds meet a storage instance.

import { compileSchema } from '../../apis/schema/compile.js';
import { Store } from '../../registry/generic/store.js';
import { managementStrategies } from '../../registry/management/index.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import type { Storage } from '../../storage/interfaces.js';

export function buildResources(group: string, storage: Storage, keyPrefix: string): RESTStorage[] {
  return managementStrategies(group).map(
    (strategy) => new Store({ strategy, storage, keyPrefix, compileSchema }),
  );
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
