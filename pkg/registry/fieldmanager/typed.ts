// Values walked with their schema (structured-merge-diff typed/): the set of
// fields a value sets (tofieldset.go), the merge of an applied configuration into
// a live object and the comparison of two objects (merge.go, typed.go), and the
// removal of fields (remove.go). Written from smd's documented behaviour and its
// code as reference, including the corners managedFields depend on: an empty map
// or list is a leaf; a struct field that holds a non-empty map is not itself a
// member; a list or map left with nothing after a removal becomes null.

import { ownMember, setOwn } from '../../util/own-member.js';
import { FieldSet } from './field-set.js';
import {
  elementToString,
  fieldElement,
  indexElement,
  keyElement,
  pathToString,
  valueElement,
  type KeyField,
  type Path,
  type PathElement,
} from './path.js';
import { fieldType, NO_TYPE, type Atom, type ListType, type MapType } from './schema.js';
import {
  equalValues,
  isList,
  isMap,
  isScalar,
  type Value,
  type ValueMap,
} from './value.js';

/** A value that does not fit its schema (smd's ValidationErrors), with the path where. */
export class TypedValueError extends Error {
  override readonly name = 'TypedValueError';
}

/**
 * An applied configuration that smd refuses before merging it (it is parsed without
 * AllowDuplicates, so a repeated key is refused there; the live object may repeat one).
 */
export class AppliedConfigurationError extends TypedValueError {}

function fail(path: Path, message: string, error: typeof TypedValueError = TypedValueError): never {
  const at = pathToString(path);
  throw new error(at ? `${at}: ${message}` : message);
}

/** The atom a value takes where several are possible (smd deduceAtom). */
function deduce(atom: Atom, v: Value | undefined): Atom {
  if (v === undefined) return atom;
  if (isScalar(v)) return atom.scalar ? { scalar: atom.scalar } : atom;
  if (isList(v)) return atom.list ? { list: atom.list } : atom;
  if (isMap(v)) return atom.map ? { map: atom.map } : atom;
  return atom;
}

function sameAtom(a: Atom, b: Atom): boolean {
  return a.scalar === b.scalar && a.list === b.list && a.map === b.map;
}

/** The element that names a list item: its key (list-map), its value (set) or its index. */
export function listItemElement(t: ListType, index: number, item: Value, path: Path): PathElement {
  if (t.relationship !== 'associative') return indexElement(index);
  if (t.keys.length > 0) {
    if (item === null) fail(path, 'associative list with keys may not have a null element');
    if (!isMap(item)) fail(path, 'associative list with keys may not have non-map elements');
    const fields: KeyField[] = [];
    for (const name of t.keys) {
      const v = ownMember(item, name);
      if (v === undefined)
        fail(
          path,
          `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`,
        );
      fields.push({ name, value: v });
    }
    return keyElement(fields);
  }
  if (isMap(item)) fail(path, "associative list without keys has an element that's a map type");
  if (isList(item)) fail(path, 'not supported: associative list with lists as elements');
  if (item === null) fail(path, "associative list without keys has an element that's an explicit null");
  return valueElement(item);
}

/** Go's %T of a decoded JSON value: what smd names a non-number by. */
function goTypeName(v: Value): string {
  if (isList(v)) return '[]interface {}';
  if (isMap(v)) return 'map[string]interface {}';
  return typeof v === 'boolean' ? 'bool' : typeof v === 'number' ? 'float64' : 'string';
}

/** Why a scalar does not fit its scalar type (smd validateScalar), or undefined when it does. */
export function scalarFault(atom: Atom, v: Value | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  const t = atom.scalar;
  // Upstream's words; where it prints the value itself (%v, %#v), its kind only:
  // values can be secrets, and this message reaches a client.
  const kind = isList(v) ? 'list' : isMap(v) ? 'map' : typeof v;
  switch (t) {
    case 'numeric':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      return typeof v === 'string' ? undefined : `expected string, got ${kind}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${kind}`;
    default:
      return isScalar(v) ? undefined : `expected any scalar, got ${kind}`;
  }
}

function checkScalar(atom: Atom, v: Value | undefined, path: Path, side: string): void {
  const fault = scalarFault(atom, v);
  if (fault) fail(path, `${side}${fault}`);
}

function asList(v: Value | undefined): readonly Value[] | undefined {
  return isList(v) ? v : undefined;
}

function asMap(v: Value | undefined): ValueMap | undefined {
  return isMap(v) ? v : undefined;
}

// ---- the field set of a value ------------------------------------------------------

function collect(v: Value, atom: Atom, path: PathElement[], set: FieldSet): void {
  const a = deduce(atom, v);
  if (a.map) return collectMap(v, a.map, path, set);
  if (a.scalar) {
    set.insert(path);
    return;
  }
  if (a.list) return collectList(v, a.list, path, set);
  fail(path, 'schema error: invalid atom: inlined');
}

function collectList(v: Value, t: ListType, path: PathElement[], set: FieldSet): void {
  if (t.relationship === 'atomic') {
    set.insert(path);
    return;
  }
  const list = asList(v);
  if (!list) return;
  const elements = list.map((item, i) => listItemElement(t, i, item, path));
  const duplicated = duplicatedIdentities(elements);
  list.forEach((item, i) => {
    const pe = elements[i] as PathElement;
    const childPath = [...path, pe];
    // smd 4.4 owns a duplicated key as the item itself, without descending into
    // its copies (typed/tofieldset.go): which copy's fields would they be?
    if (duplicated.has(identityOf(pe))) {
      set.insert(childPath);
      return;
    }
    collect(item, t.elementType, childPath, set);
    set.insert(childPath);
  });
}

/** One text per list item key: equal for exactly the elements smd finds equal. */
export function identityOf(pe: PathElement): string {
  return elementToString(pe) + '\u0000' + pe.kind;
}

/** The identities that occur more than once in a list. */
function duplicatedIdentities(elements: readonly PathElement[]): Set<string> {
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  for (const pe of elements) {
    const id = identityOf(pe);
    if (seen.has(id)) duplicated.add(id);
    else seen.add(id);
  }
  return duplicated;
}

function collectMap(v: Value, t: MapType, path: PathElement[], set: FieldSet): void {
  if (t.relationship === 'atomic') {
    set.insert(path);
    return;
  }
  const m = asMap(v);
  if (!m) return;
  for (const [key, val] of Object.entries(m)) {
    const childPath = [...path, fieldElement(key)];
    collect(val, fieldType(t, key), childPath, set);
    if (val === null || (isMap(val) && Object.keys(val).length === 0) || !t.fields.has(key))
      set.insert(childPath);
  }
}

/** Every field a value sets, as smd's TypedValue.ToFieldSet. */
export function toFieldSet(v: Value, atom: Atom): FieldSet {
  const set = new FieldSet();
  collect(v, atom, [], set);
  return set;
}

// ---- merge and compare -------------------------------------------------------------

interface Walker {
  lhs: Value | undefined;
  rhs: Value | undefined;
  path: PathElement[];
  out: Value | undefined;
  inLeaf: boolean;
}

interface MergeRules {
  /** Called once on a leaf: a scalar, an atomic node, or a node empty on both sides. */
  leaf(w: Walker): void;
  /** Called after a non-leaf node's children were merged. */
  after?(w: Walker): void;
  /**
   * Set when comparing: list items then pair up as smd's compare does (typed/compare.go),
   * a key duplicated on either side compared as one whole item, recorded here.
   */
  comparison?: Comparison;
}

function walk(w: Walker, atom: Atom, rules: MergeRules): void {
  const al = deduce(atom, w.lhs);
  const ar = deduce(atom, w.rhs);
  if (sameAtom(al, ar)) handle(w, ar, rules);
  else {
    // Kinds differ (only possible for deduced types): walk the old side on a copy
    // whose output is dropped, as smd does, then the new side.
    handle({ ...w, path: [...w.path] }, al, rules);
    handle(w, ar, rules);
  }
  if (!w.inLeaf && rules.after) rules.after(w);
}

function handle(w: Walker, a: Atom, rules: MergeRules): void {
  if (a.map) return mergeMap(w, a.map, rules);
  if (a.scalar) {
    checkScalar(a, w.lhs, w.path, 'lhs: ');
    checkScalar(a, w.rhs, w.path, 'rhs: ');
    return leaf(w, rules);
  }
  if (a.list) return mergeList(w, a.list, rules);
  fail(w.path, 'schema error: invalid atom: inlined');
}

function leaf(w: Walker, rules: MergeRules): void {
  if (w.inLeaf) return;
  w.inLeaf = true;
  rules.leaf(w);
}

function descend(w: Walker, pe: PathElement, lhs: Value | undefined, rhs: Value | undefined): Walker {
  return { lhs, rhs, path: [...w.path, pe], out: undefined, inLeaf: w.inLeaf };
}

function mergeList(w: Walker, t: ListType, rules: MergeRules): void {
  const lhs = asList(w.lhs);
  const rhs = asList(w.rhs);
  const bothEmpty = (!lhs || lhs.length === 0) && (!rhs || rhs.length === 0);
  if (t.relationship === 'atomic' || bothEmpty) return leaf(w, rules);
  if (rules.comparison) return compareListItems(w, t, lhs ?? [], rhs ?? [], rules, rules.comparison);
  const rhsElements: PathElement[] = [];
  const rhsByKey = new Map<string, Value>();
  for (const [i, item] of (rhs ?? []).entries()) {
    const pe = listItemElement(t, i, item, w.path);
    const id = identityOf(pe);
    // The applied configuration may not repeat a key (smd refuses it before merging).
    if (rhsByKey.has(id))
      fail(w.path, `duplicate entries for key ${elementToString(pe)}`, AppliedConfigurationError);
    rhsByKey.set(id, item);
    rhsElements.push(pe);
  }
  const lhsItems = lhs ?? [];
  const lhsElements = lhsItems.map((item, i) => listItemElement(t, i, item, w.path));
  // The live object may repeat a key (smd 4.4): a repeated key the configuration
  // also sets becomes the configuration's one item, not a merge of a copy; one it
  // leaves alone keeps every copy.
  const duplicated = duplicatedIdentities(lhsElements);
  const lhsByKey = new Map<string, Value>();
  lhsElements.forEach((pe, i) => {
    const id = identityOf(pe);
    if (!lhsByKey.has(id)) lhsByKey.set(id, lhsItems[i] as Value);
  });
  const out: Value[] = [];
  const emit = (pe: PathElement, l: Value | undefined, r: Value | undefined): void => {
    const w2 = descend(w, pe, l, r);
    walk(w2, t.elementType, rules);
    if (w2.out !== undefined) out.push(w2.out);
  };
  const liveOf = (id: string): Value | undefined => (duplicated.has(id) ? undefined : lhsByKey.get(id));
  // smd 4.4's order (typed/merge.go visitListItems): the configuration's items in its
  // own order, each live item it leaves alone where it stood in the live list. The
  // items both lists hold are taken in the configuration's order: a live one met
  // before its turn is skipped and placed when the configuration reaches it.
  const shared = rhsElements.map(identityOf).filter((id) => lhsByKey.has(id));
  let nextShared = 0;
  const merged = new Set<string>();
  let lI = 0;
  let rI = 0;
  while (lI < lhsElements.length || rI < rhsElements.length) {
    if (lI < lhsElements.length && rI < rhsElements.length) {
      const lid = identityOf(lhsElements[lI] as PathElement);
      if (lid === identityOf(rhsElements[rI] as PathElement)) {
        merged.add(lid);
        emit(lhsElements[lI] as PathElement, liveOf(lid), rhsByKey.get(lid));
        lI++;
        rI++;
        nextShared++;
        continue;
      }
      if (rhsByKey.has(lid) && nextShared < shared.length && shared[nextShared] !== lid) {
        lI++;
        continue;
      }
    }
    if (lI < lhsElements.length) {
      const pe = lhsElements[lI] as PathElement;
      const lid = identityOf(pe);
      if (!rhsByKey.has(lid)) {
        emit(pe, lhsItems[lI], undefined);
        lI++;
        continue;
      }
      if (merged.has(lid)) lI++;
    }
    if (rI < rhsElements.length) {
      const pe = rhsElements[rI] as PathElement;
      const rid = identityOf(pe);
      merged.add(rid);
      emit(pe, liveOf(rid), rhsByKey.get(rid));
      rI++;
      if (nextShared < shared.length && shared[nextShared] === rid) nextShared++;
    }
  }
  if (out.length > 0) w.out = out;
}

/**
 * The items of two lists compared (smd 4.4 typed/compare.go): a key once on each
 * side is compared field by field; a key repeated on a side is one whole item, so
 * the list of its copies is modified, added or removed as a unit.
 */
function compareListItems(
  w: Walker,
  t: ListType,
  lhs: readonly Value[],
  rhs: readonly Value[],
  rules: MergeRules,
  c: Comparison,
): void {
  const byKey = new Map<string, { pe: PathElement; l: Value[]; r: Value[] }>();
  const group = (pe: PathElement): { pe: PathElement; l: Value[]; r: Value[] } => {
    const id = identityOf(pe);
    let g = byKey.get(id);
    if (!g) byKey.set(id, (g = { pe, l: [], r: [] }));
    return g;
  };
  lhs.forEach((item, i) => group(listItemElement(t, i, item, w.path)).l.push(item));
  rhs.forEach((item, i) => group(listItemElement(t, i, item, w.path)).r.push(item));
  const item = (g: { pe: PathElement }, l: Value | undefined, r: Value | undefined): void =>
    walk(descend(w, g.pe, l, r), t.elementType, rules);
  for (const g of byKey.values()) {
    const path = [...w.path, g.pe];
    if (g.l.length <= 1 && g.r.length <= 1) item(g, g.l[0], g.r[0]);
    else if (g.l.length >= 2 && g.r.length >= 2) {
      const same = g.l.length === g.r.length && g.l.every((v, i) => equalValues(v, g.r[i] as Value));
      if (!same) c.modified.insert(path);
    } else if (g.l.length >= 2) {
      if (g.r.length > 0) item(g, undefined, g.r[0]);
      c.removed.insert(path);
    } else {
      if (g.l.length > 0) item(g, g.l[0], undefined);
      c.added.insert(path);
    }
  }
}

function mergeMap(w: Walker, t: MapType, rules: MergeRules): void {
  const lhs = asMap(w.lhs);
  const rhs = asMap(w.rhs);
  const bothEmpty = (!lhs || Object.keys(lhs).length === 0) && (!rhs || Object.keys(rhs).length === 0);
  if (t.relationship === 'atomic' || bothEmpty) return leaf(w, rules);
  const out: Record<string, Value> = {};
  const keys = [...Object.keys(lhs ?? {})];
  for (const k of Object.keys(rhs ?? {})) if (!lhs || !Object.hasOwn(lhs, k)) keys.push(k);
  for (const key of keys) {
    const w2 = descend(w, fieldElement(key), ownMember(lhs, key), ownMember(rhs, key));
    walk(w2, fieldType(t, key), rules);
    if (w2.out !== undefined) setOwn(out, key, w2.out);
  }
  if (Object.keys(out).length > 0) w.out = out;
}

function run(
  lhs: Value | undefined,
  rhs: Value | undefined,
  atom: Atom,
  rules: MergeRules,
): Value | undefined {
  if (lhs === undefined && rhs === undefined)
    throw new TypedValueError('at least one of lhs and rhs must be provided');
  const w: Walker = { lhs, rhs, path: [], out: undefined, inLeaf: false };
  walk(w, atom, rules);
  return w.out;
}

/** The applied configuration merged into the live object: config wins, lists merge by their type. */
export function mergeValues(live: Value, config: Value, atom: Atom): Value {
  return (
    run(live, config, atom, {
      leaf(w) {
        w.out = w.rhs !== undefined ? w.rhs : w.lhs;
      },
    }) ?? null
  );
}

/** The fields that changed between two versions of an object. */
export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/** Compares two versions of an object field by field (smd TypedValue.Compare). */
export function compareValuesTyped(lhs: Value, rhs: Value, atom: Atom): Comparison {
  const c = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  run(lhs, rhs, atom, {
    comparison: c,
    leaf(w) {
      if (w.lhs === undefined) c.added.insert(w.path);
      else if (w.rhs === undefined) c.removed.insert(w.path);
      else if (!equalValues(w.rhs, w.lhs)) c.modified.insert(w.path);
    },
    after(w) {
      if (w.lhs === undefined) c.added.insert(w.path);
      else if (w.rhs === undefined) c.removed.insert(w.path);
    },
  });
  return c;
}

// ---- removal ---------------------------------------------------------------------------

/**
 * The value without the fields in `toRemove` (smd RemoveItems). As in smd, a
 * list or map that ends up with nothing (or is walked while empty) becomes null.
 */
export function removeItems(v: Value, toRemove: FieldSet, atom: Atom): Value {
  const a = deduce(atom, v);
  if (a.map) return removeFromMap(v, a.map, toRemove);
  if (a.scalar) return v;
  if (a.list) return removeFromList(v, a.list, toRemove);
  return null;
}

function removeFromList(v: Value, t: ListType, toRemove: FieldSet): Value {
  const list = asList(v);
  if (!list || list.length === 0 || t.relationship === 'atomic') return null;
  const out: Value[] = [];
  list.forEach((item, i) => {
    const pe = listItemElement(t, i, item, []);
    if (toRemove.hasMember(pe)) return;
    const sub = toRemove.withPrefix(pe);
    out.push(sub.empty() ? item : removeItems(item, sub, t.elementType));
  });
  return out.length > 0 ? out : null;
}

function removeFromMap(v: Value, t: MapType, toRemove: FieldSet): Value {
  const m = asMap(v);
  if (!m || Object.keys(m).length === 0 || t.relationship === 'atomic') return null;
  const out: Record<string, Value> = {};
  for (const [k, val] of Object.entries(m)) {
    const pe = fieldElement(k);
    if (toRemove.hasMember(pe)) continue;
    const sub = toRemove.withPrefix(pe);
    setOwn(out, k, sub.empty() ? val : removeItems(val, sub, fieldType(t, k)));
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** smd's EnsureNamedFieldsAreMembers: a declared struct field with owned children is owned too. */
export function ensureNamedFieldsAreMembers(s: FieldSet, atom: Atom): FieldSet {
  const members = [...s.members];
  const result = new FieldSet(members, []);
  for (const node of s.children) {
    if (node.element.kind === 'field' && atom.map?.fields.has(node.element.name))
      result.insertMember(node.element);
  }
  for (const node of s.children) {
    let childType: Atom = NO_TYPE;
    if (node.element.kind === 'field' && atom.map) childType = fieldType(atom.map, node.element.name);
    else if (node.element.kind === 'key' && atom.list) childType = atom.list.elementType;
    result.children.push({ element: node.element, set: ensureNamedFieldsAreMembers(node.set, childType) });
  }
  return result;
}
