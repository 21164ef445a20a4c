// The management kinds for the generic Store: one KindDefinition per kind (its
// folder's kind.ts), listed once in kinds.ts.

import { ownedAccessKeyStrategy } from './owned-access-key/strategy.js';
import { sharedSecretStrategy } from './shared-secret/strategy.js';
import { teamStrategy } from './team/strategy.js';
import { userStrategy } from './user/strategy.js';
import {
  virtualClusterInstanceStrategy,
  type VirtualClusterInstanceOptions,
} from './virtualclusterinstance/strategy.js';

export { hashAccessKey } from '../../apis/management/v1/owned-access-key.js';
export {
  ownedAccessKeyStrategy,
  sharedSecretStrategy,
  teamStrategy,
  userStrategy,
  virtualClusterInstanceStrategy,
};
export type { VirtualClusterInstanceOptions };
export { SelfStorage, selfStatus } from './self/storage.js';
export { ownerAccessKeysSubresource, ACCESS_KEYS_SUBRESOURCE } from './access-keys/subresource.js';
export type { KindDefinition, KindOptions, KindStorageContext, KindTraits } from './kind.js';
export {
  MANAGEMENT_KINDS,
  managementKinds,
  managementStrategies,
  resourcesWhere,
  sensitiveFieldsByResource,
} from './kinds.js';
export { installKinds, type InstallOptions } from './install.js';
