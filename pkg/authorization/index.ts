// The platform's authorization, in one place. One authorizer chain decides every
// request, in this order; the first that allows or denies wins, and nobody's
// opinion is a denial (403 with Kubernetes' wording):
//
//   0. minting      a direct cluster endpoint token may never mint credentials
//                   (access keys, tokens, kube configs), not even an admin's;
//                   nor may an impersonated request
//      impersonate  a scoped credential may not impersonate; a User's access rule
//                   naming `impersonate` lets its users and teams act as that user
//   1. scope        a scoped key (or token) is denied what its scope does not allow
//   2. admin        administrators may do everything
//   3. delegated    the seam for the host cluster's SubjectAccessReview (host identities)
//   4. discovery    everyone may read discovery, OpenAPI, version and health
//   5. self         everyone may ask the self-service reviews (can-i, whoami), read
//                   their own User and their teams, create selves, and manage their
//                   own access keys (and their teams' keys)
//   6. access rules spec.owner and spec.access on the object named by the request
//   7. collections  everyone may list and watch; the storage returns only what the
//                   caller may get (the strict chain: 0-6, scope strict on names)
//
// Admission then checks the object of a write against its caller: access-key
// owners, groups and scopes; escalation through owners, access rules, groups,
// cluster roles and team members; blockOwnerDeletion.

import type { IdentityCache } from '../identity/identity-cache.js';
import type { Admission, RESTStorage } from '../registry/rest/interfaces.js';
import { AccessRuleAuthorizer } from './access-rules.js';
import { AdminAuthorizer } from './admin.js';
import {
  AccessKeyAdmission,
  AdmissionChain,
  EscalationAdmission,
  OwnerReferencesAdmission,
  type KindResolver,
} from './admission/index.js';
import { CallerResolver } from './caller.js';
import { AuthorizerChain } from './chain.js';
import { CredentialMintingAuthorizer } from './credential-minting.js';
import { DiscoveryAuthorizer } from './discovery.js';
import { ImpersonationAuthorizer } from './impersonation.js';
import type { Authorizer } from './interfaces.js';
import { CollectionAuthorizer, withListFiltering } from './list-filter.js';
import { Permissions } from './permissions.js';
import { ScopeAuthorizer } from './scope.js';
import { SelfAuthorizer } from './self.js';
import { SelfReviewAuthorizer } from './self-reviews.js';

export interface PlatformAuthorizationOptions {
  readonly group: string;
  readonly cache: IdentityCache;
  /** The bootstrap admin user (--admin-username). */
  readonly adminUsername: string;
  /** Holders of this cluster role are administrators (--admin-role; '' for none). */
  readonly adminRole?: string;
  /** Project `p` lives in namespace `<prefix><p>` (default `p-`). */
  readonly projectNamespacePrefix?: string;
  /** Prefixes the API is also served under (`/kubernetes/management`). */
  readonly pathPrefixes?: readonly string[];
  /** Asked after the admin rule, e.g. the host cluster's SubjectAccessReview. */
  readonly delegated?: readonly Authorizer[];
  /** Resources every caller may list and watch, filtered. */
  readonly listableResources?: readonly string[];
  /** Maps an ownerReference's apiVersion and kind to a resource served here. */
  readonly resolveKind?: KindResolver;
}

export interface PlatformAuthorization {
  /** The chain every request goes through. */
  readonly authorizer: Authorizer;
  /** The chain without the collection rule: what a caller may do with one object. */
  readonly strict: Authorizer;
  readonly callers: CallerResolver;
  readonly permissions: Permissions;
  /** For every Store: the checks of a write against its caller. */
  readonly admission: Admission;
  /** Wraps a resource's storage so its lists and watches hold only what the caller may see. */
  filter(storage: RESTStorage): RESTStorage;
}

export function newPlatformAuthorization(options: PlatformAuthorizationOptions): PlatformAuthorization {
  const { group, cache } = options;
  const adminRole = options.adminRole ?? '';
  const pathPrefixes = options.pathPrefixes ?? [];
  const callers = new CallerResolver(cache, { adminUsername: options.adminUsername, adminRole });
  const scope = (collections: 'lenient' | 'strict'): ScopeAuthorizer =>
    new ScopeAuthorizer({
      group,
      pathPrefixes,
      collections,
      ...(options.projectNamespacePrefix !== undefined
        ? { projectNamespacePrefix: options.projectNamespacePrefix }
        : {}),
    });
  const minting = new CredentialMintingAuthorizer(group);
  const impersonation = new ImpersonationAuthorizer(callers, cache);
  const rules: Authorizer[] = [
    new AdminAuthorizer(callers),
    ...(options.delegated ?? []),
    new DiscoveryAuthorizer(pathPrefixes),
    new SelfReviewAuthorizer(),
    new SelfAuthorizer(group, callers, cache),
    new AccessRuleAuthorizer(group, callers, cache),
  ];
  const strict = new AuthorizerChain([minting, impersonation, scope('strict'), ...rules]);
  // Object by object in a filtered list or watch: the platform's own rules only, so
  // a list is never one host SubjectAccessReview per object (see list-filter.ts).
  const platformRules = rules.filter((r) => !(options.delegated ?? []).includes(r));
  const perObject = new AuthorizerChain([minting, impersonation, scope('strict'), ...platformRules]);
  const authorizer = new AuthorizerChain([
    minting,
    impersonation,
    scope('lenient'),
    ...rules,
    new CollectionAuthorizer(group, new Set(options.listableResources ?? [])),
  ]);
  const permissions = new Permissions(strict);
  const admission = new AdmissionChain([
    new AccessKeyAdmission(callers),
    new EscalationAdmission({
      callers,
      permissions,
      adminRole,
      carriesAccessRules: (resource) => cache.carriesAccessRules(resource),
    }),
    new OwnerReferencesAdmission(permissions, options.resolveKind ?? (() => undefined)),
  ]);
  return {
    authorizer,
    strict,
    callers,
    permissions,
    admission,
    filter: (storage) => withListFiltering(storage, strict, perObject),
  };
}

export { AccessRuleAuthorizer } from './access-rules.js';
export { AdminAuthorizer } from './admin.js';
export { ADMINS_GROUP, MASTERS_GROUP, CallerResolver, type Caller } from './caller.js';
export { AuthorizerChain } from './chain.js';
export {
  CERTIFICATE_CANNOT_MINT_REASON,
  CredentialMintingAuthorizer,
  IMPERSONATION_CANNOT_MINT_REASON,
  mintsCredentials,
  TOKEN_CANNOT_MINT_REASON,
} from './credential-minting.js';
export { DiscoveryAuthorizer, isDiscoveryRequest } from './discovery.js';
export { ImpersonationAuthorizer, SCOPED_CANNOT_IMPERSONATE_REASON } from './impersonation.js';
export { CollectionAuthorizer, withListFiltering } from './list-filter.js';
export { Permissions, deniedMessage } from './permissions.js';
export { ScopeAuthorizer, ScopeMatcher, isScopeEmpty, sameScope, describeScope } from './scope.js';
export { SelfAuthorizer } from './self.js';
export { SelfReviewAuthorizer, isSelfReviewRequest } from './self-reviews.js';
export { RulesResolver } from './rules-review.js';
