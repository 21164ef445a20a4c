// The merge semantics of a schema, in structured-merge-diff's terms (schema/
// elements.go): every node is a scalar, a list or a map. A list is `atomic`
// (replaced whole, owned as one field) or `associative` (a set of scalars, or a
// map of items keyed by its list-map keys); a map is `separable` (each key its own
// field; structs are maps with declared fields) or `atomic`. A node that says
// nothing (x-kubernetes-preserve-unknown-fields, no type) is smd's "deduced" type:
// whatever the value is, maps granular and lists atomic.
//
// fromOpenAPI() reads the kinds' JSON schemas with the rules kube-openapi's
// schemaconv and the CRD path apply: `x-kubernetes-list-type` (default atomic),
// `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` (default granular).

export type ScalarType = 'string' | 'numeric' | 'boolean' | 'untyped';

export interface ListType {
  readonly elementType: Atom;
  readonly relationship: 'atomic' | 'associative';
  /** List-map keys; empty for a set (associative) or an atomic list. */
  readonly keys: readonly string[];
}

export interface MapType {
  /** Declared fields (a struct); other keys take elementType. */
  readonly fields: ReadonlyMap<string, Atom>;
  readonly elementType: Atom | undefined;
  readonly relationship: 'separable' | 'atomic';
}

/** A node's type: one of scalar, list, map, or several of them for deduced types. */
export interface Atom {
  readonly scalar?: ScalarType;
  readonly list?: ListType;
  readonly map?: MapType;
}

/** smd's `__untyped_atomic_`: any value, replaced whole. */
export const UNTYPED_ATOMIC: Atom = (() => {
  const atom: { scalar: ScalarType; list?: ListType; map?: MapType } = { scalar: 'untyped' };
  atom.list = { elementType: atom, relationship: 'atomic', keys: [] };
  atom.map = { fields: new Map(), elementType: atom, relationship: 'atomic' };
  return atom;
})();

/** smd's `__untyped_deduced_`: any value; maps granular, lists atomic. */
export const DEDUCED: Atom = (() => {
  const atom: { scalar: ScalarType; list?: ListType; map?: MapType } = { scalar: 'untyped' };
  atom.list = { elementType: UNTYPED_ATOMIC, relationship: 'atomic', keys: [] };
  atom.map = { fields: new Map(), elementType: atom, relationship: 'separable' };
  return atom;
})();

/** The empty atom: what a field that the schema does not declare resolves to. */
export const NO_TYPE: Atom = {};

export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

type JSONSchema = Readonly<Record<string, unknown>>;

function isSchema(v: unknown): v is JSONSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function listOf(s: JSONSchema, where: string): ListType {
  const items = s['items'];
  const elementType = isSchema(items) ? fromOpenAPI(items, `${where}[]`) : DEDUCED;
  const listType = s['x-kubernetes-list-type'];
  if (listType === undefined || listType === 'atomic')
    return { elementType, relationship: 'atomic', keys: [] };
  if (listType === 'set') return { elementType, relationship: 'associative', keys: [] };
  if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'];
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string'))
      throw new SchemaError(`${where}: x-kubernetes-list-type map needs x-kubernetes-list-map-keys`);
    return { elementType, relationship: 'associative', keys: keys as string[] };
  }
  throw new SchemaError(`${where}: unknown x-kubernetes-list-type ${JSON.stringify(listType)}`);
}

function mapOf(s: JSONSchema, where: string): MapType {
  const fields = new Map<string, Atom>();
  const props = s['properties'];
  if (isSchema(props)) {
    for (const [name, sub] of Object.entries(props)) {
      if (isSchema(sub)) fields.set(name, fromOpenAPI(sub, `${where}.${name}`));
    }
  }
  const additional = s['additionalProperties'];
  let elementType: Atom | undefined;
  if (isSchema(additional)) elementType = fromOpenAPI(additional, `${where}[*]`);
  else if (additional === true || s['x-kubernetes-preserve-unknown-fields'] === true) elementType = DEDUCED;
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular')
    throw new SchemaError(`${where}: unknown x-kubernetes-map-type ${JSON.stringify(mapType)}`);
  return { fields, elementType, relationship: mapType === 'atomic' ? 'atomic' : 'separable' };
}

/** The merge type of a JSON schema node (`where` names it in errors). */
export function fromOpenAPI(s: JSONSchema, where = ''): Atom {
  if (s['x-kubernetes-int-or-string'] === true) return { scalar: 'untyped' };
  switch (s['type']) {
    case 'object':
      return { map: mapOf(s, where) };
    case 'array':
      return { list: listOf(s, where) };
    case 'string':
      return { scalar: 'string' };
    case 'integer':
    case 'number':
      return { scalar: 'numeric' };
    case 'boolean':
      return { scalar: 'boolean' };
    case undefined:
      return DEDUCED;
    default:
      throw new SchemaError(`${where}: unknown type ${JSON.stringify(s['type'])}`);
  }
}

/** The type of a map's key: its declared field, else the map's element type. */
export function fieldType(m: MapType, name: string): Atom {
  return m.fields.get(name) ?? m.elementType ?? NO_TYPE;
}
