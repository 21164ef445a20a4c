// Team: members are named users and group names from tokens; neither list may hold
// empty entries, and access rules and cluster roles must name something.

import type { FieldError } from '../../../apis/meta/field-errors.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import { teamInfo, teamSchema } from '../../../apis/management/v1/team.js';
import type { RequestContext, Strategy } from '../../rest/interfaces.js';
import {
  DISPLAY_NAME_COLUMN,
  dropStatus,
  keepStoredStatus,
  specListColumn,
  specOf,
  specPath,
  validateAccessRules,
  validateClusterRoles,
  validateNonEmptyEntries,
  validateOwner,
} from '../common.js';

function validateTeam(obj: KubeObject): FieldError[] {
  const spec = specOf(obj);
  const path = specPath();
  return [
    ...validateOwner(spec['owner'], path.child('owner')),
    ...validateNonEmptyEntries(spec['users'], path.child('users')),
    ...validateNonEmptyEntries(spec['groups'], path.child('groups')),
    ...validateClusterRoles(spec['clusterRoles'], path.child('clusterRoles')),
    ...validateAccessRules(spec['access'], path.child('access')),
  ];
}

export function teamStrategy(group: string): Strategy {
  return {
    info: teamInfo(group),
    schema: teamSchema(),
    // status has its own subresource: only writes through it change it.
    status: {},
    prepareForCreate(_ctx: RequestContext, obj: KubeObject): void {
      dropStatus(obj);
    },
    prepareForUpdate(_ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
      keepStoredStatus(obj, old);
    },
    validate: (_ctx, obj) => validateTeam(obj),
    validateUpdate: (_ctx, obj) => validateTeam(obj),
    tableColumns: [
      DISPLAY_NAME_COLUMN,
      specListColumn('Users', 'users', 'Users that belong to the team.'),
      specListColumn('Groups', 'groups', 'Token groups whose members belong to the team.'),
    ],
  };
}
