// Is one access-key scope within another? A token issued by a caller whose own
// credential is scoped (a scoped access key, or a scoped token) may carry only a
// scope inside the caller's: a scope narrows, it never widens. This answers the
// question conservatively: what cannot be shown to be covered is reported as
// excess, so an ambiguous request is refused rather than granted.
//
// Semantics (the specification's, with the audit-policy rules upstream copies):
// `*` is a wildcard; in rules an empty list means "every" (verbs, resources,
// resourceNames, namespaces, nonResourceURLs, requestTargets, virtualClusters) and
// an empty `cluster` means no restriction. Project access covers the project's
// spaces and virtual clusters. `allowPlatformCli: true` is the `platformCLI` role;
// `vcluster` and `agent` imply `network-peer`.

import type {
  AccessKeyScope,
  AccessKeyScopeRole,
  AccessKeyScopeRule,
  GroupResources,
} from '../apis/management/v1/common.js';

const WILDCARD = '*';

function listOf<T>(value: readonly T[] | undefined): readonly T[] {
  return Array.isArray(value) ? value : [];
}

/** A scope that limits nothing: absent, or without a single entry. */
export function isUnlimitedScope(scope: AccessKeyScope | undefined): boolean {
  if (!scope) return true;
  return (
    listOf(scope.roles).length === 0 &&
    listOf(scope.projects).length === 0 &&
    listOf(scope.spaces).length === 0 &&
    listOf(scope.virtualClusters).length === 0 &&
    listOf(scope.clusters).length === 0 &&
    listOf(scope.rules).length === 0 &&
    scope.allowPlatformCli !== true
  );
}

/**
 * The parts of `requested` that `allowed` does not cover, each described for a
 * person (`roles[0] (vcluster)`); empty when requested is within allowed.
 */
export function scopeExcess(
  requested: AccessKeyScope | undefined,
  allowed: AccessKeyScope | undefined,
): string[] {
  if (isUnlimitedScope(allowed) || !allowed) return [];
  if (isUnlimitedScope(requested) || !requested) return ['an unlimited scope'];
  const excess: string[] = [];

  const allowedRoles = expandRoles(allowed);
  listOf(requested.roles).forEach((role, i) => {
    if (!allowedRoles.some((a) => roleCovers(a, role))) excess.push(`roles[${i}] (${role.role ?? ''})`);
  });
  if (requested.allowPlatformCli === true && !allowedRoles.some((a) => a.role === PLATFORM_CLI)) {
    excess.push('allowPlatformCli');
  }

  const allowedProjects = listOf(allowed.projects).map((p) => p.project ?? '');
  const projectCovered = (project: string | undefined): boolean =>
    allowedProjects.some(
      (p) => p === WILDCARD || (project !== undefined && project !== WILDCARD && p === project),
    );

  listOf(requested.projects).forEach((p, i) => {
    if (!projectCovered(p.project)) excess.push(`projects[${i}] (${p.project ?? ''})`);
  });
  listOf(requested.spaces).forEach((s, i) => {
    const covered =
      projectCovered(s.project) ||
      listOf(allowed.spaces).some((a) => valueCovers(a.project, s.project) && valueCovers(a.space, s.space));
    if (!covered) excess.push(`spaces[${i}] (${s.project ?? ''}/${s.space ?? ''})`);
  });
  listOf(requested.virtualClusters).forEach((v, i) => {
    const covered =
      projectCovered(v.project) ||
      listOf(allowed.virtualClusters).some(
        (a) => valueCovers(a.project, v.project) && valueCovers(a.virtualCluster, v.virtualCluster),
      );
    if (!covered) excess.push(`virtualClusters[${i}] (${v.project ?? ''}/${v.virtualCluster ?? ''})`);
  });
  listOf(requested.clusters).forEach((c, i) => {
    if (!listOf(allowed.clusters).some((a) => valueCovers(a.cluster, c.cluster))) {
      excess.push(`clusters[${i}] (${c.cluster ?? ''})`);
    }
  });
  listOf(requested.rules).forEach((rule, i) => {
    if (!listOf(allowed.rules).some((a) => ruleCovers(a, rule))) excess.push(`rules[${i}]`);
  });
  return excess;
}

/** `*` covers anything; otherwise only the same non-wildcard value. */
function valueCovers(allowed: string | undefined, requested: string | undefined): boolean {
  if (allowed === WILDCARD) return true;
  return allowed !== undefined && allowed !== '' && requested !== WILDCARD && allowed === requested;
}

/** For lists where empty means "every": is every requested entry matched? */
function everyCovered(
  allowed: readonly string[] | undefined,
  requested: readonly string[] | undefined,
  covers: (a: string, r: string) => boolean = (a, r) => a === WILDCARD || (r !== WILDCARD && a === r),
): boolean {
  const a = listOf(allowed);
  const r = listOf(requested);
  if (a.length === 0 || a.includes(WILDCARD)) return true;
  if (r.length === 0) return false;
  return r.every((entry) => a.some((pattern) => covers(pattern, entry)));
}

// ---- roles ------------------------------------------------------------------------

const NETWORK_PEER = 'network-peer';
const PLATFORM_CLI = 'platformCLI';
const IMPLIES_NETWORK_PEER = new Set(['vcluster', 'agent']);

/** The roles an allowed scope grants, with what they imply. */
function expandRoles(scope: AccessKeyScope): AccessKeyScopeRole[] {
  const roles = [...listOf(scope.roles)];
  if (scope.allowPlatformCli === true) roles.push({ role: PLATFORM_CLI, projects: [WILDCARD] });
  for (const r of listOf(scope.roles)) {
    if (IMPLIES_NETWORK_PEER.has(r.role ?? '')) roles.push({ ...r, role: NETWORK_PEER });
  }
  return roles;
}

function roleCovers(allowed: AccessKeyScopeRole, requested: AccessKeyScopeRole): boolean {
  return (
    allowed.role === requested.role &&
    everyCovered(allowed.projects, requested.projects) &&
    everyCovered(allowed.virtualClusters, requested.virtualClusters)
  );
}

// ---- rules --------------------------------------------------------------------------

function ruleCovers(allowed: AccessKeyScopeRule, requested: AccessKeyScopeRule): boolean {
  return (
    everyCovered(allowed.verbs, requested.verbs) &&
    resourcesCovered(listOf(allowed.resources), listOf(requested.resources)) &&
    everyCovered(allowed.namespaces, requested.namespaces) &&
    everyCovered(allowed.nonResourceURLs, requested.nonResourceURLs, urlCovers) &&
    everyCovered(allowed.requestTargets, requested.requestTargets) &&
    (!allowed.cluster || allowed.cluster === requested.cluster) &&
    virtualClustersCovered(allowed, requested)
  );
}

function resourcesCovered(allowed: readonly GroupResources[], requested: readonly GroupResources[]): boolean {
  if (allowed.length === 0) return true;
  if (requested.length === 0) return false;
  return requested.every((r) =>
    allowed.some(
      (a) =>
        (a.group ?? '') === (r.group ?? '') &&
        everyCovered(a.resources, r.resources, resourcePatternCovers) &&
        everyCovered(a.resourceNames, r.resourceNames),
    ),
  );
}

/** Audit-policy resource patterns: `*`, `pods`, `pods/log`, `pods/*`, `*\/scale`. */
function resourcePatternCovers(allowed: string, requested: string): boolean {
  if (allowed === WILDCARD || allowed === requested) return true;
  if (allowed.endsWith('/*')) return requested.startsWith(allowed.slice(0, -1));
  if (allowed.startsWith('*/')) return requested.endsWith(allowed.slice(1));
  return false;
}

/** `/healthz*` covers `/healthz/ping` and `/healthz/*`. */
function urlCovers(allowed: string, requested: string): boolean {
  if (allowed === WILDCARD || allowed === requested) return true;
  if (!allowed.endsWith(WILDCARD)) return false;
  const prefix = allowed.slice(0, -1);
  return requested.startsWith(prefix);
}

function virtualClustersCovered(allowed: AccessKeyScopeRule, requested: AccessKeyScopeRule): boolean {
  const a = listOf(allowed.virtualClusters);
  if (a.length === 0) return true;
  const r = listOf(requested.virtualClusters);
  if (r.length === 0) return false;
  const part = (x: string | undefined, y: string | undefined): boolean => !x || (!!y && x === y);
  return r.every((vc) => a.some((av) => part(av.name, vc.name) && part(av.namespace, vc.namespace)));
}
