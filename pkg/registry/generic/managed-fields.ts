// managedFields bookkeeping for non-apply writes: each POST, PUT and PATCH
// records an `Update` entry for its manager with the set of fields the object
// holds (FieldsV1: `f:<field>` keys; `v:<value>` for set members and
// `k:{...}` for keyed list items, as server-side apply writes them).

import { newInvalid } from '../../apis/meta/errors.js';
import { invalid, tooLong, type FieldError } from '../../apis/meta/field-errors.js';
import { isObject, type KubeObject, type ManagedFieldsEntry } from '../../apis/meta/types.js';

export const FIELD_MANAGER_MAX_LENGTH = 128;

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** 422 on <kind>.meta.k8s.io when fieldManager is too long or not printable. */
export function validateFieldManager(fieldManager: string, kind: OptionsKind): void {
  const errs: FieldError[] = [];
  if (fieldManager.length > FIELD_MANAGER_MAX_LENGTH)
    errs.push(tooLong('fieldManager', FIELD_MANAGER_MAX_LENGTH));
  let i = 0;
  for (const ch of fieldManager) {
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(ch) || (/\s/u.test(ch) && ch !== ' ')) {
      const code = ch.codePointAt(0) ?? 0;
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalid('fieldManager', fieldManager, `invalid character U+${hex} (at position ${i})`));
    }
    i += Buffer.byteLength(ch);
  }
  if (errs.length > 0) throw newInvalid({ group: 'meta.k8s.io', kind }, '', errs);
}

/** The manager of a write: the fieldManager parameter, else the User-Agent's product name. */
export function managerName(fieldManager: string, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const product = (userAgent ?? '').split('/')[0] ?? '';
  return product.slice(0, FIELD_MANAGER_MAX_LENGTH);
}

type FieldSet = Record<string, unknown>;

function fieldsOf(value: unknown): FieldSet {
  if (!isObject(value)) return {};
  const out: FieldSet = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[`f:${k}`] = fieldsOf(v);
  return out;
}

function mapFields(value: unknown): FieldSet {
  return { '.': {}, ...fieldsOf(value) };
}

function metadataFields(meta: KubeObject['metadata']): FieldSet {
  const out: FieldSet = {};
  if (meta.labels && Object.keys(meta.labels).length > 0) out['f:labels'] = mapFields(meta.labels);
  if (meta.annotations && Object.keys(meta.annotations).length > 0)
    out['f:annotations'] = mapFields(meta.annotations);
  if (meta.finalizers && meta.finalizers.length > 0) {
    const set: FieldSet = { '.': {} };
    for (const f of meta.finalizers) set[`v:${JSON.stringify(f)}`] = {};
    out['f:finalizers'] = set;
  }
  if (meta.ownerReferences && meta.ownerReferences.length > 0) {
    const list: FieldSet = { '.': {} };
    for (const ref of meta.ownerReferences) list[`k:${JSON.stringify({ uid: ref.uid })}`] = mapFields(ref);
    out['f:ownerReferences'] = list;
  }
  return out;
}

/** The FieldsV1 set of everything the object holds that a manager can own. */
export function fieldsV1(obj: KubeObject): FieldSet {
  const out: FieldSet = {};
  const meta = metadataFields(obj.metadata);
  if (Object.keys(meta).length > 0) out['f:metadata'] = meta;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata' || v === undefined) continue;
    out[`f:${k}`] = fieldsOf(v);
  }
  return out;
}

/**
 * Records an Update by `manager` on `obj`: the manager's entry (operation Update,
 * same subresource) is replaced in place, or appended; other entries stay.
 */
export function recordUpdate(
  obj: KubeObject,
  previous: readonly ManagedFieldsEntry[] | undefined,
  manager: string,
  apiVersion: string,
  time: string,
  subresource = '',
): void {
  const entry: ManagedFieldsEntry = {
    manager,
    operation: 'Update',
    apiVersion,
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: fieldsV1(obj),
  };
  // Entries made through a subresource say which (upstream's managedFields `subresource`).
  if (subresource) entry.subresource = subresource;
  const entries = (previous ?? []).map((e) => ({ ...e }));
  const i = entries.findIndex(
    (e) => e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === subresource,
  );
  if (i >= 0) entries[i] = entry;
  else entries.push(entry);
  obj.metadata.managedFields = entries;
}
