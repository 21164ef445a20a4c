// Access-key scopes (and the same shape on signed tokens). A scope only ever
// narrows what the credential's owner may do: the ScopeAuthorizer sits first in
// the chain and denies what the scope does not allow, and has no opinion on the
// rest, which the owner's own rights then decide. An empty scope limits nothing.
//
// What each part of a scope allows on the management API:
//   always           discovery, OpenAPI, version and health reads, `create
//                    selves` and the self-service reviews (a scoped key must
//                    still be able to say who it is and what it may do)
//                    and `create directclusterendpointtokens` (the token it gets
//                    is never wider than this scope)
//   roles            platformCLI (or the deprecated allowPlatformCli: true): get,
//                    list and watch of every resource, and creating
//                    virtualclusterinstances/kubeconfig, which the command-line
//                    client needs. vcluster: get, list and watch of
//                    virtualclusterinstances. Both limited to the role's projects
//                    and virtual clusters when it names any. metrics-reader: `get`
//                    of /metrics (so a key for Prometheus can read nothing else;
//                    the owner must still be allowed /metrics: an administrator).
//                    Other roles (agent, network-peer, workspace, metrics-writer)
//                    grant nothing here.
//   projects         every request inside the project's namespace (`*`: any project)
//   spaces           spaceinstances of that name in the project's namespace
//   virtualClusters  virtualclusterinstances of that name (and their
//                    subresources) in the project's namespace
//   clusters         clusters of that name
//   rules            (deprecated) verbs, resources (group, resource patterns,
//                    resourceNames), namespaces, nonResourceURLs and
//                    requestTargets as documented; a rule naming a `cluster` or
//                    `virtualClusters` only allows requests to those, never
//                    management requests.
//
// A list or watch has no name. When a part of the scope allows only some names,
// the ScopeAuthorizer in front of the HTTP handler lets the list through
// ("lenient") and the filtering storage drops what the scope does not reach; the
// filter's own check of the whole collection is "strict".

import type { AccessKeyScope, AccessKeyScopeRole, AccessKeyScopeRule } from '../apis/management/v1/common.js';
import { isObject } from '../apis/meta/types.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import { NO_OPINION, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';
import { isDiscoveryRequest } from './discovery.js';
import { isSelfReviewRequest } from './self-reviews.js';

export const DEFAULT_PROJECT_NAMESPACE_PREFIX = 'p-';

const READ_VERBS = new Set(['get', 'list', 'watch']);
/** kube-apiserver's metrics path, which the metrics-reader role may read. */
const METRICS_PATH = '/metrics';
const COLLECTION_VERBS = new Set(['list', 'watch']);
/** Every request this server answers is a management request. */
const REQUEST_TARGET = 'Management';

export interface ScopeOptions {
  /** The API group of the management API. */
  readonly group: string;
  /** Project `p` lives in namespace `<prefix><p>`. */
  readonly projectNamespacePrefix?: string;
  /** Prefixes the API is also served under, stripped before matching paths. */
  readonly pathPrefixes?: readonly string[];
  /**
   * Lenient: a list or watch passes when the scope reaches some objects of the
   * collection (the storage then filters). Strict: only when it reaches all.
   */
  readonly collections: 'lenient' | 'strict';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}

function objects<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value.filter(isObject) as T[]) : [];
}

/** True when the scope sets nothing that limits: no roles, projects, ... and no CLI flag. */
export function isScopeEmpty(scope: AccessKeyScope | undefined): boolean {
  if (!scope || !isObject(scope)) return true;
  const lists = [
    scope.roles,
    scope.projects,
    scope.spaces,
    scope.virtualClusters,
    scope.clusters,
    scope.rules,
  ];
  return lists.every((l) => !Array.isArray(l) || l.length === 0) && scope.allowPlatformCli !== true;
}

/** A short description of a scope for messages: `roles [platformCLI]; projects [p1]`. */
export function describeScope(scope: AccessKeyScope): string {
  const parts: string[] = [];
  const roles = objects<AccessKeyScopeRole>(scope.roles).map((r) => r.role ?? '');
  if (scope.allowPlatformCli === true) roles.push('platformCLI (allowPlatformCli)');
  if (roles.length) parts.push(`roles [${roles.join(', ')}]`);
  const projects = objects<{ project?: string }>(scope.projects).map((p) => p.project ?? '');
  if (projects.length) parts.push(`projects [${projects.join(', ')}]`);
  const spaces = objects<{ project?: string; space?: string }>(scope.spaces).map(
    (s) => `${s.project ?? ''}/${s.space ?? ''}`,
  );
  if (spaces.length) parts.push(`spaces [${spaces.join(', ')}]`);
  const vcs = objects<{ project?: string; virtualCluster?: string }>(scope.virtualClusters).map(
    (v) => `${v.project ?? ''}/${v.virtualCluster ?? ''}`,
  );
  if (vcs.length) parts.push(`virtualClusters [${vcs.join(', ')}]`);
  const clusters = objects<{ cluster?: string }>(scope.clusters).map((c) => c.cluster ?? '');
  if (clusters.length) parts.push(`clusters [${clusters.join(', ')}]`);
  const rules = objects<AccessKeyScopeRule>(scope.rules);
  if (rules.length) parts.push(`${rules.length} rule${rules.length === 1 ? '' : 's'}`);
  return parts.join('; ');
}

/** Why a scoped credential is refused, naming the scope. */
export function scopeDenialReason(user: AuthenticatedUser, scope: AccessKeyScope): string {
  const who = user.accessKeyName ? `access key ${JSON.stringify(user.accessKeyName)}` : 'the token';
  return `the scope of ${who} does not allow this request (scope: ${describeScope(scope)})`;
}

/** Decides whether a scope allows a request. Pure; one instance per configuration. */
export class ScopeMatcher {
  private readonly prefix: string;

  constructor(private readonly options: ScopeOptions) {
    this.prefix = options.projectNamespacePrefix ?? DEFAULT_PROJECT_NAMESPACE_PREFIX;
  }

  allows(scope: AccessKeyScope | undefined, attrs: Attributes): boolean {
    if (isScopeEmpty(scope) || !scope) return true;
    if (this.alwaysAllowed(attrs)) return true;
    return (
      this.rolesAllow(scope, attrs) ||
      objects<{ project?: string }>(scope.projects).some((p) => this.inProject(attrs, p.project ?? '')) ||
      objects<{ project?: string; space?: string }>(scope.spaces).some((s) =>
        this.namedIn(attrs, 'spaceinstances', s.project ?? '', s.space ?? ''),
      ) ||
      objects<{ project?: string; virtualCluster?: string }>(scope.virtualClusters).some((v) =>
        this.namedIn(attrs, 'virtualclusterinstances', v.project ?? '', v.virtualCluster ?? ''),
      ) ||
      objects<{ cluster?: string }>(scope.clusters).some((c) => this.cluster(attrs, c.cluster ?? '')) ||
      objects<AccessKeyScopeRule>(scope.rules).some((r) => this.ruleAllows(r, attrs))
    );
  }

  private ours(attrs: Attributes): boolean {
    return attrs.isResourceRequest && attrs.apiGroup === this.options.group;
  }

  private alwaysAllowed(attrs: Attributes): boolean {
    if (!attrs.isResourceRequest) return isDiscoveryRequest(attrs, this.options.pathPrefixes ?? []);
    if (isSelfReviewRequest(attrs)) return true;
    // A scoped credential may mint a token: the resource gives it no more than this scope.
    const always = attrs.resource === 'selves' || attrs.resource === 'directclusterendpointtokens';
    return this.ours(attrs) && always && attrs.verb === 'create' && attrs.subresource === '';
  }

  private projectNamespace(project: string): string {
    return this.prefix + project;
  }

  /** The request's namespace belongs to `project` (`*`: any project namespace). */
  private inProject(attrs: Attributes, project: string): boolean {
    if (!project || !this.ours(attrs) || attrs.namespace === '') return false;
    if (project === '*') return attrs.namespace.startsWith(this.prefix) && attrs.namespace !== this.prefix;
    return attrs.namespace === this.projectNamespace(project);
  }

  /** A name limit: `*` (or empty) is every name; a list or watch passes leniently. */
  private nameMatches(attrs: Attributes, allowed: string): boolean {
    if (allowed === '' || allowed === '*') return true;
    if (attrs.name !== '') return attrs.name === allowed;
    return COLLECTION_VERBS.has(attrs.verb) && this.options.collections === 'lenient';
  }

  /** An object of `resource` named `name` in `project`'s namespace, and its subresources. */
  private namedIn(attrs: Attributes, resource: string, project: string, name: string): boolean {
    return attrs.resource === resource && this.inProject(attrs, project) && this.nameMatches(attrs, name);
  }

  private cluster(attrs: Attributes, name: string): boolean {
    return this.ours(attrs) && attrs.resource === 'clusters' && name !== '' && this.nameMatches(attrs, name);
  }

  // ---- roles -------------------------------------------------------------------

  private rolesAllow(scope: AccessKeyScope, attrs: Attributes): boolean {
    const roles = objects<AccessKeyScopeRole>(scope.roles);
    if (scope.allowPlatformCli === true) roles.push({ role: 'platformCLI' });
    return roles.some((role) => {
      switch (role.role) {
        case 'platformCLI':
          return this.platformCLIAllows(role, attrs);
        case 'vcluster':
          return this.vclusterAllows(role, attrs);
        case 'metrics-reader':
          return this.metricsReaderAllows(attrs);
        default:
          return false;
      }
    });
  }

  /** The role applies here: its projects (and virtual clusters) cover the request. */
  private roleCovers(role: AccessKeyScopeRole, attrs: Attributes): boolean {
    const projects = strings(role.projects);
    if (attrs.namespace !== '' && projects.length > 0) {
      if (!projects.some((p) => this.inProject(attrs, p))) return false;
    }
    const vcs = strings(role.virtualClusters);
    if (attrs.resource === 'virtualclusterinstances' && vcs.length > 0) {
      return vcs.some((vc) => this.nameMatches(attrs, vc));
    }
    return true;
  }

  private platformCLIAllows(role: AccessKeyScopeRole, attrs: Attributes): boolean {
    if (!this.ours(attrs)) return false;
    const read = READ_VERBS.has(attrs.verb);
    const kubeconfig =
      attrs.verb === 'create' &&
      attrs.resource === 'virtualclusterinstances' &&
      attrs.subresource === 'kubeconfig';
    return (read || kubeconfig) && this.roleCovers(role, attrs);
  }

  private vclusterAllows(role: AccessKeyScopeRole, attrs: Attributes): boolean {
    return (
      this.ours(attrs) &&
      attrs.resource === 'virtualclusterinstances' &&
      READ_VERBS.has(attrs.verb) &&
      this.roleCovers(role, attrs)
    );
  }

  private metricsReaderAllows(attrs: Attributes): boolean {
    if (attrs.isResourceRequest || attrs.verb !== 'get') return false;
    return stripPrefix(attrs.path, this.options.pathPrefixes ?? []) === METRICS_PATH;
  }

  // ---- deprecated rules -----------------------------------------------------------

  private ruleAllows(rule: AccessKeyScopeRule, attrs: Attributes): boolean {
    // Only requests to that cluster or those virtual clusters: never a management request.
    if (typeof rule.cluster === 'string' && rule.cluster !== '') return false;
    if (objects(rule.virtualClusters).length > 0) return false;
    const targets = strings(rule.requestTargets);
    if (targets.length > 0 && !targets.includes(REQUEST_TARGET)) return false;
    const verbs = strings(rule.verbs);
    if (verbs.length > 0 && !verbs.includes('*') && !verbs.includes(attrs.verb)) return false;
    if (!attrs.isResourceRequest) {
      const path = stripPrefix(attrs.path, this.options.pathPrefixes ?? []);
      return strings(rule.nonResourceURLs).some((url) => nonResourceURLMatches(url, path));
    }
    const namespaces = Array.isArray(rule.namespaces)
      ? rule.namespaces.filter((n): n is string => typeof n === 'string')
      : [];
    if (namespaces.length > 0 && !namespaces.includes(attrs.namespace)) return false;
    const resources = objects<{ group?: string; resources?: string[]; resourceNames?: string[] }>(
      rule.resources,
    );
    if (resources.length === 0) return true;
    return resources.some((gr) => {
      const group = typeof gr.group === 'string' ? gr.group : '';
      if (group !== '*' && group !== attrs.apiGroup) return false;
      const patterns = strings(gr.resources);
      if (patterns.length > 0 && !patterns.some((p) => resourcePatternMatches(p, attrs))) return false;
      const names = strings(gr.resourceNames);
      if (names.length === 0) return true;
      if (attrs.name !== '') return names.includes(attrs.name);
      return COLLECTION_VERBS.has(attrs.verb) && this.options.collections === 'lenient';
    });
  }
}

/** `name`, `name/sub`, `*`, `name/*`, `*\/sub` against the request's resource and subresource. */
export function resourcePatternMatches(
  pattern: string,
  attrs: Pick<Attributes, 'resource' | 'subresource'>,
): boolean {
  if (pattern === '*') return true;
  const slash = pattern.indexOf('/');
  if (slash < 0) return attrs.subresource === '' && pattern === attrs.resource;
  const resource = pattern.slice(0, slash);
  const sub = pattern.slice(slash + 1);
  if (attrs.subresource === '') return false;
  return (resource === '*' || resource === attrs.resource) && (sub === '*' || sub === attrs.subresource);
}

/** Exact, or a `.../*` prefix (or `*` for every path). */
export function nonResourceURLMatches(url: string, path: string): boolean {
  if (url === '*') return true;
  if (url.endsWith('*')) return path.startsWith(url.slice(0, -1));
  return url === path;
}

function stripPrefix(path: string, prefixes: readonly string[]): string {
  for (const prefix of prefixes) {
    if (prefix && (path === prefix || path.startsWith(prefix + '/'))) return path.slice(prefix.length) || '/';
  }
  return path;
}

/** Denies what the caller's scope does not allow; no opinion on everything else. */
export class ScopeAuthorizer implements Authorizer {
  private readonly matcher: ScopeMatcher;

  constructor(options: ScopeOptions) {
    this.matcher = new ScopeMatcher(options);
  }

  authorize(attrs: Attributes): AuthorizationResult {
    const scope = attrs.user.scope;
    if (!scope || this.matcher.allows(scope, attrs)) return NO_OPINION;
    return { decision: 'deny', reason: scopeDenialReason(attrs.user, scope) };
  }
}

/** Two scopes are the same limit (empty ones all limit nothing). */
export function sameScope(a: AccessKeyScope | undefined, b: AccessKeyScope | undefined): boolean {
  if (isScopeEmpty(a) && isScopeEmpty(b)) return true;
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter(
        (k) => value[k] !== undefined && !(Array.isArray(value[k]) && (value[k] as unknown[]).length === 0),
      )
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
