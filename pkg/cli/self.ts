// The platform's `selves` call: POST `.../selves` answers who the caller's key
// is (user or team, teams, groups, the key's name, type and scope). The client
// reads the answer leniently (names as strings or as objects with a name), since
// it only needs a few fields and should not break when the server adds some.

import type { AccessKeyScope } from '../apis/management/v1/common.js';
import { isObject } from '../apis/meta/types.js';
import type { KeyIdentity } from '../vcluster/role-check.js';
import type { PlatformApi } from './api-client.js';

export interface SelfInfo extends KeyIdentity {
  readonly teams: readonly string[];
  readonly groups: readonly string[];
  /** Prefix of project namespaces (`p-` unless the server says otherwise). */
  readonly projectNamespacePrefix: string;
}

export const DEFAULT_PROJECT_NAMESPACE_PREFIX = 'p-';

function nameOf(v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (isObject(v)) {
    for (const k of ['name', 'username']) {
      const s = v[k];
      if (typeof s === 'string' && s !== '') return s;
    }
  }
  return undefined;
}

function names(v: unknown): string[] {
  return Array.isArray(v) ? v.flatMap((x) => nameOf(x) ?? []) : [];
}

export function parseSelf(obj: unknown): SelfInfo {
  const status = isObject(obj) && isObject(obj.status) ? obj.status : {};
  const user = nameOf(status.user);
  const team = nameOf(status.team);
  const teams = names(status.teams);
  if (teams.length === 0 && isObject(status.user)) teams.push(...names(status.user.teams));
  const scope = isObject(status.accessKeyScope) ? (status.accessKeyScope as AccessKeyScope) : undefined;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    user,
    team,
    teams,
    groups: Array.isArray(status.groups)
      ? status.groups.filter((g): g is string => typeof g === 'string')
      : [],
    accessKeyName: str(status.accessKey) ?? str(status.accessKeyName),
    accessKeyType: str(status.accessKeyType),
    scope,
    projectNamespacePrefix: str(status.projectNamespacePrefix) ?? DEFAULT_PROJECT_NAMESPACE_PREFIX,
  };
}

/** Who the API's key is, asked of the platform. */
export async function reviewSelf(api: PlatformApi): Promise<SelfInfo> {
  const body = { apiVersion: `${api.group}/v1`, kind: 'Self', metadata: {}, spec: {} };
  return parseSelf(await api.call<unknown>('POST', '/selves', body));
}

/** `user alice` / `team ops` / the key's subject, for messages. */
export function describeSelf(self: SelfInfo): string {
  if (self.user) return `user ${self.user}`;
  if (self.team) return `team ${self.team}`;
  return 'an unnamed subject';
}
