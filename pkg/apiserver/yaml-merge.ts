// YAML merge keys (`<<: *anchor`, `<<: [*a, *b]`, `<<: {k: v}`) as goyaml.v2 decodes
// them into the map[interface{}]interface{} that sigs.k8s.io/yaml's YAMLToJSON reads.
//
// goyaml.v2's decoder (decode.go `mapping`, `merge`, `isMerge`) has no notion of
// "explicit keys win": at the entry whose key is a plain `<<` (or any `<<` tagged
// `!!merge`) it decodes the merged map(s) into the map being built, right there, as if
// their entries were written at that point. An entry after the merge overwrites a merged
// one; a merged one overwrites an entry before it. A sequence is merged from its last
// map to its first, so the first map's entries are set last and win. In strict mode
// (YAMLToJSONStrict, fieldValidation=Strict) every entry set over another is a
// duplicate, merged or not: `line N: key "x" already set in map`, N being the line of
// the value set the second time (for a merged entry, its line in the merged map).
// Anything but a map, an alias to a map, or a sequence of those fails the body:
// `yaml: map merge requires map or sequence of maps as the value`.
//
// The YAML library reads `<<` as an ordinary key (merge keys are YAML 1.1), and the tree
// is left as parsed: each map's entries in goyaml's decoding order (its own, with copies
// of the merged maps' expanded entries after each merge entry) are kept in a side table,
// which the walk and the builder of the decoded value read (`entriesOf`). Putting the
// copies into the tree would make an anchor inside a merged map reappear after a later
// redefinition of its name, and later aliases would name the wrong node. A chain of
// merges (`a2: &a2 {<<: *a1}`, ...) is expanded with an explicit stack: no body can
// exhaust it.

import { isAlias, isMap, isScalar, isSeq, Pair, type Node as YamlNode, type YAMLMap } from 'yaml';

import type { AnchorIndex } from './yaml-anchors.js';
import { YAMLToJSONError } from './yaml-to-json-error.js';

const MERGE_TAG = 'tag:yaml.org,2002:merge';

/**
 * Copies of merged entries (key and value nodes) a document may hold in all. Each copy's
 * value is built again by toJS, so merges of merges could multiply a small document into
 * a huge object: past this many, the body is refused in goyaml's words for the same
 * attack through aliases.
 */
const MAX_MERGED_NODES = 100_000;

/** goyaml.v2's `isMerge`: a plain untagged `<<`, or `<<` of any style tagged !!merge. */
export function isMergeKey(key: unknown): boolean {
  if (!isScalar(key) || key.value !== '<<') return false;
  return key.tag === MERGE_TAG || (key.tag === undefined && key.type === 'PLAIN');
}

function wantMap(): never {
  throw new YAMLToJSONError('yaml: map merge requires map or sequence of maps as the value');
}

/** Where a merged entry was set: the offset of its map's `<<` key, and its rank among that merge's entries. */
export interface MergedAt {
  readonly offset: number;
  readonly rank: number;
}

/** A map's merge entries with the maps each one merges, in the order goyaml.v2 sets them. */
type MergePlan = readonly { readonly offset: number; readonly sources: readonly YAMLMap[] }[];

/** Expands the merge keys of a document's maps, each map once, on demand. */
export class MergeExpander {
  /** Each expanded map's entries in decoding order (a map without merge keys: its own items). */
  private readonly entries = new WeakMap<YAMLMap, readonly Pair[]>();
  /** Maps on the expansion stack: merging one of them again is an alias to itself. */
  private readonly expanding = new Set<YAMLMap>();
  /** The entries each map gained by merging, and where in decoding order goyaml sets them. */
  private readonly merged = new WeakMap<Pair, MergedAt>();
  /** Maps written inline as a merge's value, which goyaml decodes straight into the merging map. */
  private readonly inline = new WeakSet<YAMLMap>();
  /** Merged copies that came through an alias (see isAliasedCopy). */
  private readonly aliasedCopies = new WeakSet<Pair>();
  private readonly sizes = new WeakMap<YamlNode, number>();
  private copied = 0;

  constructor(private readonly anchors: AnchorIndex) {}

  /** Where a merged entry sits in decoding order, or undefined for an entry written in its map. */
  mergedAt(pair: Pair): MergedAt | undefined {
    return this.merged.get(pair);
  }

  /** Whether a map is written inline as a merge's value (so never decoded on its own). */
  isInlineSource(map: YAMLMap): boolean {
    return this.inline.has(map);
  }

  /** Whether an entry of an expanded map is a merge entry (`<<`), which sets nothing itself. */
  isMergeEntry(pair: Pair): boolean {
    return isMergeKey(pair.key) && !this.merged.has(pair);
  }

  /**
   * Whether an entry is a merged copy that came through an alias (directly, or as a copy
   * of such a copy): goyaml.v2 decodes those as aliased nodes, and an inline map's once.
   */
  isAliasedCopy(pair: Pair): boolean {
    return this.aliasedCopies.has(pair);
  }

  /** A map's entries in decoding order: its own items until `expand` has run on it. */
  entriesOf(map: YAMLMap): readonly Pair[] {
    return this.entries.get(map) ?? map.items;
  }

  /**
   * Expands the map's merge entries into the entries they merge (see `entriesOf`),
   * merged maps first. `open` holds the maps being decoded around this one: merging
   * one of them is an alias to itself.
   */
  expand(map: YAMLMap, open: ReadonlySet<YamlNode>): void {
    if (this.entries.has(map)) return;
    const plans = new Map<YAMLMap, MergePlan>();
    const stack: YAMLMap[] = [map];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as YAMLMap;
      if (this.entries.has(top)) {
        stack.pop();
        continue;
      }
      this.expanding.add(top);
      let plan = plans.get(top);
      if (plan === undefined) {
        plan = this.planOf(top, open);
        plans.set(top, plan);
      }
      // Every source not yet expanded goes on the stack at once: the map's plan is then
      // scanned twice in all, however many maps it merges.
      let waiting = false;
      for (const step of plan) {
        for (const source of step.sources) {
          if (this.entries.has(source)) continue;
          stack.push(source);
          waiting = true;
        }
      }
      if (waiting) continue;
      this.entries.set(top, this.combine(top, plan));
      this.expanding.delete(top);
      plans.delete(top);
      stack.pop();
    }
  }

  /** The maps each merge entry of a map merges (none for a map without merge keys). */
  private planOf(map: YAMLMap, open: ReadonlySet<YamlNode>): MergePlan {
    const plan: { offset: number; sources: YAMLMap[] }[] = [];
    for (const pair of map.items) {
      if (!isMergeKey(pair.key) || !isScalar(pair.key)) continue;
      const value = pair.value as YamlNode | null;
      if (value === null) wantMap();
      plan.push({ offset: pair.key.range ? pair.key.range[0] : 0, sources: this.mapsOf(value, open) });
    }
    return plan;
  }

  /** A map's entries with each merge entry followed by copies of its (expanded) sources' entries. */
  private combine(map: YAMLMap, plan: MergePlan): readonly Pair[] {
    if (plan.length === 0) return map.items;
    const items: Pair[] = [];
    let step = 0;
    for (const pair of map.items) {
      items.push(pair);
      if (!isMergeKey(pair.key) || !isScalar(pair.key)) continue;
      const { offset, sources } = plan[step++] as MergePlan[number];
      let rank = 0;
      for (const source of sources) {
        for (const entry of this.entriesOf(source)) {
          // The source's own merge entries set nothing: their entries follow them as copies.
          if (this.isMergeEntry(entry)) continue;
          this.charge(entry);
          const copy = new Pair(entry.key, entry.value);
          this.merged.set(copy, { offset, rank: rank++ });
          if (!this.inline.has(source) || this.aliasedCopies.has(entry)) this.aliasedCopies.add(copy);
          items.push(copy);
        }
      }
    }
    return items;
  }
  /** The maps a merge entry's value names, in the order goyaml.v2 sets them (a sequence backwards). */
  private mapsOf(value: YamlNode, open: ReadonlySet<YamlNode>): YAMLMap[] {
    if (isMap(value)) {
      this.inline.add(value);
      return [value];
    }
    if (isAlias(value)) return [this.target(value, open)];
    if (!isSeq(value)) wantMap();
    const maps: YAMLMap[] = [];
    for (const item of value.items) {
      if (isMap(item)) {
        this.inline.add(item);
        maps.push(item);
      } else if (isAlias(item)) maps.push(this.target(item, open));
      else wantMap();
    }
    return maps.reverse();
  }

  /** The map an alias in a merge names; an anchor still being decoded would contain itself. */
  private target(alias: YamlNode, open: ReadonlySet<YamlNode>): YAMLMap {
    if (!isAlias(alias)) wantMap();
    const target = this.anchors.target(alias);
    if (target && (open.has(target) || (isMap(target) && this.expanding.has(target))))
      throw new YAMLToJSONError(`yaml: anchor '${alias.source}' value contains itself`);
    if (!isMap(target)) wantMap();
    return target;
  }

  /** Counts a merged entry's nodes against MAX_MERGED_NODES. */
  private charge(entry: Pair): void {
    this.copied += 1 + this.size(entry.key as YamlNode | null) + this.size(entry.value as YamlNode | null);
    if (this.copied > MAX_MERGED_NODES) throw new YAMLToJSONError('yaml: document contains excessive aliasing');
  }

  /** Nodes in a subtree (an alias counts one), remembered per node. */
  private size(node: YamlNode | null): number {
    if (node === null || !(isMap(node) || isSeq(node))) return 1;
    const known = this.sizes.get(node);
    if (known !== undefined) return known;
    let total = 1;
    for (const item of node.items as unknown[]) {
      if (item instanceof Pair) total += this.size(item.key as YamlNode | null) + this.size(item.value as YamlNode | null);
      else total += this.size(item as YamlNode | null);
    }
    this.sizes.set(node, total);
    return total;
  }
}
