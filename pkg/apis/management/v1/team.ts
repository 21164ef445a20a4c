// Team (cluster scoped): a group of users that share cluster access, access keys
// and other objects. Users join either by name or through group names that may be
// synced from an authentication provider.

import type { ResourceInfo } from '../../meta/resource-info.js';
import {
  accessRulesSchema,
  clusterRolesSchema,
  imagePullSecretsSchema,
  kindSchema,
  ownerSchema,
  storedKindInfo,
  type AccessRule,
  type ClusterRoleRef,
  type KindSecretRef,
  type TypedObject,
  type UserOrTeam,
} from './common.js';
import { obj, str, stringSet, type JSONSchema } from './schema-builders.js';

export interface TeamSpec {
  displayName?: string;
  description?: string;
  owner?: UserOrTeam;
  username?: string;
  users?: string[];
  groups?: string[];
  imagePullSecrets?: KindSecretRef[];
  clusterRoles?: ClusterRoleRef[];
  access?: AccessRule[];
}

/** Upstream's team status carries nothing yet. */
export type TeamStatus = Record<string, never>;

export type Team = TypedObject<TeamSpec, TeamStatus>;

export function teamInfo(group: string): ResourceInfo {
  return storedKindInfo(group, { resource: 'teams', singular: 'team', kind: 'Team', namespaced: false });
}

export function teamSchema(): JSONSchema {
  return kindSchema(
    'Team groups users so that cluster access and other objects can be managed for many users at once. Teams can have their own access keys.',
    obj('Desired state of the team: its members and what they get.', {
      displayName: str('Name shown in the UI.'),
      description: str('What the team is for.'),
      owner: ownerSchema(),
      username: str('User name of the team, used to identify it and as its registry namespace.'),
      // Sets: members come from several places (an admin, a sync from an identity
      // provider, a pipeline), and each adds or removes its own members.
      users: stringSet('Names of the users that belong to the team.'),
      groups: stringSet(
        'Group names from authentication tokens; users whose token carries one of them belong to the team.',
      ),
      imagePullSecrets: imagePullSecretsSchema('members of the team'),
      clusterRoles: clusterRolesSchema('the users of the team'),
      access: accessRulesSchema('team'),
    }),
    obj(
      'Observed state of the team. Written through the status subresource; writes to the main resource keep it as stored.',
      {},
    ),
  );
}
