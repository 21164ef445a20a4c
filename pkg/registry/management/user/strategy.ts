// User: tokenGeneration only counts up from zero (lowering it would bring back keys
// it revoked), the email address must look like one, and lists of groups, roles
// and access rules must not hold empty entries. status.teams is the server's (the
// team membership controller writes it straight to storage).

import { invalid, type FieldError } from '../../../apis/meta/field-errors.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import { userInfo, userSchema } from '../../../apis/management/v1/user.js';
import type { RequestContext, Strategy } from '../../rest/interfaces.js';
import {
  DISPLAY_NAME_COLUMN,
  dropStatus,
  keepStoredStatus,
  specBooleanColumn,
  specOf,
  specPath,
  specStringColumn,
  validateAccessRules,
  validateClusterRoles,
  validateNonEmptyEntries,
  validateNonNegative,
  validateOwner,
} from '../common.js';

/** A basic shape check (one @, something on each side, no spaces); delivery proves the rest. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

function validateUser(obj: KubeObject): FieldError[] {
  const spec = specOf(obj);
  const path = specPath();
  const errs: FieldError[] = [];
  const email = spec['email'];
  if (typeof email === 'string' && email !== '' && !EMAIL.test(email)) {
    errs.push(invalid(path.child('email'), email, 'must be a valid email address'));
  }
  errs.push(...validateNonNegative(spec['tokenGeneration'], path.child('tokenGeneration')));
  errs.push(...validateOwner(spec['owner'], path.child('owner')));
  errs.push(...validateNonEmptyEntries(spec['groups'], path.child('groups')));
  errs.push(...validateNonEmptyEntries(spec['ssoGroups'], path.child('ssoGroups')));
  errs.push(...validateClusterRoles(spec['clusterRoles'], path.child('clusterRoles')));
  errs.push(...validateAccessRules(spec['access'], path.child('access')));
  return errs;
}

export function userStrategy(group: string): Strategy {
  return {
    info: userInfo(group),
    schema: userSchema(),
    // status has its own subresource: only writes through it change it.
    status: {},
    prepareForCreate(_ctx: RequestContext, obj: KubeObject): void {
      dropStatus(obj);
    },
    prepareForUpdate(_ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
      keepStoredStatus(obj, old);
    },
    validate: (_ctx, obj) => validateUser(obj),
    validateUpdate(_ctx, obj, old): FieldError[] {
      const errs = validateUser(obj);
      const now = specOf(obj)['tokenGeneration'];
      const before = specOf(old)['tokenGeneration'];
      const oldGen = typeof before === 'number' ? before : 0;
      const newGen = typeof now === 'number' ? now : 0;
      if (newGen < oldGen) {
        errs.push(
          invalid(
            specPath().child('tokenGeneration'),
            newGen,
            `may not be decreased (it is ${oldGen}): that would make revoked tokens valid again`,
          ),
        );
      }
      return errs;
    },
    tableColumns: [
      DISPLAY_NAME_COLUMN,
      specStringColumn('Username', 'username', 'Name the user signs in with.'),
      specStringColumn('Email', 'email', 'Email address of the user.'),
      specBooleanColumn('Disabled', 'disabled', 'Whether the user is disabled.'),
    ],
  };
}
