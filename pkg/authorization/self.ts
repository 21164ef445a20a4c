// What every authenticated caller may do with what is their own:
//   - create `selves` (who am I) and `directclusterendpointtokens` (a token for oneself),
//   - get their own User and its `accesskeys` and `status` subresources,
//   - get the Teams they belong to and their `accesskeys` and `status` subresources,
//   - create, get, update, patch and delete their own OwnedAccessKeys: keys whose
//     spec.user is the caller, and keys of a team the caller belongs to; and get
//     their `status`. Writing a key's status is not theirs: status.lastActivity
//     extends the life of a key whose ttl counts from it.
// A team key's caller is the team: it may read that team and manage the team's
// keys. Which owner a new key may name (the caller, or one of the caller's
// teams) is the access-key admission's to check: a create carries no name here.

import { specString } from '../identity/membership.js';
import type { IdentityCache } from '../identity/identity-cache.js';
import type { CallerResolver } from './caller.js';
import { grantIf, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

const KEY_VERBS = new Set(['get', 'update', 'patch', 'delete']);
/** Reading these subresources is reading the object. */
const READABLE_SUBRESOURCES = new Set(['', 'accesskeys', 'status']);

export class SelfAuthorizer implements Authorizer {
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
    const { verb, resource, subresource, name } = attrs;
    const caller = this.callers.resolve(attrs.user);
    const readable = verb === 'get' && name !== '' && READABLE_SUBRESOURCES.has(subresource);
    switch (resource) {
      case 'selves':
        return verb === 'create' && subresource === '';
      // A token for oneself; the resource keeps it within the caller's own rights and scope.
      case 'directclusterendpointtokens':
        return verb === 'create' && subresource === '' && name === '';
      case 'users':
        return readable && caller.team === '' && name === caller.name;
      case 'teams':
        return readable && caller.teams.has(name);
      case 'ownedaccesskeys': {
        if (subresource !== '' && !(subresource === 'status' && verb === 'get')) return false;
        if (verb === 'create') return name === '';
        if (!KEY_VERBS.has(verb) || name === '') return false;
        const key = this.cache.accessKey(name);
        if (!key) return false;
        const user = specString(key, 'user');
        const team = specString(key, 'team');
        if (user) return caller.team === '' && user === caller.name;
        return team !== '' && caller.teams.has(team);
      }
      default:
        return false;
    }
  }
}
