// What a caller may do in a namespace, as a list of rules (SelfSubjectRulesReview,
// `kubectl auth can-i --list`). Rather than a second description of the policy that
// could drift from it, the rules are found by asking the authorizer chain itself
// about every verb of every resource this server serves (and the names it can
// enumerate: the caller's own User and teams), so the list says exactly what the
// chain would allow. What the chain grants per object (an object's owner and access
// rules, a key's owner) cannot be listed without reading every object: for anyone
// but an unscoped administrator the list is marked incomplete, as upstream marks
// the answer of an authorizer that cannot enumerate its rules.

import type {
  NonResourceRule,
  ResourceRule,
  SubjectRulesReviewStatus,
} from '../apis/authorization/v1/types.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import type { ResourceInfo } from '../registry/rest/interfaces.js';
import type { CallerResolver } from './caller.js';
import { DISCOVERY_PATHS } from './discovery.js';
import { nonResourceAttributes, type Attributes, type Authorizer } from './interfaces.js';

export const INCOMPLETE_RULES_REASON =
  'objects grant further rights to their owners and in their spec.access rules, which are decided per object and not listed here';

/** Resources whose objects callers may hold by name (their own User, their Teams). */
const NAMED_BY_CALLER: readonly string[] = ['users', 'teams'];

export class RulesResolver {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly callers: CallerResolver,
    /** The group whose users and teams are the caller's own. */
    private readonly group: string,
    /** Every resource served, with its verbs and subresources. */
    private readonly resources: () => readonly ResourceInfo[],
  ) {}

  async rulesFor(user: AuthenticatedUser, namespace: string): Promise<SubjectRulesReviewStatus> {
    const ask = async (attrs: Omit<Attributes, 'user'>): Promise<boolean> =>
      (await this.authorizer.authorize({ ...attrs, user })).decision === 'allow';
    const nonResourceRules = await this.nonResourceRules(ask);
    // Everything, everywhere: an administrator whose key has no scope.
    if (await ask(resourceAttrs('*', '*', '*', '', namespace, ''))) {
      return {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules,
        incomplete: false,
      };
    }
    const resourceRules: ResourceRule[] = [];
    // Unnamed: verbs on whole collections, grouped by (group, verbs) as upstream compacts them.
    const byVerbs = new Map<string, ResourceRule>();
    for (const info of this.resources()) {
      const ns = info.namespaced ? namespace : '';
      for (const [resource, sub, verbs] of resourceEntries(info)) {
        const allowed: string[] = [];
        for (const verb of verbs) {
          if (await ask(resourceAttrs(verb, info.group, resource, sub, ns, ''))) allowed.push(verb);
        }
        if (allowed.length === 0) continue;
        const key = `${info.group} ${allowed.join(',')}`;
        const rule = byVerbs.get(key);
        const name = sub ? `${resource}/${sub}` : resource;
        if (rule) rule.resources?.push(name);
        else byVerbs.set(key, { verbs: allowed, apiGroups: [info.group], resources: [name] });
      }
    }
    resourceRules.push(...byVerbs.values());
    resourceRules.push(...(await this.namedRules(user, ask)));
    return { resourceRules, nonResourceRules, incomplete: true, evaluationError: INCOMPLETE_RULES_REASON };
  }

  /** The caller's own User and teams, by name, with what the chain allows on each. */
  private async namedRules(
    user: AuthenticatedUser,
    ask: (attrs: Omit<Attributes, 'user'>) => Promise<boolean>,
  ): Promise<ResourceRule[]> {
    const caller = this.callers.resolve(user);
    const names: Record<string, string[]> = {
      users: caller.team === '' ? [caller.name] : [],
      teams: [...caller.teams].sort(),
    };
    const rules: ResourceRule[] = [];
    for (const info of this.resources()) {
      if (info.group !== this.group || !NAMED_BY_CALLER.includes(info.resource)) continue;
      for (const name of names[info.resource] ?? []) {
        for (const [resource, sub, verbs] of resourceEntries(info)) {
          const allowed: string[] = [];
          for (const verb of verbs) {
            if (verb === 'list' || verb === 'watch' || verb === 'create' || verb === 'deletecollection')
              continue;
            if (await ask(resourceAttrs(verb, info.group, resource, sub, '', name))) allowed.push(verb);
          }
          if (allowed.length === 0) continue;
          rules.push({
            verbs: allowed,
            apiGroups: [info.group],
            resources: [sub ? `${resource}/${sub}` : resource],
            resourceNames: [name],
          });
        }
      }
    }
    return rules;
  }

  private async nonResourceRules(
    ask: (attrs: Omit<Attributes, 'user'>) => Promise<boolean>,
  ): Promise<NonResourceRule[]> {
    if (await ask(nonResourceAttributes('*', '*'))) return [{ verbs: ['*'], nonResourceURLs: ['*'] }];
    const urls: string[] = [];
    for (const path of DISCOVERY_PATHS) {
      for (const url of [path, `${path}/*`]) {
        if (await ask(nonResourceAttributes('get', url))) urls.push(url);
      }
    }
    return urls.length > 0 ? [{ verbs: ['get'], nonResourceURLs: urls }] : [];
  }
}

/** [resource, subresource, verbs] for a resource and each of its subresources. */
function resourceEntries(info: ResourceInfo): [string, string, readonly string[]][] {
  return [
    [info.resource, '', info.verbs],
    ...info.subresources.map((s): [string, string, readonly string[]] => [info.resource, s.name, s.verbs]),
  ];
}

function resourceAttrs(
  verb: string,
  group: string,
  resource: string,
  subresource: string,
  namespace: string,
  name: string,
): Omit<Attributes, 'user'> {
  return {
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: group,
    apiVersion: '*',
    resource,
    subresource,
    namespace,
    name,
  };
}
