// Platform administrators may do everything (who they are: see caller.ts). A key's
// scope still narrows an administrator's key: the ScopeAuthorizer runs first.

import type { CallerResolver } from './caller.js';
import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

export class AdminAuthorizer implements Authorizer {
  constructor(private readonly callers: CallerResolver) {}

  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    return Promise.resolve({ decision: this.callers.resolve(attrs.user).admin ? 'allow' : 'no-opinion' });
  }
}
