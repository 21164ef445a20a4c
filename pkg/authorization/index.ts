// The authorizer the server uses today: admins may do everything, every
// authenticated caller may read discovery and their own User, everything else is
// denied with an honest reason. The next issue replaces the tail of the chain.

import { AdminAuthorizer } from './admin.js';
import { BaselineAuthorizer } from './baseline.js';
import { AuthorizerChain } from './chain.js';
import type { Authorizer } from './interfaces.js';

export const NOT_IMPLEMENTED_REASON = 'fine-grained authorization is not implemented yet';

export function newPlatformAuthorizer(options: {
  group: string;
  adminUsername: string;
  pathPrefixes?: readonly string[];
}): Authorizer {
  return new AuthorizerChain(
    [
      new AdminAuthorizer(options.adminUsername),
      new BaselineAuthorizer(options.group, options.pathPrefixes ?? []),
    ],
    NOT_IMPLEMENTED_REASON,
  );
}

export { AdminAuthorizer, ADMINS_GROUP } from './admin.js';
export { BaselineAuthorizer } from './baseline.js';
export { AuthorizerChain } from './chain.js';
