// The one list of the stored kinds of the management API group. Everything that
// needs "every kind" (the Stores the server builds, discovery and OpenAPI through
// them, the watch cache's warm-up, the storage metrics, the garbage collector, the
// identity cache's access holders, the escalation admission, the generated
// encryption configuration, audit's redaction) derives it from here. Order is the
// order discovery lists them in.

import type { ManagementKind } from '../../apis/management/v1/common.js';
import type { Strategy } from '../rest/interfaces.js';
import type { KindDefinition, KindOptions } from './kind.js';
import { ownedAccessKeyKind } from './owned-access-key/kind.js';
import { sharedSecretKind } from './shared-secret/kind.js';
import { teamKind } from './team/kind.js';
import { userKind } from './user/kind.js';
import { virtualClusterInstanceKind } from './virtualclusterinstance/kind.js';

export const MANAGEMENT_KINDS: readonly KindDefinition[] = [
  sharedSecretKind,
  teamKind,
  userKind,
  ownedAccessKeyKind,
  virtualClusterInstanceKind,
];

/** Every stored kind of `group`/v1 with its names and its schema (fresh objects on each call). */
export function managementKinds(group: string): ManagementKind[] {
  return MANAGEMENT_KINDS.map((kind) => ({ info: kind.info(group), schema: kind.schema() }));
}

/** A strategy for every stored management kind of `group`/v1, in the list's order. */
export function managementStrategies(group: string, options: KindOptions = {}): Strategy[] {
  return MANAGEMENT_KINDS.map((kind) => kind.strategy(group, options));
}

/** The resources (plural names) of the kinds that have `trait`. */
export function resourcesWhere(group: string, trait: (kind: KindDefinition) => boolean): string[] {
  return MANAGEMENT_KINDS.filter(trait).map((kind) => kind.info(group).resource);
}

/**
 * Secret material by resource (`sharedsecrets` → `spec.data`), for whatever writes
 * objects where people read them (audit, logs): only kinds that have any are named.
 */
export function sensitiveFieldsByResource(group: string): ReadonlyMap<string, readonly string[]> {
  return new Map(
    MANAGEMENT_KINDS.filter((kind) => kind.traits.sensitiveFields.length > 0).map((kind) => [
      kind.info(group).resource,
      kind.traits.sensitiveFields,
    ]),
  );
}
