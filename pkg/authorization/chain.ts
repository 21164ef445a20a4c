// Authorizers asked in order; the first that allows or denies decides, and a
// request nobody has an opinion on is denied (k8s.io/apiserver's union authorizer
// with a default deny). The order is the policy: see index.ts.
//
// The platform's authorizers answer from memory, synchronously; the chain stays
// synchronous until one answers with a promise (the host's SubjectAccessReview), so
// a request's decision costs no promise per authorizer (pkg/util/awaitable's
// FirstDecider).

import { FirstDecider, type Awaitable } from '../util/awaitable.js';
import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

const ask = (a: Authorizer, attrs: Attributes): Awaitable<AuthorizationResult> => a.authorize(attrs);
const decides = (result: AuthorizationResult): boolean => result.decision !== 'no-opinion';

export class AuthorizerChain implements Authorizer {
  private readonly chain: FirstDecider<Authorizer, Attributes, AuthorizationResult>;

  constructor(
    authorizers: readonly Authorizer[],
    /** The reason given when no authorizer decided ('' for none, as RBAC gives none). */
    defaultDenyReason = '',
  ) {
    const defaultDeny: AuthorizationResult = defaultDenyReason
      ? { decision: 'deny', reason: defaultDenyReason }
      : { decision: 'deny' };
    this.chain = new FirstDecider(authorizers, ask, decides, defaultDeny);
  }

  authorize(attrs: Attributes): Awaitable<AuthorizationResult> {
    return this.chain.decide(attrs);
  }
}
