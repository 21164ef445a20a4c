// Who may own the access keys a caller creates or changes. Authorization lets every
// caller create keys (a create carries no owner it could judge); this check,
// seeing the object, keeps a caller who is not an administrator to keys that
// cannot widen their rights:
//   - spec.user must be the caller; spec.team a team the caller belongs to (for a
//     team key: that team); spec.subject is for administrators only;
//   - spec.groups may only add groups the caller has (its User's groups and the
//     groups of the key in use), and never reserved ones: a key cannot join its
//     holder to a team, or to the administrators, that its owner is not in;
//   - a caller using a scoped key may only create or re-scope keys to exactly that
//     scope: a scope only ever narrows, so a key cannot mint a wider one;
//   - spec.type is '' or `User`: the other types are keys the platform manages;
//   - the record of the key's former owner (`<group>/former-owner-uid`) stays as
//     stored: changing it (to the current owner's uid) re-adopts a key the server
//     found to be a former owner's, and whoever holds it then authenticates as the
//     current owner. Only an administrator may judge that (owner-reference.ts).
// Administrators may give keys any owner, group (platform:admins included: that
// is how an administrator makes another administrator's key) and type.

import { newForbidden } from '../../apis/meta/errors.js';
import { isObject, type KubeObject } from '../../apis/meta/types.js';
import type { AccessKeyScope } from '../../apis/management/v1/common.js';
import { formerOwnerAnnotation } from '../../apis/management/v1/owned-access-key.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import { specString, specStrings } from '../../identity/membership.js';
import type { Admission, RequestContext, ResourceInfo } from '../../registry/rest/interfaces.js';
import type { CallerResolver } from '../caller.js';
import { isScopeEmpty, sameScope } from '../scope.js';

export const ACCESS_KEYS_RESOURCE = 'ownedaccesskeys';
const USER_KEY_TYPES = new Set(['', 'User']);
const RESERVED_GROUP_PREFIXES = ['system:', 'team:'];

function scopeOf(obj: KubeObject | undefined): AccessKeyScope | undefined {
  const spec = obj?.['spec'];
  return isObject(spec) && isObject(spec['scope']) ? (spec['scope'] as AccessKeyScope) : undefined;
}

export class AccessKeyAdmission implements Admission {
  constructor(private readonly callers: CallerResolver) {}

  admit(ctx: RequestContext, obj: KubeObject, old: KubeObject | undefined, info: ResourceInfo): void {
    if (info.resource !== ACCESS_KEYS_RESOURCE) return;
    const user = ctx.user;
    const caller = this.callers.resolve(user);
    if (caller.admin) return;
    const problem = this.problem(user, obj, old) ?? readoptionProblem(user, info.group, obj, old);
    if (problem) {
      throw newForbidden({ group: info.group, resource: info.resource }, obj.metadata.name ?? '', problem);
    }
  }

  private problem(user: AuthenticatedUser, obj: KubeObject, old: KubeObject | undefined): string | undefined {
    const caller = this.callers.resolve(user);
    const who = `User ${JSON.stringify(user.name)}`;
    const verb = old ? 'update' : 'create';
    const keyUser = specString(obj, 'user');
    const team = specString(obj, 'team');
    if (specString(obj, 'subject') !== '') {
      return `${who} cannot ${verb} access keys for a subject: only administrators may`;
    }
    if (keyUser !== '' && (caller.team !== '' || keyUser !== caller.name)) {
      return `${who} cannot ${verb} access keys of user ${JSON.stringify(keyUser)}: only their own`;
    }
    if (team !== '' && !caller.teams.has(team)) {
      return `${who} cannot ${verb} access keys of team ${JSON.stringify(team)}: only of teams they belong to`;
    }
    const before = new Set(specStrings(old, 'groups'));
    for (const group of specStrings(obj, 'groups')) {
      if (before.has(group)) continue;
      const reserved = RESERVED_GROUP_PREFIXES.some((p) => group.startsWith(p));
      if (reserved || !caller.groups.has(group)) {
        return `${who} cannot give an access key the group ${JSON.stringify(group)}: it is not one of their groups`;
      }
    }
    const scope = scopeOf(obj);
    const scopeChanged = !old || !sameScope(scopeOf(old), scope);
    if (!isScopeEmpty(user.scope) && scopeChanged && !sameScope(scope, user.scope)) {
      return `${who} is using the scoped access key ${JSON.stringify(user.accessKeyName ?? '')}: keys it creates or changes must carry exactly its scope`;
    }
    const type = specString(obj, 'type');
    if (!USER_KEY_TYPES.has(type) && type !== specString(old, 'type')) {
      return `${who} cannot ${verb} access keys of type ${JSON.stringify(type)}: only administrators may`;
    }
    return undefined;
  }
}

/**
 * A non-administrator's update that changed the stored record of the key's former
 * owner: the strategy keeps the record unless it is set to the current owner's uid,
 * a re-adoption. A record the server adds (an orphaning delete, a key found older
 * than its owner) has no stored one before it, and is never refused here.
 */
function readoptionProblem(
  user: AuthenticatedUser,
  group: string,
  obj: KubeObject,
  old: KubeObject | undefined,
): string | undefined {
  const annotation = formerOwnerAnnotation(group);
  const stored = old?.metadata.annotations?.[annotation];
  if (stored === undefined || obj.metadata.annotations?.[annotation] === stored) return undefined;
  return `User ${JSON.stringify(user.name)} cannot change the annotation ${JSON.stringify(annotation)}: only administrators may re-adopt an access key recorded as a former owner's`;
}
