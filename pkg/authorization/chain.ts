// Authorizers asked in order; the first that allows or denies decides, and a
// request nobody has an opinion on is denied (k8s.io/apiserver's union authorizer
// with a default deny). The order is the policy: see index.ts.

import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

export class AuthorizerChain implements Authorizer {
  constructor(
    private readonly authorizers: readonly Authorizer[],
    /** The reason given when no authorizer decided ('' for none, as RBAC gives none). */
    private readonly defaultDenyReason = '',
  ) {}

  async authorize(attrs: Attributes): Promise<AuthorizationResult> {
    for (const authorizer of this.authorizers) {
      const result = await authorizer.authorize(attrs);
      if (result.decision !== 'no-opinion') return result;
    }
    return this.defaultDenyReason
      ? { decision: 'deny', reason: this.defaultDenyReason }
      : { decision: 'deny' };
  }
}
