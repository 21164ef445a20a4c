// A virtual cluster may connect only with a key whose scope holds the virtual
// cluster role: a `vcluster` role entry whose projects cover the virtual cluster's
// project (`*` for all) and, when the entry lists virtual clusters, this one. Upstream
// a key without it fails later with connection errors that read like a licence
// problem; checking it up front lets us say exactly what is missing and how to get
// a key that has it.

import type { AccessKeyScope, AccessKeyScopeRole } from '../apis/management/v1/common.js';

export const VCLUSTER_ROLE = 'vcluster';

/** Who a key belongs to and what it may do, as the platform's `selves` call reports it. */
export interface KeyIdentity {
  /** The user the key acts for, or undefined for a team's key. */
  readonly user?: string | undefined;
  readonly team?: string | undefined;
  readonly accessKeyName?: string | undefined;
  readonly accessKeyType?: string | undefined;
  /** Undefined: the key has no scope (it may do all its owner may do). */
  readonly scope?: AccessKeyScope | undefined;
}

export interface VirtualClusterTarget {
  readonly project: string;
  readonly name: string;
}

function covers(list: readonly string[] | undefined, value: string): boolean {
  return (list ?? []).some((v) => v === '*' || v === value);
}

/** The role entry that lets this key connect this virtual cluster, if there is one. */
export function vclusterRoleFor(
  scope: AccessKeyScope | undefined,
  target: VirtualClusterTarget,
): AccessKeyScopeRole | undefined {
  return (scope?.roles ?? []).find(
    (r) =>
      r.role === VCLUSTER_ROLE &&
      covers(r.projects, target.project) &&
      // An entry that lists virtual clusters is limited to them; one that lists none is not.
      ((r.virtualClusters ?? []).length === 0 || covers(r.virtualClusters, target.name)),
  );
}

/** The message for a key that lacks the role, naming the role and how to create a key that has it. */
export function missingRoleMessage(identity: KeyIdentity, target: VirtualClusterTarget): string {
  const key = identity.accessKeyName ? `the access key "${identity.accessKeyName}"` : 'the access key';
  const has = (identity.scope?.roles ?? []).filter((r) => r.role === VCLUSTER_ROLE);
  const why =
    has.length > 0
      ? `its "${VCLUSTER_ROLE}" role covers projects [${has.flatMap((r) => r.projects ?? []).join(', ')}]` +
        `${has.some((r) => (r.virtualClusters ?? []).length > 0) ? ` and virtual clusters [${has.flatMap((r) => r.virtualClusters ?? []).join(', ')}]` : ''}` +
        `, not ${target.project}/${target.name}`
      : `its scope has no "${VCLUSTER_ROLE}" role entry`;
  if (target.project === '*') {
    // A shared key, for virtual clusters in any project.
    return (
      `${key} lacks the virtual cluster role "${VCLUSTER_ROLE}" for all projects (${why}), ` +
      `so virtual clusters cannot authenticate with it; create a key that has it with ` +
      `"platform create accesskey --display-name <name> --role ${VCLUSTER_ROLE}", ` +
      `or let "platform vcluster create-secret" create one`
    );
  }
  return (
    `${key} lacks the virtual cluster role "${VCLUSTER_ROLE}" for project "${target.project}" (${why}), ` +
    `so the virtual cluster cannot authenticate with it; create a key that has it with ` +
    `"platform vcluster connect-key ${target.name} --project ${target.project}" (dedicated) or ` +
    `"platform create accesskey --display-name <name> --role ${VCLUSTER_ROLE}" (shared, all projects)`
  );
}

export class MissingRoleError extends Error {
  override readonly name = 'MissingRoleError';
  constructor(
    readonly identity: KeyIdentity,
    readonly target: VirtualClusterTarget,
  ) {
    super(missingRoleMessage(identity, target));
  }
}

/** Throws MissingRoleError unless the key may connect the virtual cluster. */
export function requireVirtualClusterRole(
  identity: KeyIdentity,
  target: VirtualClusterTarget,
): AccessKeyScopeRole {
  const role = vclusterRoleFor(identity.scope, target);
  if (!role) throw new MissingRoleError(identity, target);
  return role;
}
