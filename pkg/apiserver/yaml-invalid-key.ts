// The 400 for a YAML map key that is a map or a sequence (`? [a, b]: x`, `? {a: 1}: x`,
// or an alias to an anchored collection), as goyaml.v2 refuses it: decode.go `mapping`
// decodes the key into interface{} and then fails with `invalid map key: %#v` of it,
// wrapped as every goyaml error (`yaml: `). The message keeps upstream's prefix and the
// Go type `%#v` starts with (`[]interface {}` or `map[interface {}]interface {}`), but
// not the key's contents, which upstream prints: `yaml: invalid map key: []interface {}{...}`.
// A deliberate difference (docs/design.md): the key is the body's text, possibly a Global
// Secret's value, and a 400's message lands in the audit log.
//
// Decoding the key comes first, as in goyaml: a collection key inside it is refused
// first (its own type shown), a scalar goyaml cannot decode fails the body with that
// error, and an alias to a collection still being read is goyaml's
// `anchor 'a' value contains itself`. The key is read for those at most READ_BUDGET
// nodes (aliases can make a small key huge); past that the outer key is refused as is.

import { isAlias, isMap, isPair, isScalar, isSeq, type Node as YamlNode } from 'yaml';

import type { AnchorIndex } from './yaml-anchors.js';
import { goScalarOfNode } from './yaml-scalars.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';

const READ_BUDGET = 4096;

/** What goyaml's `%#v` shows in place of the contents. */
const ELIDED = '{...}';

class BudgetSpent extends Error {}

/** Reads a key as goyaml decodes it, for the errors decoding it raises. */
class Reader {
  private budget = READ_BUDGET;
  /** Collections being read: an alias to one of them is an anchor containing itself. */
  private readonly reading = new Set<unknown>();

  constructor(private readonly anchors: AnchorIndex) {}

  /** Reads a node; returns the innermost-first collection key found inside it, if any. */
  read(node: unknown): YamlNode | undefined {
    if (--this.budget < 0) throw new BudgetSpent();
    if (isAlias(node)) {
      const target = this.anchors.target(node);
      if (this.reading.has(target)) throw new YAMLToJSONError(`yaml: anchor '${node.source}' value contains itself`);
      return this.read(target ?? null);
    }
    if (isScalar(node)) {
      const go = goScalarOfNode(node);
      if (go?.type === 'error') throw new YAMLToJSONError(go.message);
      return undefined;
    }
    if (!isMap(node) && !isSeq(node)) return undefined;
    this.reading.add(node);
    try {
      for (const item of node.items as unknown[]) {
        const pair = isPair(item) ? item : undefined;
        if (pair === undefined) {
          const inner = this.read(item);
          if (inner) return inner;
          continue;
        }
        // A key is decoded, then refused if it is a collection: before its value is read.
        const inner = this.read(pair.key);
        if (inner) return inner;
        const key = isAlias(pair.key) ? this.anchors.target(pair.key) : pair.key;
        if (isMap(key) || isSeq(key)) return key;
        const inValue = this.read(pair.value);
        if (inValue) return inValue;
      }
      return undefined;
    } finally {
      this.reading.delete(node);
    }
  }
}

/** `%#v`'s type of a collection key, its contents elided (see the header). */
function shownKey(key: YamlNode): string {
  return `${isSeq(key) ? '[]interface {}' : 'map[interface {}]interface {}'}${ELIDED}`;
}

/** The error goyaml.v2 fails a body with when a map key is a collection. */
export function invalidMapKey(key: YamlNode, anchors: AnchorIndex): YAMLToJSONError {
  let refused = key;
  try {
    refused = new Reader(anchors).read(key) ?? key;
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
  }
  return new YAMLToJSONError(`yaml: invalid map key: ${shownKey(refused)}`);
}
