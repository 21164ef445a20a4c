// Platform administrators may do everything. An administrator is the bootstrap
// admin user (--admin-username) or any member of the "platform:admins" group, so
// more admins can be made without restarting the server: give their User or
// access key that group.

import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

export const ADMINS_GROUP = 'platform:admins';

export class AdminAuthorizer implements Authorizer {
  constructor(
    private readonly adminUsername: string,
    private readonly adminGroup = ADMINS_GROUP,
  ) {}

  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    const { user } = attrs;
    const admin =
      (this.adminUsername !== '' && user.name === this.adminUsername) ||
      user.groups.includes(this.adminGroup);
    return Promise.resolve({ decision: admin ? 'allow' : 'no-opinion' });
  }
}
