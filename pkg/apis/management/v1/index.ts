// The management kinds of this API group, in one list: what the registry installs,
// what discovery announces and what OpenAPI publishes.

import type { ManagementKind } from './common.js';
import { ownedAccessKeyInfo, ownedAccessKeySchema } from './owned-access-key.js';
import { sharedSecretInfo, sharedSecretSchema } from './shared-secret.js';
import { teamInfo, teamSchema } from './team.js';
import { userInfo, userSchema } from './user.js';
import { virtualClusterInstanceInfo, virtualClusterInstanceSchema } from './virtual-cluster-instance.js';

export type { ManagementKind } from './common.js';
export { VERSION } from './common.js';

/** Every stored kind of `group`/v1 with its names and its schema (fresh objects on each call). */
export function managementKinds(group: string): ManagementKind[] {
  return [
    { info: sharedSecretInfo(group), schema: sharedSecretSchema() },
    { info: teamInfo(group), schema: teamSchema() },
    { info: userInfo(group), schema: userSchema() },
    { info: ownedAccessKeyInfo(group), schema: ownedAccessKeySchema() },
    { info: virtualClusterInstanceInfo(group), schema: virtualClusterInstanceSchema() },
  ];
}
