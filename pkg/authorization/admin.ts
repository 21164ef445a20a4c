// Platform administrators may do everything (who they are: see caller.ts). A key's
// scope still narrows an administrator's key: the ScopeAuthorizer runs first.

import type { CallerResolver } from './caller.js';
import { grantIf, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

export class AdminAuthorizer implements Authorizer {
  constructor(private readonly callers: CallerResolver) {}

  authorize(attrs: Attributes): AuthorizationResult {
    return grantIf(this.callers.resolve(attrs.user).admin);
  }
}
