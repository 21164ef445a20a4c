// Rights written on the objects themselves. An object's `spec.owner` (a user, or
// a team whose members and keys then count as owners) may do everything with the
// object and its subresources. Each `spec.access` rule grants its `verbs` (`*`:
// every verb; `bind` and `makeowner` are verbs of their own, checked when access
// rules or the owner change; `impersonate`, on a User, only when named, and never
// to the owner: see impersonation.ts) on the object, and on the subresources it lists
// (`*`: all), to the listed `users` and `teams` (`*`: every user, every member of
// any team). Rules only ever speak about the object that carries them, so they
// apply to requests that name an object; lists are filtered object by object.
//
// Rules and owners are read from the identity cache (fed by watches), so a change
// takes effect on the next request without a storage read per request.

import type { AccessGrant, AccessHolder, IdentityCache } from '../identity/identity-cache.js';
import type { Caller, CallerResolver } from './caller.js';
import { grantIf, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

/**
 * Subresource requests that are, for the rules, another verb on the object:
 * asking for a virtual cluster's kube config is reading the virtual cluster.
 */
const SUBRESOURCE_VERBS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'virtualclusterinstances/kubeconfig': { create: 'get' },
};

export function isOwner(holder: AccessHolder, caller: Caller): boolean {
  if (holder.ownerUser !== '' && caller.team === '' && holder.ownerUser === caller.name) return true;
  return holder.ownerTeam !== '' && caller.teams.has(holder.ownerTeam);
}

export function grantNamesCaller(grant: AccessGrant, caller: Caller): boolean {
  if (caller.team === '' && (grant.users.includes(caller.name) || grant.users.includes('*'))) return true;
  return grant.teams.some((t) => (t === '*' ? caller.teams.size > 0 : caller.teams.has(t)));
}

/** Acting as the user a User object is (see impersonation.ts). */
export const IMPERSONATE_VERB = 'impersonate';

/**
 * Does a rule of `holder` name `impersonate` for the caller? Only the verb by name
 * grants it: ownership and `*` were written about the object, not about acting as
 * its user, and predate impersonation.
 */
export function grantsImpersonation(holder: AccessHolder, caller: Caller): boolean {
  return holder.access.some(
    (grant) => grant.verbs.includes(IMPERSONATE_VERB) && grantNamesCaller(grant, caller),
  );
}

/** Does any rule of `holder` grant `verb` on the object (subresource '' ) or a subresource to the caller? */
export function grants(holder: AccessHolder, caller: Caller, verb: string, subresource: string): boolean {
  if (verb === IMPERSONATE_VERB) return subresource === '' && grantsImpersonation(holder, caller);
  if (isOwner(holder, caller)) return true;
  return holder.access.some(
    (grant) =>
      grantNamesCaller(grant, caller) &&
      (grant.verbs.includes('*') || grant.verbs.includes(verb)) &&
      (subresource === '' || grant.subresources.includes('*') || grant.subresources.includes(subresource)),
  );
}

export class AccessRuleAuthorizer implements Authorizer {
  constructor(
    private readonly group: string,
    private readonly callers: CallerResolver,
    private readonly cache: IdentityCache,
  ) {}

  authorize(attrs: Attributes): AuthorizationResult {
    return grantIf(this.allows(attrs));
  }

  private allows(attrs: Attributes): boolean {
    if (!attrs.isResourceRequest || attrs.apiGroup !== this.group) return false;
    // Only kinds that carry rules have them (keys' rights are their owner's: see self.ts).
    if (attrs.name === '' || !this.cache.carriesAccessRules(attrs.resource)) return false;
    const holder = this.cache.accessHolder(attrs.resource, attrs.namespace, attrs.name);
    if (!holder) return false;
    const caller = this.callers.resolve(attrs.user);
    const mapped = attrs.subresource
      ? SUBRESOURCE_VERBS[`${attrs.resource}/${attrs.subresource}`]?.[attrs.verb]
      : undefined;
    if (mapped !== undefined) return grants(holder, caller, mapped, '');
    return grants(holder, caller, attrs.verb, attrs.subresource);
  }
}
