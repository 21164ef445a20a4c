// Authorizers asked in order; the first that allows or denies decides, and a
// request nobody has an opinion on is denied (k8s.io/apiserver's union authorizer
// with a default deny). The order is the policy: see index.ts.
//
// The platform's authorizers answer from memory, synchronously; the chain stays
// synchronous until one answers with a promise (the host's SubjectAccessReview), so
// a request's decision costs no promise per authorizer.

import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';
import type { Awaitable } from '../authentication/interfaces.js';

export class AuthorizerChain implements Authorizer {
  private readonly defaultDeny: AuthorizationResult;

  constructor(
    private readonly authorizers: readonly Authorizer[],
    /** The reason given when no authorizer decided ('' for none, as RBAC gives none). */
    defaultDenyReason = '',
  ) {
    this.defaultDeny = defaultDenyReason
      ? { decision: 'deny', reason: defaultDenyReason }
      : { decision: 'deny' };
  }

  authorize(attrs: Attributes): Awaitable<AuthorizationResult> {
    return this.from(0, attrs);
  }

  /** Asks the authorizers from the `first`th on. */
  private from(first: number, attrs: Attributes): Awaitable<AuthorizationResult> {
    const authorizers = this.authorizers;
    for (let i = first; i < authorizers.length; i++) {
      const result = authorizers[i]!.authorize(attrs);
      if (result instanceof Promise) {
        const next = i + 1;
        return result.then((r) => (r.decision !== 'no-opinion' ? r : this.from(next, attrs)));
      }
      if (result.decision !== 'no-opinion') return result;
    }
    return this.defaultDeny;
  }
}
