// The 409 an apply gets when it would take fields another manager owns, worded
// as upstream words it (apimachinery managedfields/internal/conflict.go):
//   Apply failed with 1 conflict: conflict with "ci-pipeline": .spec.displayName
//   Apply failed with 2 conflicts: conflicts with "a":\n- .spec.x\nconflicts with "b" using v1:\n- .spec.y
// with one details.causes entry per field, of type FieldManagerConflict.

import { ApiError } from '../../apis/meta/errors.js';
import type { StatusCause } from '../../apis/meta/types.js';
import { parseManagerIdentifier } from './managed.js';
import { pathToString, type Path } from './path.js';
import { compareStrings, goQuote } from './value.js';

/** One conflicting field: who owns it (their manager name, operation, version) and where. */
export interface ApplyConflict {
  /** The owner's manager name as recorded in managedFields. */
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  /** The owner's apiVersion (Update entries only; appliers are version-less). */
  readonly apiVersion?: string;
  readonly subresource?: string;
  /** The field, as smd prints paths: `.spec.access[name="a"].verbs`. */
  readonly field: string;
  readonly path: Path;
}

/** `"name"`, `"name" with subresource "status"`, and ` using <apiVersion>` for Update managers. */
export function describeManager(
  c: Pick<ApplyConflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>,
): string {
  let s = goQuote(c.manager);
  if (c.subresource) s += ` with subresource ${goQuote(c.subresource)}`;
  if (c.operation === 'Update') s += ` using ${c.apiVersion ?? ''}`;
  return s;
}

export function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const first = conflicts[0];
  if (conflicts.length === 1 && first)
    return `Apply failed with 1 conflict: conflict with ${describeManager(first)}: ${first.field}`;
  const byManager = new Map<string, ApplyConflict[]>();
  for (const c of conflicts) {
    const key = describeManager(c);
    byManager.set(key, [...(byManager.get(key) ?? []), c]);
  }
  const lines: string[] = [];
  for (const key of [...byManager.keys()].sort(compareStrings)) {
    lines.push(`conflicts with ${key}:`);
    for (const c of byManager.get(key) ?? []) lines.push(`- ${c.field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * An apply's conflicts as the API error the HTTP layer writes: 409, reason
 * Conflict, one FieldManagerConflict cause per field (upstream NewApplyConflict).
 */
export class ApplyConflictError extends ApiError {
  readonly conflicts: readonly ApplyConflict[];

  constructor(conflicts: readonly ApplyConflict[]) {
    const causes: StatusCause[] = conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${describeManager(c)}`,
      field: c.field,
    }));
    super(409, 'Conflict', conflictMessage(conflicts), { causes });
    this.conflicts = conflicts;
  }
}

/** Conflicts from the engine (keyed by manager identifier) in a stable order: by manager, then field. */
export function toApplyConflicts(raw: readonly { manager: string; path: Path }[]): ApplyConflict[] {
  const out: ApplyConflict[] = raw.map(({ manager, path }) => {
    const parts = parseManagerIdentifier(manager);
    const operation = parts?.operation === 'Apply' ? 'Apply' : 'Update';
    const c: ApplyConflict = {
      manager: parts?.manager ?? manager,
      operation,
      ...(operation === 'Update' && parts?.apiVersion !== undefined ? { apiVersion: parts.apiVersion } : {}),
      ...(parts?.subresource ? { subresource: parts.subresource } : {}),
      field: pathToString(path),
      path,
    };
    return c;
  });
  return out
    .map((c, i) => ({ c, i, key: raw[i]?.manager ?? '' }))
    .sort((a, b) => compareStrings(a.key, b.key) || a.i - b.i)
    .map((x) => x.c);
}
