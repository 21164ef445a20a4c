// Field paths (structured-merge-diff fieldpath/element.go, path.go, serialize-pe.go):
// a path is a list of elements, each a field name, the key of a list-map item,
// the value of a set item, or the index of a positional list item. Elements sort
// field < key < value < index, and print as `.spec`, `[type="Ready"]`, `[="a"]`,
// `[3]`; in FieldsV1 they are `f:spec`, `k:{"type":"Ready"}`, `v:"a"`, `i:3`.

import {
  compareStrings,
  compareValues,
  equalValues,
  goJSON,
  goJSONString,
  valueToString,
  type Value,
} from './value.js';

/** One key field of a list-map item; a key's fields are kept sorted by name. */
export interface KeyField {
  readonly name: string;
  readonly value: Value;
}

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly KeyField[] }
  | { readonly kind: 'value'; readonly value: Value }
  | { readonly kind: 'index'; readonly index: number };

export type Path = readonly PathElement[];

export function fieldElement(name: string): PathElement {
  return { kind: 'field', name };
}

/** A list-map item's key, its fields sorted by name as smd sorts them. */
export function keyElement(fields: readonly KeyField[]): PathElement {
  return { kind: 'key', fields: [...fields].sort((a, b) => compareStrings(a.name, b.name)) };
}

export function valueElement(value: Value): PathElement {
  return { kind: 'value', value };
}

export function indexElement(index: number): PathElement {
  return { kind: 'index', index };
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

function compareKeys(a: readonly KeyField[], b: readonly KeyField[]): number {
  for (let i = 0; ; i++) {
    const fa = a[i];
    const fb = b[i];
    if (!fa && !fb) return 0;
    if (!fa) return -1;
    if (!fb) return 1;
    const c = compareStrings(fa.name, fb.name);
    if (c !== 0) return c;
    const v = compareValues(fa.value, fb.value);
    if (v !== 0) return v;
  }
}

/** smd's element order: field names first, then keys, values, indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] < KIND_ORDER[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key':
      return compareKeys(a.fields, (b as typeof a).fields);
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index': {
      const bi = (b as typeof a).index;
      return a.index < bi ? -1 : a.index > bi ? 1 : 0;
    }
  }
}

export function equalElements(a: PathElement, b: PathElement): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'field':
      return a.name === (b as typeof a).name;
    case 'key': {
      const bf = (b as typeof a).fields;
      return (
        a.fields.length === bf.length &&
        a.fields.every((f, i) => f.name === bf[i]?.name && equalValues(f.value, bf[i].value))
      );
    }
    case 'value':
      return equalValues(a.value, (b as typeof a).value);
    case 'index':
      return a.index === (b as typeof a).index;
  }
}

/** An element as it appears in a path string: `.name`, `[k=v,...]`, `[=v]`, `[i]`. */
export function elementToString(e: PathElement): string {
  switch (e.kind) {
    case 'field':
      return '.' + e.name;
    case 'key':
      return '[' + e.fields.map((f) => `${f.name}=${valueToString(f.value)}`).join(',') + ']';
    case 'value':
      return `[=${valueToString(e.value)}]`;
    case 'index':
      return `[${e.index}]`;
  }
}

/** A path as smd prints it in conflicts: `.spec.access[name="a"].verbs`. */
export function pathToString(p: Path): string {
  return p.map(elementToString).join('');
}

/** The FieldsV1 key of an element: `f:<name>`, `k:{...}`, `v:<json>`, `i:<n>`. */
export function serializeElement(e: PathElement): string {
  switch (e.kind) {
    case 'field':
      // smd writes the name raw, unescaped.
      return 'f:' + e.name;
    case 'key':
      return 'k:{' + e.fields.map((f) => `${goJSONString(f.name)}:${goJSON(f.value)}`).join(',') + '}';
    case 'value':
      return 'v:' + goJSON(e.value);
    case 'index':
      return 'i:' + String(e.index);
  }
}

/** Thrown for a FieldsV1 key this engine cannot read; `unknownType` keys are skipped, as smd does. */
export class PathElementError extends Error {
  override readonly name = 'PathElementError';
  constructor(
    message: string,
    readonly unknownType = false,
  ) {
    super(message);
  }
}

function parseJSON(text: string, key: string): Value {
  try {
    return JSON.parse(text) as Value;
  } catch {
    throw new PathElementError(`invalid JSON in managed fields key ${JSON.stringify(key)}`);
  }
}

/** Reads a FieldsV1 key back into an element (smd DeserializePathElement). */
export function deserializeElement(s: string): PathElement {
  if (s.length < 2) throw new PathElementError('key must be 2 characters long');
  if (s[1] !== ':') throw new PathElementError(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldElement(rest);
    case 'v':
      return valueElement(parseJSON(rest, s));
    case 'k': {
      const obj = parseJSON(rest, s);
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
        throw new PathElementError(`key element is not an object: ${s}`);
      return keyElement(Object.entries(obj).map(([name, value]) => ({ name, value: value as Value })));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest)) throw new PathElementError(`invalid index in ${s}`);
      return indexElement(Number(rest));
    }
    default:
      throw new PathElementError('unknown path element type', true);
  }
}
