// Who may impersonate whom (the verb `impersonate`, asked by the impersonation filter,
// pkg/apiserver/filters/impersonation.ts, about users, serviceaccounts and groups in
// API group "" and about userextras and uids in authentication.k8s.io, as upstream
// asks its authorizer).
//
//   - A credential with a scope never impersonates: the impersonated user's rights
//     are used from then on, unnarrowed, so a scoped key (or a token carrying a
//     scope) would gain what its scope withholds. Denied first, even an
//     administrator's key.
//   - A User's access rules grant impersonating that user: a rule on User `bob`
//     whose verbs list `impersonate` lets its users and teams act as bob. Only the
//     verb by name grants it: neither ownership of the User nor a `*` rule does, as
//     those speak about the object, not about acting as its user; so only who holds
//     `impersonate` there (an administrator) may write such a rule (the escalation
//     admission asks exactly this).
//   - A disabled User, or one being deleted, is impersonated by nobody,
//     administrators included: it cannot log in, and the aggregator's path refuses
//     it too (kube-apiserver impersonates, then forwards an identity refused here).
//   - Everything else (groups, uids, extras, service accounts, users without a
//     rule) is left to the rest of the chain: administrators, and for host
//     identities the host's SubjectAccessReview.

import { isObject, type KubeObject } from '../apis/meta/types.js';
import type { IdentityCache } from '../identity/identity-cache.js';
import { grantsImpersonation, IMPERSONATE_VERB } from './access-rules.js';
import type { CallerResolver } from './caller.js';
import {
  ALLOWED,
  NO_OPINION,
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
} from './interfaces.js';
import { isScopeEmpty } from './scope.js';

export const SCOPED_CANNOT_IMPERSONATE_REASON =
  "a credential with a scope cannot impersonate: the impersonated user's rights are not narrowed by it";

export class ImpersonationAuthorizer implements Authorizer {
  constructor(
    private readonly callers: CallerResolver,
    private readonly cache: IdentityCache,
  ) {}

  authorize(attrs: Attributes): AuthorizationResult {
    if (attrs.verb !== IMPERSONATE_VERB) return NO_OPINION;
    if (!isScopeEmpty(attrs.user.scope))
      return { decision: 'deny', reason: SCOPED_CANNOT_IMPERSONATE_REASON };
    if (
      !attrs.isResourceRequest ||
      attrs.apiGroup !== '' ||
      attrs.resource !== 'users' ||
      attrs.subresource !== ''
    )
      return NO_OPINION;
    const user = this.cache.user(attrs.name);
    if (!user) return NO_OPINION;
    const unusable = unusableUserReason(user);
    if (unusable !== undefined) return { decision: 'deny', reason: unusable };
    const holder = this.cache.accessHolder('users', '', attrs.name);
    if (!holder || !grantsImpersonation(holder, this.callers.resolve(attrs.user))) return NO_OPINION;
    return ALLOWED;
  }
}

/**
 * A User that cannot log in cannot be impersonated either, whoever asks: the same
 * identity forwarded by the host's aggregator (after kube-apiserver impersonated it)
 * is refused here too (pkg/authentication/certificate-binding.ts).
 */
function unusableUserReason(user: KubeObject): string | undefined {
  const name = user.metadata.name ?? '';
  if (user.metadata.deletionTimestamp) return `the user ${JSON.stringify(name)} is being deleted`;
  const spec = user['spec'];
  if (isObject(spec) && spec['disabled'] === true) return `the user ${JSON.stringify(name)} is disabled`;
  return undefined;
}
