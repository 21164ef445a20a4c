// The 400 for a YAML map key that is a map or a sequence (`? [a, b]: x`, `? {a: 1}: x`,
// or an alias to an anchored collection), as goyaml.v2 refuses it: decode.go `mapping`
// decodes the key into interface{} and then fails with `invalid map key: %#v` of it,
// wrapped as every goyaml error (`yaml: `). So the message prints the decoded key the way
// Go's %#v prints a []interface{} or a map[interface{}]interface{}:
// `yaml: invalid map key: []interface {}{"a", "b"}`,
// `yaml: invalid map key: map[interface {}]interface {}{"a":1}`.
// fmt sorts a map's keys; keys of one Go type sort by value, as here, while keys of mixed
// types sort by where their types sit in the binary's memory, which no other program can
// reproduce: those go by type name here. A key that prints past MAX_SHOWN characters
// (aliases can make a small key print huge) is cut there, with ` ...`.

import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node as YamlNode } from 'yaml';

import { goScalarOfNode, goSyntax, type GoScalar } from './yaml-scalars.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';

const MAX_SHOWN = 4096;

/** A decoded key as goyaml.v2 holds it in interface{}. */
type GoValue =
  | { readonly type: 'scalar'; readonly value: GoScalar }
  | { readonly type: 'slice'; readonly items: readonly GoValue[] }
  | { readonly type: 'map'; readonly entries: readonly (readonly [GoScalar, GoValue])[] };

class TooLong extends Error {}

/** A collection key inside a collection key: goyaml refuses the inner one first. */
class InnerInvalidKey extends Error {
  constructor(readonly key: YamlNode) {
    super('invalid map key');
  }
}

/** Reads a node into Go values, stopping once it has read more than the message can show. */
class Reader {
  private budget = MAX_SHOWN;

  constructor(private readonly doc: Document) {}

  read(node: unknown): GoValue {
    if (--this.budget < 0) throw new TooLong();
    if (isAlias(node)) return this.read(node.resolve(this.doc) ?? null);
    if (isMap(node)) {
      // A later entry replaces an earlier one with the same key, as in a Go map.
      const entries = new Map<string, readonly [GoScalar, GoValue]>();
      for (const pair of node.items) {
        const key = this.read(pair.key);
        if (key.type !== 'scalar') throw new InnerInvalidKey(pair.key as YamlNode);
        const k = key.value;
        entries.set(`${k.type} ${goSyntax(k)}`, [k, this.read(pair.value)]);
      }
      return { type: 'map', entries: [...entries.values()] };
    }
    if (isSeq(node)) {
      return {
        type: 'slice',
        items: node.items.map((item) =>
          isPair(item)
            ? { type: 'map' as const, entries: [[this.scalar(item.key), this.read(item.value)] as const] }
            : this.read(item),
        ),
      };
    }
    return { type: 'scalar', value: this.scalar(node) };
  }

  private scalar(node: unknown): GoScalar {
    if (!isScalar(node)) return { type: 'nil' };
    const go = goScalarOfNode(node);
    if (go === undefined) return { type: 'string', text: String(node.value) };
    if (go.type === 'error') throw new YAMLToJSONError(go.message);
    return go;
  }
}

/** Orders a Go map's keys as fmt does for keys of one type; see the header for mixed types. */
function compareKeys(a: GoScalar, b: GoScalar): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  switch (a.type) {
    case 'string':
      return a.text < (b as typeof a).text ? -1 : a.text > (b as typeof a).text ? 1 : 0;
    case 'int':
    case 'uint64': {
      const other = (b as typeof a).value;
      return a.value < other ? -1 : a.value > other ? 1 : 0;
    }
    case 'float64':
      return a.value - (b as typeof a).value;
    case 'bool':
      return Number(a.value) - Number((b as typeof a).value);
    case 'nil':
      return 0;
  }
}

/** `%#v` of a value inside an interface{}. */
function goSharpV(v: GoValue): string {
  switch (v.type) {
    case 'scalar':
      return v.value.type === 'nil' ? 'interface {}(nil)' : goSyntax(v.value);
    case 'slice':
      return `[]interface {}{${v.items.map(goSharpV).join(', ')}}`;
    case 'map': {
      const sorted = [...v.entries].sort(([a], [b]) => compareKeys(a, b));
      const shown = sorted.map(([k, value]) => `${k.type === 'nil' ? 'interface {}(nil)' : goSyntax(k)}:${goSharpV(value)}`);
      return `map[interface {}]interface {}{${shown.join(', ')}}`;
    }
  }
}

/** The error goyaml.v2 fails a body with when a map key is a collection. */
export function invalidMapKey(key: YamlNode, doc: Document): YAMLToJSONError {
  let shown: string;
  try {
    shown = goSharpV(new Reader(doc).read(key));
  } catch (err) {
    if (err instanceof InnerInvalidKey) return invalidMapKey(err.key, doc);
    if (!(err instanceof TooLong)) throw err;
    shown = '';
  }
  if (shown === '' || shown.length > MAX_SHOWN) shown = `${shown.slice(0, MAX_SHOWN)} ...`;
  return new YAMLToJSONError(`yaml: invalid map key: ${shown}`);
}
