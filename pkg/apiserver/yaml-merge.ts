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
// The YAML library reads `<<` as an ordinary key (merge keys are YAML 1.1), so copies of
// the merged maps' (expanded) entries are inserted after each merge entry, and the
// merge entry's key is told to add nothing when `toJS` builds the map (`addToJSMap`);
// `toJS` then sets the entries in that order, the last one winning, as goyaml does. The
// merge entry itself stays in the tree: an anchor written inside it (`<<: &base {...}`)
// must still be found by the aliases after it.

import { isAlias, isMap, isScalar, isSeq, Pair, type Document, type Node as YamlNode, type YAMLMap } from 'yaml';

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

/** What a merge entry's own key adds to the map toJS builds: its entries follow it as copies. */
function addNothing(): void {}

function wantMap(): never {
  throw new YAMLToJSONError('yaml: map merge requires map or sequence of maps as the value');
}

/** Where a merged entry was set: the offset of its map's `<<` key, and its rank among that merge's entries. */
export interface MergedAt {
  readonly offset: number;
  readonly rank: number;
}

/** Expands the merge keys of a document's maps, each map once, on demand. */
export class MergeExpander {
  private readonly done = new WeakSet<YAMLMap>();
  private readonly expanding = new Set<YAMLMap>();
  /** The entries each map gained by merging, and where in decoding order goyaml sets them. */
  private readonly merged = new WeakMap<Pair, MergedAt>();
  /** Maps written inline as a merge's value, which goyaml decodes straight into the merging map. */
  private readonly inline = new WeakSet<YAMLMap>();
  private readonly sizes = new WeakMap<YamlNode, number>();
  private copied = 0;

  constructor(private readonly doc: Document) {}

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
   * Replaces the map's merge entries by the entries they merge. `open` holds the maps
   * being decoded around this one: merging one of them is an alias to itself.
   */
  expand(map: YAMLMap, open: ReadonlySet<YamlNode>): void {
    if (this.done.has(map)) return;
    if (!map.items.some((pair) => isMergeKey(pair.key))) {
      this.done.add(map);
      return;
    }
    this.expanding.add(map);
    const items: Pair[] = [];
    for (const pair of map.items) {
      items.push(pair);
      if (!isMergeKey(pair.key) || !isScalar(pair.key)) continue;
      pair.key.addToJSMap = addNothing;
      const value = pair.value as YamlNode | null;
      if (value === null) wantMap();
      const offset = pair.key.range ? pair.key.range[0] : 0;
      let rank = 0;
      for (const source of this.mapsOf(value, open)) {
        this.expand(source, open);
        for (const entry of source.items) {
          // The source's own merge entries set nothing: their entries follow them as copies.
          if (this.isMergeEntry(entry)) continue;
          this.charge(entry);
          const copy = new Pair(entry.key, entry.value);
          this.merged.set(copy, { offset, rank: rank++ });
          items.push(copy);
        }
      }
    }
    map.items = items;
    this.expanding.delete(map);
    this.done.add(map);
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
    const target = alias.resolve(this.doc);
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
