// One generic Store per kind of the list, over one storage: the kinds' strategies,
// then their subresources once every Store exists (a subresource may read another
// kind: users/<name>/accesskeys lists keys). What the server adds around them
// (admission, list filtering, resources that are not stored) is the assembly's.

import { compileSchema } from '../../apis/schema/compile.js';
import type { Storage } from '../../storage/interfaces.js';
import { Store } from '../generic/store.js';
import type { Admission, SubresourceStorage } from '../rest/interfaces.js';
import type { KindDefinition, KindOptions } from './kind.js';
import { MANAGEMENT_KINDS } from './kinds.js';

export interface InstallOptions {
  /** Each kind's strategy and storage options. */
  readonly kinds?: KindOptions;
  /** Checks every write against its caller (see Admission). */
  readonly admission?: Admission;
  /** Whether a garbage collector honours deletion finalizers (see StoreOptions.garbageCollection). */
  readonly garbageCollection?: boolean;
  /** Told of each Store as it is made. */
  readonly onStore?: (store: Store) => void;
}

/** The Stores of `kinds` (default: every management kind), in the list's order. */
export function installKinds(
  group: string,
  storage: Storage,
  keyPrefix: string,
  options: InstallOptions = {},
  kinds: readonly KindDefinition[] = MANAGEMENT_KINDS,
): Store[] {
  const kindOptions = options.kinds ?? {};
  const built = new Map<KindDefinition, { store: Store; subresources: Map<string, SubresourceStorage> }>();
  for (const kind of kinds) {
    const subresources = new Map<string, SubresourceStorage>();
    const store = new Store({
      strategy: kind.strategy(group, kindOptions),
      storage,
      keyPrefix,
      compileSchema,
      ...(options.admission ? { admission: options.admission } : {}),
      ...(options.garbageCollection !== undefined ? { garbageCollection: options.garbageCollection } : {}),
      subresources,
    });
    options.onStore?.(store);
    built.set(kind, { store, subresources });
  }
  const storeOf = (kind: KindDefinition): Store => {
    const found = built.get(kind);
    if (!found) throw new Error(`kind ${kind.info(group).resource} is not installed`);
    return found.store;
  };
  for (const [kind, { store, subresources }] of built) {
    for (const sub of kind.subresources?.({ store, options: kindOptions, storeOf }) ?? []) {
      subresources.set(sub.info.name, sub);
    }
  }
  return [...built.values()].map(({ store }) => store);
}
