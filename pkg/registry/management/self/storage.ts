// `selves`: POST answers who the caller is; nothing is stored (upstream's SelfREST).
// The body is ignored beyond its kind, so `kubectl create -f` of an empty Self and
// a bare `{}` both work.

import { newBadRequest } from '../../../apis/meta/errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { selfInfo, selfSchema, type EntityInfo, type SelfStatus } from '../../../apis/management/v1/self.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import { TEAM_PREFIX } from '../../../authentication/access-key.js';
import type { IdentityCache } from '../../../identity/identity-cache.js';
import type { CreateOptions, RequestContext, ResourceInfo, RESTStorage } from '../../rest/interfaces.js';

const ENTITY_FIELDS = ['displayName', 'username', 'email', 'icon', 'subject'] as const;

function entity(name: string, obj: KubeObject | undefined): EntityInfo {
  const out: EntityInfo = { name };
  const spec = obj?.['spec'];
  if (!isObject(spec)) return out;
  for (const field of ENTITY_FIELDS) {
    const value = spec[field];
    if (typeof value === 'string' && value !== '') out[field] = value;
  }
  return out;
}

/** Who `user` is, from the identity cache. */
export function selfStatus(cache: IdentityCache, user: AuthenticatedUser): SelfStatus {
  const status: SelfStatus = { subject: user.name, groups: [...user.groups] };
  if (user.name.startsWith(TEAM_PREFIX)) {
    const team = user.name.slice(TEAM_PREFIX.length);
    status.team = entity(team, cache.team(team));
  } else {
    const teams = cache.teamsOfUser(user.name, user.groups);
    status.user = {
      ...entity(user.name, cache.user(user.name)),
      teams: teams.map((t) => entity(t, cache.team(t))),
    };
  }
  if (user.accessKeyName) status.accessKey = user.accessKeyName;
  if (user.accessKeyType) status.accessKeyType = user.accessKeyType;
  if (user.scope) status.accessKeyScope = structuredClone(user.scope);
  return status;
}

export interface SelfOptions {
  /** Reported as status.projectNamespacePrefix (--project-namespace-prefix); omitted when unset. */
  readonly projectNamespacePrefix?: string;
}

export class SelfStorage implements RESTStorage {
  readonly info: ResourceInfo;
  readonly schema: Record<string, unknown>;

  constructor(
    group: string,
    private readonly cache: IdentityCache,
    private readonly now: () => Date = () => new Date(),
    private readonly options: SelfOptions = {},
  ) {
    this.info = selfInfo(group);
    this.schema = selfSchema();
  }

  create(ctx: RequestContext, body: unknown, _options: CreateOptions): Promise<KubeObject> {
    if (body !== null && body !== undefined && !isObject(body)) {
      return Promise.reject(newBadRequest('the body of a Self must be an object'));
    }
    const kind = isObject(body) ? body['kind'] : undefined;
    if (kind !== undefined && kind !== '' && kind !== this.info.kind) {
      return Promise.reject(newBadRequest(`expected kind "Self", got ${JSON.stringify(kind)}`));
    }
    const now = this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
    return Promise.resolve({
      apiVersion: `${this.info.group}/${this.info.version}`,
      kind: this.info.kind,
      metadata: { creationTimestamp: now },
      spec: {},
      status: this.status(ctx.user),
    });
  }

  private status(user: AuthenticatedUser): SelfStatus {
    const status = selfStatus(this.cache, user);
    const prefix = this.options.projectNamespacePrefix;
    if (prefix !== undefined) status.projectNamespacePrefix = prefix;
    return status;
  }
}
