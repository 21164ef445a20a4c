// Rights may only be passed on, never made up. A caller who is not an
// administrator and may write an object (through its access rules, as its owner,
// or through the host cluster) still may not use that write to give anyone,
// themselves included, more than they hold:
//   - changing spec.owner needs the `makeowner` verb on the object; a new object
//     may only be owned by its creator or one of the creator's teams;
//   - adding access rules needs the `bind` verb on the object, and every verb
//     (on every subresource) a new rule grants must be one the caller holds there;
//   - a rule granting `impersonate` (acting as the User it is on): administrators only,
//     on create as on update;
//   - a User's groups, single sign-on groups, cluster roles and extra claims
//     decide team membership and administrator rights: administrators only;
//   - a Team's cluster roles likewise; its members (users, groups) need `bind`
//     on the team, and administrators only when the team holds the admin role
//     (its members are administrators).

import { newForbidden } from '../../apis/meta/errors.js';
import { isObject, type KubeObject } from '../../apis/meta/types.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import { accessHolderOf, type AccessGrant } from '../../identity/identity-cache.js';
import type { Admission, RequestContext, ResourceInfo } from '../../registry/rest/interfaces.js';
import { clusterRoleNames, type Caller, type CallerResolver } from '../caller.js';
import type { Permissions } from '../permissions.js';

const USER_ADMIN_FIELDS = ['groups', 'ssoGroups', 'clusterRoles', 'extraClaims'] as const;
const IMPERSONATE = 'impersonate';

function spec(obj: KubeObject | undefined): Record<string, unknown> {
  const s = obj?.['spec'];
  return isObject(s) ? s : {};
}

/** Same JSON, with absent, null and empty lists or maps all meaning "unset". */
function same(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): string => {
    if (v === undefined || v === null) return '';
    if (Array.isArray(v) && v.length === 0) return '';
    if (isObject(v) && Object.keys(v).length === 0) return '';
    return JSON.stringify(v);
  };
  return norm(a) === norm(b);
}

function grantKey(g: AccessGrant): string {
  return JSON.stringify([g.verbs, g.subresources, g.users, g.teams]);
}

export interface EscalationAdmissionOptions {
  readonly callers: CallerResolver;
  readonly permissions: Permissions;
  /** The admin cluster role ('' for none). */
  readonly adminRole: string;
  /**
   * Whether objects of a resource carry an owner and access rules (the identity
   * cache's carriesAccessRules): only those can pass rights on. Keys' rights are
   * their owner's, checked by the access-key admission.
   */
  readonly carriesAccessRules: (resource: string) => boolean;
}

export class EscalationAdmission implements Admission {
  constructor(private readonly options: EscalationAdmissionOptions) {}

  async admit(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject | undefined,
    info: ResourceInfo,
  ): Promise<void> {
    if (!this.options.carriesAccessRules(info.resource)) return;
    const user = ctx.user;
    const caller = this.options.callers.resolve(user);
    if (caller.admin) return;
    const problem = await this.problem(user, caller, obj, old, info);
    if (problem) {
      throw newForbidden(
        { group: info.group, resource: info.resource },
        obj.metadata.name ?? '',
        `User ${JSON.stringify(user.name)} ${problem}`,
      );
    }
  }

  private async problem(
    user: AuthenticatedUser,
    caller: Caller,
    obj: KubeObject,
    old: KubeObject | undefined,
    info: ResourceInfo,
  ): Promise<string | undefined> {
    const now = spec(obj);
    const before = spec(old);
    const can = (verb: string, subresource = ''): Promise<boolean> =>
      this.options.permissions.can(user, {
        verb,
        group: info.group,
        resource: info.resource,
        subresource,
        namespace: obj.metadata.namespace ?? '',
        name: obj.metadata.name ?? '',
      });

    if (info.resource === 'users') {
      for (const field of USER_ADMIN_FIELDS) {
        if (!same(now[field], before[field])) return `cannot change spec.${field}: only administrators may`;
      }
    }
    if (info.resource === 'teams') {
      if (!same(now['clusterRoles'], before['clusterRoles'])) {
        return 'cannot change spec.clusterRoles: only administrators may';
      }
      if (!same(now['users'], before['users']) || !same(now['groups'], before['groups'])) {
        const role = this.options.adminRole;
        if (role !== '' && (clusterRoleNames(obj).includes(role) || clusterRoleNames(old).includes(role))) {
          return 'cannot change the members of a team holding the admin role: only administrators may';
        }
        if (old && !(await can('bind')))
          return 'cannot change the members of the team: that needs the "bind" verb on it';
      }
    }

    const holder = accessHolderOf(obj);
    if (!same(now['owner'], before['owner'])) {
      if (old) {
        if (!(await can('makeowner')))
          return 'cannot change spec.owner: that needs the "makeowner" verb on the object';
      } else {
        const own =
          (holder.ownerUser === '' || (caller.team === '' && holder.ownerUser === caller.name)) &&
          (holder.ownerTeam === '' || caller.teams.has(holder.ownerTeam));
        if (!own) return 'cannot create an object owned by someone else: only administrators may';
      }
    }

    // Acting as someone is the one right that neither ownership of the object nor any
    // verb held on it implies (a host role's `*` included): a rule naming `impersonate`
    // is an administrator's to write, on a new object as on an existing one. Without
    // this, whoever may create a User (or bind on one) could name themselves and act as
    // it, and through it as every team that lists its name.
    const existingGrants = new Set(old ? accessHolderOf(old).access.map(grantKey) : []);
    if (holder.access.some((g) => !existingGrants.has(grantKey(g)) && g.verbs.includes(IMPERSONATE))) {
      return `cannot grant the verb ${JSON.stringify(IMPERSONATE)}: only administrators may`;
    }

    if (old) {
      const existing = existingGrants;
      const added = holder.access.filter((g) => !existing.has(grantKey(g)));
      if (added.length > 0 && !(await can('bind'))) {
        return 'cannot add access rules: that needs the "bind" verb on the object';
      }
      for (const grant of added) {
        for (const verb of grant.verbs) {
          if (!(await can(verb)))
            return `cannot grant the verb ${JSON.stringify(verb)}: they do not hold it on the object`;
          for (const sub of grant.subresources) {
            if (!(await can(verb, sub))) {
              return `cannot grant the verb ${JSON.stringify(verb)} on the subresource ${JSON.stringify(sub)}: they do not hold it on the object`;
            }
          }
        }
      }
    }
    return undefined;
  }
}
