// The JavaScript value of a checked YAML document (body.ts `checkYAMLTree` has already
// written each scalar's JSON value and each key's JSON text into the tree), built as the
// YAML library's `toJS` builds it, with three differences that keep decoding linear in
// the body plus its output: an alias is looked up in the AnchorIndex instead of walking
// the document; a map's entries are read from the MergeExpander's side table (merged
// entries included, in goyaml.v2's order) instead of the tree; and the alias count is
// kept per anchor here. An alias's value is its anchor's (one object, as `toJS` gives
// it); a merged entry's value is built again where it is merged (the expander caps how
// many nodes that copies).
//
// The cap on aliases is the YAML library's `maxAliasCount` rule, kept as it was: each
// anchored node counts how often it has been built or aliased, times the most aliases
// any one of its leaves stands for (1 for a scalar, 0 for an empty collection), and past
// MAX_YAML_ALIAS_COUNT the body is refused as goyaml refuses excessive aliasing.

import { isAlias, isMap, isPair, isScalar, isSeq, type Alias, type Node as YamlNode } from 'yaml';

import type { AnchorIndex } from './yaml-anchors.js';
import { invalidMapKey } from './yaml-invalid-key.js';
import type { MergeExpander } from './yaml-merge.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';

/** Aliases a YAML document may expand before we call it an attack. Real manifests use a handful. */
export const MAX_YAML_ALIAS_COUNT = 100;

interface AnchorUse {
  /** Times the anchored node was built or aliased. */
  count: number;
  /** The most aliases one of its leaves stands for; undefined until first aliased. */
  aliasCount: number | undefined;
  /** Its value, as last built. */
  value: unknown;
}

export class YAMLValueBuilder {
  private readonly uses = new Map<YamlNode, AnchorUse>();

  constructor(
    private readonly anchors: AnchorIndex,
    private readonly merges: MergeExpander,
  ) {}

  /** The value of a node: recursion follows the tree, whose depth the walk has bounded. */
  build(node: unknown): unknown {
    if (isAlias(node)) return this.alias(node);
    if (isScalar(node)) return node.value ?? null;
    if (isMap(node)) {
      const map: Record<string, unknown> = {};
      this.created(node, map);
      for (const pair of this.merges.entriesOf(node)) {
        if (this.merges.isMergeEntry(pair)) continue;
        setEntry(map, keyText(pair.key), this.build(pair.value));
      }
      return map;
    }
    if (isSeq(node)) {
      const list: unknown[] = [];
      this.created(node, list);
      for (const item of node.items) {
        if (isPair(item)) {
          // `[a: b]`: a one-entry map inside the sequence.
          if (item.key !== null && !isScalar(item.key) && !isAlias(item.key)) throw invalidMapKey(item.key as YamlNode, this.anchors);
          const map: Record<string, unknown> = {};
          setEntry(map, keyText(isAlias(item.key) ? (this.anchors.target(item.key) ?? null) : item.key), this.build(item.value));
          list.push(map);
        } else {
          list.push(this.build(item));
        }
      }
      return list;
    }
    return null;
  }

  /** Records the value of an anchored node as soon as it exists (an alias inside it would name it). */
  private created(node: YamlNode, value: unknown): void {
    if (node.anchor !== undefined) this.uses.set(node, { count: 1, aliasCount: undefined, value });
  }

  private alias(alias: Alias): unknown {
    const target = this.anchors.target(alias);
    if (target === undefined) {
      throw new ReferenceError(`Unresolved alias (the anchor must be set before the alias): ${alias.source}`);
    }
    let use = this.uses.get(target);
    if (use === undefined) {
      // An anchor not built in place (inside a merge entry's value): built now, as toJS does.
      const value = this.build(target);
      use = this.uses.get(target) ?? { count: 1, aliasCount: undefined, value };
      use.value = value;
      this.uses.set(target, use);
    }
    use.count += 1;
    // Once known it stays: a leaf's count times 0 stays 0, and a scalar counts 1.
    use.aliasCount ??= this.aliasCountOf(target);
    if (use.count * use.aliasCount > MAX_YAML_ALIAS_COUNT) {
      throw new YAMLToJSONError('yaml: document contains excessive aliasing');
    }
    return use.value;
  }

  /** The most aliases one leaf of a node stands for (the YAML library's `getAliasCount`). */
  private aliasCountOf(node: unknown): number {
    if (isAlias(node)) {
      const target = this.anchors.target(node);
      const use = target && this.uses.get(target);
      return use ? use.count * (use.aliasCount ?? 0) : 0;
    }
    if (isPair(node)) return Math.max(this.aliasCountOf(node.key), this.aliasCountOf(node.value));
    if (isMap(node) || isSeq(node)) {
      let most = 0;
      const items: readonly unknown[] = isMap(node) ? this.merges.entriesOf(node) : node.items;
      for (const item of items) most = Math.max(most, this.aliasCountOf(item));
      return most;
    }
    return 1;
  }
}

/** The JSON key of a checked key node (the walk wrote its text into it); null gives "". */
function keyText(key: unknown): string {
  const value: unknown = isScalar(key) ? key.value : null;
  if (value === null || value === undefined) return '';
  return String(value);
}

/** Sets an entry as the YAML library does: `__proto__` and inherited names become own properties. */
function setEntry(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key in map) Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}
