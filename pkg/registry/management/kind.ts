// What one management kind says about itself. Each kind's folder has a `kind.ts`
// exporting one KindDefinition; `kinds.ts` lists them, and every other list the
// server needs (the Stores it builds, the kinds the identity cache watches for
// access rules, the resources the escalation admission checks, the resources the
// generated encryption configuration covers, what audit must redact) is derived
// from that list, so a new kind is its folder and one line there. This mirrors
// upstream's per-resource `pkg/registry/<group>/<resource>/storage` plus the
// group's `RESTStorageProvider`, which alone names the resources it installs.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import type { ResourceInfo } from '../../apis/meta/resource-info.js';
import type { Store } from '../generic/store.js';
import type { Strategy, SubresourceStorage } from '../rest/interfaces.js';
import type { OwnedAccessKeyStrategyOptions } from './owned-access-key/strategy.js';
import type { VirtualClusterInstanceOptions } from './virtualclusterinstance/strategy.js';

/** What a kind is to the parts of the server that do not serve it. */
export interface KindTraits {
  /**
   * The kind says who a caller is (Users, Teams, OwnedAccessKeys): the identity
   * cache keeps its objects whole, with indexes of their own. Other kinds are in
   * the cache only for their owner and access rules.
   */
  readonly identity: boolean;
  /**
   * Objects carry `spec.owner` and `spec.access`: the access-rule authorizer grants
   * by them, and the escalation admission checks every change of them.
   */
  readonly accessRules: boolean;
  /**
   * Paths in the object (`spec.data`) that hold secret material: their values must
   * never reach a log, an audit event or an error message.
   */
  readonly sensitiveFields: readonly string[];
  /**
   * Encrypted at rest by the EncryptionConfiguration an embedded (sqlite) server
   * generates on its first start when no --encryption-provider-config is given.
   */
  readonly encryptedByDefault: boolean;
}

/** The options of every kind's strategy and storage, each kind reading its own. */
export interface KindOptions {
  readonly accessKeys?: OwnedAccessKeyStrategyOptions;
  /** The project namespace prefix; only validation and Table cells depend on it, never the names. */
  readonly virtualClusterInstances?: VirtualClusterInstanceOptions & {
    /** Builds `virtualclusterinstances/<name>/kubeconfig` over the instances' Store (issue 5). */
    readonly kubeConfig?: (instances: Store) => SubresourceStorage;
  };
}

/** What a kind's subresources may use: its own Store, and the Stores of the other stored kinds. */
export interface KindStorageContext {
  readonly store: Store;
  readonly options: KindOptions;
  /** The Store of another kind of the list (named by its definition, not by a string). */
  storeOf(kind: KindDefinition): Store;
}

export interface KindDefinition {
  /** Names, scope, verbs and declared subresources of the kind in `group`. */
  info(group: string): ResourceInfo;
  /** The kind's JSON schema: validation, pruning, OpenAPI. */
  schema(): JSONSchema;
  /** The rules the generic Store applies to the kind's objects (status strategy included). */
  strategy(group: string, options: KindOptions): Strategy;
  readonly traits: KindTraits;
  /**
   * Subresources served from the kind's Store besides `status` (which the Store
   * adds from the strategy). Called once every stored kind's Store exists, so a
   * subresource may read another kind (users/<name>/accesskeys lists keys).
   */
  subresources?(context: KindStorageContext): SubresourceStorage[];
}
