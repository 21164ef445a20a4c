// The FieldsV1 wire form of a field set, byte for byte as structured-merge-diff
// writes it (fieldpath/serialize.go): a nested JSON object whose keys are
// serialized path elements in element order; a path that ends at a node is `{}`,
// and a node that is itself owned and also has owned fields below carries `".": {}`
// first. Reading accepts what smd accepts and skips element types it does not know.

import { FieldSet } from './field-set.js';
import { compareElements, deserializeElement, PathElementError, serializeElement } from './path.js';

export type FieldsV1 = { [key: string]: FieldsV1 };

function emit(s: FieldSet, includeSelf: boolean): FieldsV1 {
  const out: FieldsV1 = {};
  if (includeSelf && (s.members.length > 0 || s.children.length > 0)) out['.'] = {};
  let mi = 0;
  let ci = 0;
  while (mi < s.members.length || ci < s.children.length) {
    const m = s.members[mi];
    const c = s.children[ci];
    const order = !m ? 1 : !c ? -1 : compareElements(m, c.element);
    if (order < 0 && m) {
      out[serializeElement(m)] = {};
      mi++;
    } else if (c) {
      out[serializeElement(c.element)] = emit(c.set, order === 0);
      if (order === 0) mi++;
      ci++;
    }
  }
  return out;
}

/** The FieldsV1 object of a set (what goes into a managedFields entry's fieldsV1). */
export function setToFieldsV1(s: FieldSet): FieldsV1 {
  return emit(s, false);
}

/** Thrown for FieldsV1 that is not a nested object of valid keys. */
export class FieldsV1Error extends Error {
  override readonly name = 'FieldsV1Error';
}

function read(obj: unknown): { set: FieldSet | undefined; isMember: boolean } {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    throw new FieldsV1Error('fieldsV1 must be a nested JSON object');
  let set: FieldSet | undefined;
  let isMember = false;
  for (const [key, value] of Object.entries(obj)) {
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe;
    try {
      pe = deserializeElement(key);
    } catch (err) {
      if (err instanceof PathElementError && err.unknownType) continue;
      throw new FieldsV1Error(`parsing key as path element: ${(err as Error).message}`);
    }
    const child = read(value);
    if (child.isMember) (set ??= new FieldSet()).insertMember(pe);
    if (child.set) {
      set ??= new FieldSet();
      const target = set.descend(pe);
      const merged = target.union(child.set);
      target.members.splice(0, target.members.length, ...merged.members);
      target.children.splice(0, target.children.length, ...merged.children);
    }
  }
  return { set, isMember: set === undefined ? true : isMember };
}

/** The set a FieldsV1 object describes (smd Set.FromJSON); undefined or {} is the empty set. */
export function fieldsV1ToSet(fields: unknown): FieldSet {
  if (fields === undefined || fields === null) return new FieldSet();
  return read(fields).set ?? new FieldSet();
}
