// The strategies of the management kinds, for the generic Store: one Store per
// strategy. Order matches managementKinds().

import type { Strategy } from '../rest/interfaces.js';
import { ownedAccessKeyStrategy, type OwnedAccessKeyStrategyOptions } from './owned-access-key/strategy.js';
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

export interface ManagementStrategyOptions {
  readonly accessKeys?: OwnedAccessKeyStrategyOptions;
  /** The project namespace prefix; only validation and Table cells depend on it, never the names. */
  readonly virtualClusterInstances?: VirtualClusterInstanceOptions;
}

/** A strategy for every stored management kind of `group`/v1. */
export function managementStrategies(group: string, options: ManagementStrategyOptions = {}): Strategy[] {
  return [
    sharedSecretStrategy(group),
    teamStrategy(group),
    userStrategy(group),
    ownedAccessKeyStrategy(group, options.accessKeys),
    virtualClusterInstanceStrategy(group, options.virtualClusterInstances),
  ];
}
