// Who may do what beyond a user's own objects: the platform's administrators, and
// the first one, created with an access key on first start.

import type { OptionGroup } from './option-group.js';
import { isSubdomain } from './validation.js';

export interface AuthorizationOptionValues {
  adminUsername: string;
  /** Holders of this cluster role are administrators ('' for none). */
  adminRole: string;
}

/** Room left in an object name after the admin user's name, for `<admin>-bootstrap`. */
const BOOTSTRAP_SUFFIX = '-bootstrap';

export const authorizationOptions = {
  title: 'Authorization flags',
  flags: [
    {
      name: 'admin-username',
      field: 'adminUsername',
      kind: 'string',
      usage:
        'Name of the User created with an access key on first start, when no users exist. A start that finds this user with no usable key and no admin kube config (a first start that stopped half-way) issues the key and writes the file; an existing admin.kubeconfig is never overwritten.',
      default: 'admin',
    },
    {
      name: 'admin-role',
      field: 'adminRole',
      kind: 'string',
      usage:
        "Name of the cluster role whose holders are platform administrators: Users and Teams naming it in spec.clusterRoles (a Team's members too). Empty: none.",
      default: '',
    },
  ],
  complete(v) {
    v.adminUsername = v.adminUsername.trim();
    v.adminRole = v.adminRole.trim();
  },
  validate(v) {
    if (!isSubdomain(v.adminUsername) || v.adminUsername.length + BOOTSTRAP_SUFFIX.length > 253) {
      return [
        `--admin-username: "${v.adminUsername}" must be a valid user name (lower case letters, digits, '-' and '.', at most ${253 - BOOTSTRAP_SUFFIX.length} characters)`,
      ];
    }
    return [];
  },
} satisfies OptionGroup<AuthorizationOptionValues>;
