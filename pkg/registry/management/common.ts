// What the management strategies share: the status rule (clients cannot write
// status through the main resource), checks for sub-shapes several kinds carry
// (owner, access rules, cluster roles, string lists) and table-column helpers.
// Every check tolerates values of the wrong type: the schema reports those, and a
// strategy must never throw on what a client sent.

import { FieldPath, forbidden, invalid, required, type FieldError } from '../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../apis/meta/types.js';
import type { TableColumn } from '../rest/interfaces.js';

/** The spec of an object as a record ({} when absent or not an object). */
export function specOf(obj: KubeObject): Record<string, unknown> {
  const spec = obj['spec'];
  return isObject(spec) ? spec : {};
}

/** Status is the server's: a create starts without one. */
export function dropStatus(obj: KubeObject): void {
  delete obj['status'];
}

/** Status is the server's: an update through the main resource keeps the stored one. */
export function keepStoredStatus(obj: KubeObject, old: KubeObject): void {
  if (old['status'] === undefined) delete obj['status'];
  else obj['status'] = structuredClone(old['status']);
}

export function specPath(): FieldPath {
  return FieldPath.root('spec');
}

/** Each entry of a string list must be a non-empty string. */
export function validateNonEmptyEntries(list: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errs: FieldError[] = [];
  list.forEach((entry, i) => {
    if (entry === '') errs.push(required(path.index(i)));
  });
  return errs;
}

/** An owner names a user or a team, not both. */
export function validateOwner(owner: unknown, path: FieldPath): FieldError[] {
  if (!isObject(owner)) return [];
  const user = owner['user'];
  const team = owner['team'];
  if (typeof user === 'string' && user !== '' && typeof team === 'string' && team !== '') {
    return [forbidden(path.child('team'), 'may not be set together with owner.user')];
  }
  return [];
}

/** Access rules need at least one verb, no empty verbs, and no empty user or team names. */
export function validateAccessRules(rules: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(rules)) return [];
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    if (!isObject(rule)) return;
    const rulePath = path.index(i);
    const verbs = rule['verbs'];
    // A missing verbs list is the schema's Required value; an empty one is ours.
    if (Array.isArray(verbs) && verbs.length === 0) {
      errs.push(required(rulePath.child('verbs'), 'at least one verb is required'));
    }
    errs.push(...validateNonEmptyEntries(verbs, rulePath.child('verbs')));
    errs.push(...validateNonEmptyEntries(rule['subresources'], rulePath.child('subresources')));
    errs.push(...validateNonEmptyEntries(rule['users'], rulePath.child('users')));
    errs.push(...validateNonEmptyEntries(rule['teams'], rulePath.child('teams')));
  });
  return errs;
}

/** Each cluster role reference names a role. */
export function validateClusterRoles(roles: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(roles)) return [];
  const errs: FieldError[] = [];
  roles.forEach((role, i) => {
    if (isObject(role) && (role['name'] === undefined || role['name'] === '')) {
      errs.push(required(path.index(i).child('name')));
    }
  });
  return errs;
}

/** Kubernetes' wording for counters and durations (apimachinery ValidateNonnegativeField). */
export function validateNonNegative(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === 'number' && value < 0) {
    return [invalid(path, value, 'must be greater than or equal to 0')];
  }
  return [];
}

// ---- table columns ------------------------------------------------------------------

function stringField(obj: KubeObject, field: string): string {
  const value = specOf(obj)[field];
  return typeof value === 'string' ? value : '';
}

export function specStringColumn(
  name: string,
  field: string,
  description: string,
  priority = 0,
): TableColumn {
  return {
    definition: { name, type: 'string', format: '', description, priority },
    cell: (obj) => stringField(obj, field),
  };
}

export function specBooleanColumn(
  name: string,
  field: string,
  description: string,
  priority = 0,
): TableColumn {
  return {
    definition: { name, type: 'boolean', format: '', description, priority },
    cell: (obj) => specOf(obj)[field] === true,
  };
}

/** How many entries a list column shows before summarising the rest. */
export const LIST_CELL_ENTRIES = 3;

/** `a,b,c + 2 more...`, the way kubectl shows long lists (e.g. endpoints). */
export function joinTruncated(list: unknown): string {
  if (!Array.isArray(list)) return '';
  const names = list.filter((v): v is string => typeof v === 'string' && v !== '');
  if (names.length <= LIST_CELL_ENTRIES) return names.join(',');
  return `${names.slice(0, LIST_CELL_ENTRIES).join(',')} + ${names.length - LIST_CELL_ENTRIES} more...`;
}

export function specListColumn(name: string, field: string, description: string, priority = 0): TableColumn {
  return {
    definition: { name, type: 'string', format: '', description, priority },
    cell: (obj) => joinTruncated(specOf(obj)[field]),
  };
}

export const DISPLAY_NAME_COLUMN: TableColumn = specStringColumn(
  'Display Name',
  'displayName',
  'Name shown in the UI.',
);
