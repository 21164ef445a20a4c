// Who is asking, as the platform's rules need it: the caller's name, whether it is
// a team (a team's access key), its groups, the teams it belongs to and whether it
// is an administrator. Worked out once per request from the identity cache and
// remembered for as long as the cache does not change.
//
// Administrators are:
//   - the bootstrap admin user (--admin-username),
//   - members of the `platform:admins` group (on the User, or on the key in use:
//     only administrators can give a key that group),
//   - the host cluster's `system:masters` (as kube-apiserver always allows them),
//   - users and teams holding the admin cluster role (--admin-role) in their
//     spec.clusterRoles; a team's cluster roles apply to its members, so the
//     members of such a team are administrators too.

import { isObject, type KubeObject } from '../apis/meta/types.js';
import { TEAM_PREFIX } from '../authentication/access-key.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import { TEAMS, type IdentityCache } from '../identity/identity-cache.js';
import { specStrings } from '../identity/membership.js';

export const ADMINS_GROUP = 'platform:admins';
export const MASTERS_GROUP = 'system:masters';

export interface Caller {
  readonly name: string;
  /** The team a team key speaks for; '' for everyone else. */
  readonly team: string;
  readonly groups: ReadonlySet<string>;
  /** The teams the caller belongs to (for a team key: that team). */
  readonly teams: ReadonlySet<string>;
  readonly admin: boolean;
}

export interface AdminPolicy {
  /** The bootstrap admin user ('' for none). */
  readonly adminUsername: string;
  /** The cluster role whose holders are administrators ('' for none). */
  readonly adminRole: string;
  readonly adminGroup?: string;
}

/** The names in `spec.clusterRoles[].name`. */
export function clusterRoleNames(obj: KubeObject | undefined): string[] {
  const spec = obj?.['spec'];
  if (!isObject(spec) || !Array.isArray(spec['clusterRoles'])) return [];
  return spec['clusterRoles']
    .filter(isObject)
    .map((r) => r['name'])
    .filter((n): n is string => typeof n === 'string' && n !== '');
}

export class CallerResolver {
  /**
   * Callers by the AuthenticatedUser they were worked out for (an access key's
   * identity is one object for as long as the key and its User do not change), valid
   * while no User or Team changes: key changes, such as recorded activity, keep it.
   */
  private readonly memo = new WeakMap<object, { version: number; caller: Caller }>();
  /** Teams holding the admin cluster role, kept from the cache's changes (no per-request scan). */
  private readonly adminTeams = new Set<string>();

  constructor(
    private readonly cache: IdentityCache,
    private readonly policy: AdminPolicy,
  ) {
    if (policy.adminRole === '') return;
    this.rebuildAdminTeams();
    cache.subscribe((change) => {
      if (change.resource !== TEAMS) return;
      if (change.type === 'replace') this.rebuildAdminTeams();
      else if (change.obj) this.noteTeam(change.obj, change.type === 'upsert');
    });
  }

  resolve(user: AuthenticatedUser): Caller {
    const version = this.cache.membershipVersion;
    const known = this.memo.get(user);
    if (known && known.version === version) return known.caller;
    const caller = this.compute(user);
    this.memo.set(user, { version, caller });
    return caller;
  }

  /** Does the team hold the admin cluster role? */
  teamIsAdmin(team: string): boolean {
    return this.adminTeams.has(team);
  }

  private rebuildAdminTeams(): void {
    this.adminTeams.clear();
    for (const team of this.cache.allTeams()) this.noteTeam(team, true);
  }

  private noteTeam(team: KubeObject, present: boolean): void {
    const name = team.metadata.name ?? '';
    if (present && clusterRoleNames(team).includes(this.policy.adminRole)) this.adminTeams.add(name);
    else this.adminTeams.delete(name);
  }

  /** Is one of `teams` an admin team? Walks the smaller of the two sets. */
  private anyAdminTeam(teams: ReadonlySet<string>): boolean {
    if (this.adminTeams.size === 0) return false;
    const [small, large] =
      teams.size <= this.adminTeams.size ? [teams, this.adminTeams] : [this.adminTeams, teams];
    for (const t of small) if (large.has(t)) return true;
    return false;
  }

  private compute(user: AuthenticatedUser): Caller {
    // Only a team's own key speaks for it: a host identity that happens to be called
    // `team:<name>` (a front-proxy header, a certificate's CN) is a user like any other.
    const isTeam = user.hostIdentity !== true && user.name.startsWith(TEAM_PREFIX);
    const team = isTeam ? user.name.slice(TEAM_PREFIX.length) : '';
    const groups = new Set(user.groups);
    const platformUser = isTeam ? undefined : this.cache.user(user.name);
    for (const g of specStrings(platformUser, 'groups')) groups.add(g);
    const teams = new Set(isTeam ? [team] : this.cache.teamsOfUser(user.name, groups));
    const { adminUsername, adminRole } = this.policy;
    const admin =
      (!isTeam && adminUsername !== '' && user.name === adminUsername) ||
      groups.has(this.policy.adminGroup ?? ADMINS_GROUP) ||
      groups.has(MASTERS_GROUP) ||
      (adminRole !== '' && clusterRoleNames(platformUser).includes(adminRole)) ||
      this.anyAdminTeam(teams);
    return { name: user.name, team, groups, teams, admin };
  }
}
