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
//
// That rule alone does not bound the output: an alias to an empty collection counts 0,
// and merged copies are built again where they are merged, so a body of a kilobyte could
// stand for hundreds of megabytes (or a merge chain nest past the stack). So the builder
// also keeps goyaml.v2's own rule (decode.go, `allowedAliasRatio`): it counts every node
// the decoded value holds, an alias as its target's whole expanded size and a merged copy
// that came through an alias as aliased, and refuses a body whose aliased share passes
// goyaml's ratio (0.99 up to 400,000 nodes, falling to 0.10 at 4,000,000). The expansion
// also stops past the depth the body's decoders accept (YAMLDepthError, a 400 "nested
// too deeply").

import { isAlias, isMap, isPair, isScalar, isSeq, type Alias, type Node as YamlNode } from 'yaml';

import { MAX_NESTING_DEPTH } from '../registry/generic/object.js';
import type { AnchorIndex } from './yaml-anchors.js';
import { invalidMapKey } from './yaml-invalid-key.js';
import type { MergeExpander } from './yaml-merge.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';

/** Aliases a YAML document may expand before we call it an attack. Real manifests use a handful. */
export const MAX_YAML_ALIAS_COUNT = 100;

/** goyaml.v2's alias-ratio range (decode.go alias_ratio_range_low / _high). */
const ALIAS_RATIO_RANGE_LOW = 400_000;
const ALIAS_RATIO_RANGE_HIGH = 4_000_000;

/** The share of aliased nodes goyaml.v2 allows in a document of `decodes` nodes. */
function allowedAliasRatio(decodes: number): number {
  if (decodes <= ALIAS_RATIO_RANGE_LOW) return 0.99;
  if (decodes >= ALIAS_RATIO_RANGE_HIGH) return 0.1;
  return 0.99 - 0.89 * ((decodes - ALIAS_RATIO_RANGE_LOW) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW));
}

/** The decoded value would nest deeper than MAX_NESTING_DEPTH (through aliases or merges). */
export class YAMLDepthError extends Error {}

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
  /** Expanded sizes of aliased nodes (and of the nodes inside them), computed once each. */
  private readonly sizes = new Map<unknown, number>();
  /** Nodes the decoded value holds so far, aliases expanded (goyaml's decodeCount). */
  private decodes = 0;
  /** Of them, those reached through an alias or a merge (goyaml's aliasCount). */
  private aliased = 0;
  /** How many merged copies (through an alias) the build is inside. */
  private inCopy = 0;

  constructor(
    private readonly anchors: AnchorIndex,
    private readonly merges: MergeExpander,
  ) {}

  /** The value of a node: recursion follows the tree and merged copies, to MAX_NESTING_DEPTH. */
  build(node: unknown, depth = 0): unknown {
    if (depth > MAX_NESTING_DEPTH) throw new YAMLDepthError();
    if (isAlias(node)) return this.alias(node, depth);
    this.decoded(1, this.inCopy > 0);
    if (isScalar(node)) return node.value ?? null;
    if (isMap(node)) {
      const map: Record<string, unknown> = {};
      this.created(node, map);
      for (const pair of this.merges.entriesOf(node)) {
        if (this.merges.isMergeEntry(pair)) continue;
        const copy = this.merges.isAliasedCopy(pair);
        if (copy) this.inCopy += 1;
        try {
          this.decoded(1, this.inCopy > 0);
          setEntry(map, keyText(pair.key), this.build(pair.value, depth + 1));
        } finally {
          if (copy) this.inCopy -= 1;
        }
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
          setEntry(map, keyText(isAlias(item.key) ? (this.anchors.target(item.key) ?? null) : item.key), this.build(item.value, depth + 2));
          list.push(map);
        } else {
          list.push(this.build(item, depth + 1));
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

  /** Counts nodes of the decoded value and refuses a body past goyaml.v2's alias ratio. */
  private decoded(nodes: number, aliased: boolean): void {
    this.decodes += nodes;
    if (aliased) this.aliased += nodes;
    if (this.aliased > 100 && this.decodes > 1000 && this.aliased / this.decodes > allowedAliasRatio(this.decodes)) {
      throw new YAMLToJSONError('yaml: document contains excessive aliasing');
    }
  }

  /** How many nodes a node stands for in the decoded value, aliases and merges expanded. */
  private expandedSize(node: unknown, depth: number): number {
    if (depth > MAX_NESTING_DEPTH) throw new YAMLDepthError();
    if (isAlias(node)) {
      const target = this.anchors.target(node);
      return target === undefined ? 1 : this.expandedSize(target, depth);
    }
    if (!isMap(node) && !isSeq(node)) return 1;
    const known = this.sizes.get(node);
    if (known !== undefined) return known;
    let size = 1;
    if (isMap(node)) {
      for (const pair of this.merges.entriesOf(node)) {
        if (!this.merges.isMergeEntry(pair)) size += 1 + this.expandedSize(pair.value, depth + 1);
      }
    } else {
      for (const item of node.items) {
        size += isPair(item) ? 2 + this.expandedSize(item.value, depth + 2) : this.expandedSize(item, depth + 1);
      }
    }
    this.sizes.set(node, size);
    return size;
  }

  private alias(alias: Alias, depth: number): unknown {
    const target = this.anchors.target(alias);
    if (target === undefined) {
      throw new ReferenceError(`Unresolved alias (the anchor must be set before the alias): ${alias.source}`);
    }
    // The alias stands for its target's whole value, shared here but copied by goyaml.
    this.decoded(this.expandedSize(target, depth), true);
    let use = this.uses.get(target);
    if (use === undefined) {
      // An anchor not built in place (inside a merge entry's value): built now, as toJS does.
      const value = this.build(target, depth);
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
