// Team membership. A user belongs to a team when the team names the user in
// `spec.users`, or when one of the user's groups is in the team's `spec.groups`:
// that is how teams follow groups synced from an identity provider. The groups
// that count are the User's `spec.groups` and, for a request, the groups of the
// access key in use (so a key minted from a single sign-on login carries the
// provider's groups into team membership).
//
// TeamIndex answers "which teams" with two map lookups per group instead of a scan
// of every team, and UserGroupIndex answers the reverse question the
// User.status.teams controller asks when a team's groups change.

import { isObject, type KubeObject } from '../apis/meta/types.js';

/** The non-empty strings of `spec[field]`. */
export function specStrings(obj: KubeObject | undefined, field: string): string[] {
  const spec = obj?.['spec'];
  if (!isObject(spec)) return [];
  const list = spec[field];
  return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}

/** A string field of `spec`, '' when absent or not a string. */
export function specString(obj: KubeObject | undefined, field: string): string {
  const spec = obj?.['spec'];
  if (!isObject(spec)) return '';
  const value = spec[field];
  return typeof value === 'string' ? value : '';
}

/** A multimap that keeps no empty sets. */
class SetIndex {
  private readonly map = new Map<string, Set<string>>();

  add(key: string, value: string): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(value);
  }

  delete(key: string, value: string): void {
    const set = this.map.get(key);
    if (!set) return;
    set.delete(value);
    if (set.size === 0) this.map.delete(key);
  }

  get(key: string): ReadonlySet<string> | undefined {
    return this.map.get(key);
  }

  clear(): void {
    this.map.clear();
  }
}

/** Teams by the users and groups they name. */
export class TeamIndex {
  private readonly byUser = new SetIndex();
  private readonly byGroup = new SetIndex();
  /** What each team was indexed under, to undo it on change. */
  private readonly indexed = new Map<string, { users: string[]; groups: string[] }>();

  set(team: KubeObject): void {
    const name = team.metadata.name ?? '';
    this.delete(name);
    const users = specStrings(team, 'users');
    const groups = specStrings(team, 'groups');
    for (const u of users) this.byUser.add(u, name);
    for (const g of groups) this.byGroup.add(g, name);
    this.indexed.set(name, { users, groups });
  }

  delete(name: string): void {
    const old = this.indexed.get(name);
    if (!old) return;
    for (const u of old.users) this.byUser.delete(u, name);
    for (const g of old.groups) this.byGroup.delete(g, name);
    this.indexed.delete(name);
  }

  clear(): void {
    this.byUser.clear();
    this.byGroup.clear();
    this.indexed.clear();
  }

  /** The teams `user` belongs to given these groups, sorted. */
  teamsOf(user: string, groups: Iterable<string>): string[] {
    const teams = new Set<string>(this.byUser.get(user) ?? []);
    for (const g of groups) for (const t of this.byGroup.get(g) ?? []) teams.add(t);
    return [...teams].sort();
  }
}

/** Users by the groups in their `spec.groups`. */
export class UserGroupIndex {
  private readonly byGroup = new SetIndex();
  private readonly indexed = new Map<string, string[]>();

  set(user: KubeObject): void {
    const name = user.metadata.name ?? '';
    this.delete(name);
    const groups = specStrings(user, 'groups');
    for (const g of groups) this.byGroup.add(g, name);
    this.indexed.set(name, groups);
  }

  delete(name: string): void {
    for (const g of this.indexed.get(name) ?? []) this.byGroup.delete(g, name);
    this.indexed.delete(name);
  }

  clear(): void {
    this.byGroup.clear();
    this.indexed.clear();
  }

  usersInGroup(group: string): ReadonlySet<string> {
    return this.byGroup.get(group) ?? new Set();
  }
}
