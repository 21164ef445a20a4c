// Everyone may ask about themselves: create SelfSubjectAccessReviews and
// SelfSubjectRulesReviews (authorization.k8s.io) and SelfSubjectReviews
// (authentication.k8s.io), as Kubernetes grants them to every authenticated user
// through its system:basic-user role. A key's scope allows them too: asking what a
// key may do is no use if the key may not ask.

import { grantIf, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

const SELF_REVIEWS: ReadonlyMap<string, readonly string[]> = new Map([
  ['authorization.k8s.io', ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']],
  ['authentication.k8s.io', ['selfsubjectreviews']],
]);

/** A `create` of one of the self-service reviews. */
export function isSelfReviewRequest(attrs: Attributes): boolean {
  if (!attrs.isResourceRequest || attrs.verb !== 'create') return false;
  if (attrs.subresource !== '' || attrs.name !== '') return false;
  return SELF_REVIEWS.get(attrs.apiGroup)?.includes(attrs.resource) ?? false;
}

export class SelfReviewAuthorizer implements Authorizer {
  authorize(attrs: Attributes): AuthorizationResult {
    return grantIf(isSelfReviewRequest(attrs));
  }
}
