// Whether a value fits its schema, as structured-merge-diff's TypedValue.Validate
// (typed/validate.go, v4.4.2) decides it when apimachinery's structuredmerge.go
// turns an object into a typed value: every error, not the first, because the
// message upstream returns lists them all (ValidationErrors.Error()).
//
// The merge walker (typed.ts) refuses the same faults one at a time and with its
// own `lhs: `/`rhs: ` wording; this walk is what names them as upstream does, so
// the field manager runs it where upstream would (the applied configuration) and
// on a failure of the engine to tell which object did not fit.

import type { Atom, ListType, MapType } from './schema.js';
import {
  elementToString,
  fieldElement,
  indexElement,
  pathToString,
  type Path,
  type PathElement,
} from './path.js';
import { isList, isMap, isScalar, type Value } from './value.js';
import { identityOf, listItemElement, scalarFault, TypedValueError } from './typed.js';

/** One fault: where (smd's path text) and what. */
interface Fault {
  readonly path: string;
  readonly message: string;
}

/** One walk: whether a key may repeat, and the faults found so far. */
interface Walk {
  readonly allowDuplicates: boolean;
  readonly faults: Fault[];
}

/** The faults of `v` against `atom`; a key repeated in a set or list-map is one only without allowDuplicates. */
export function validationFaults(v: Value, atom: Atom, allowDuplicates: boolean): Fault[] {
  const w: Walk = { allowDuplicates, faults: [] };
  visit(w, v, atom, []);
  return w.faults;
}

function add(w: Walk, path: Path, message: string): void {
  w.faults.push({ path: pathToString(path), message });
}

/** smd's ValidationErrors.Error(): one fault alone, several under `errors:`, one per indented line. */
export function faultsMessage(faults: readonly Fault[]): string {
  const one = (f: Fault): string => (f.path ? `${f.path}: ${f.message}` : f.message);
  if (faults.length === 1) return one(faults[0] as Fault);
  return ['errors:', ...faults.map((f) => `  ${one(f)}`)].join('\n');
}

function visit(w: Walk, v: Value, atom: Atom, path: PathElement[]): void {
  // smd's deduceAtom: the member of the atom that fits the value, else the atom as it is.
  const a =
    isScalar(v) && atom.scalar
      ? { scalar: atom.scalar }
      : isList(v) && atom.list
        ? { list: atom.list }
        : isMap(v) && atom.map
          ? { map: atom.map }
          : atom;
  if (a.map) return visitMap(w, v, a.map, path);
  if (a.scalar) {
    const fault = scalarFault(a, v);
    if (fault) add(w, path, fault);
    return;
  }
  if (a.list) return visitList(w, v, a.list, path);
  add(w, path, 'schema error: invalid atom: inlined');
}

function visitList(w: Walk, v: Value, t: ListType, path: PathElement[]): void {
  if (v === null) return;
  // The kind only, never the value (upstream prints it; a value can be a secret).
  if (!isList(v)) return add(w, path, `expected list, got ${isMap(v) ? 'map' : typeof v}`);
  const seen = new Set<string>();
  for (const [i, item] of v.entries()) {
    let pe: PathElement;
    if (t.relationship !== 'associative') pe = indexElement(i);
    else {
      try {
        pe = listItemElement(t, i, item, []);
      } catch (err) {
        if (!(err instanceof TypedValueError)) throw err;
        // smd stops at the first item it cannot name.
        return add(w, path, `element ${i}: ${err.message}`);
      }
      const id = identityOf(pe);
      if (seen.has(id) && !w.allowDuplicates)
        add(w, path, `duplicate entries for key ${elementToString(pe)}`);
      seen.add(id);
    }
    visit(w, item, t.elementType, [...path, pe]);
  }
}

function visitMap(w: Walk, v: Value, t: MapType, path: PathElement[]): void {
  if (v === null) return;
  if (!isMap(v)) return add(w, path, `expected map, got ${isList(v) ? 'list' : typeof v}`);
  for (const [key, val] of Object.entries(v)) {
    const childPath = [...path, fieldElement(key)];
    const declared = t.fields.get(key) ?? t.elementType;
    // smd stops walking the map at its first undeclared field.
    if (!declared) return add(w, childPath, 'field not declared in schema');
    visit(w, val, declared, childPath);
  }
}
