// node dist/hack/bench/heap-snapshot-summary.js <base.heapsnapshot> <with.heapsnapshot> [--per N] [--top N]
//                                              [--layers Class=layer,Class=layer,...]
//
// Compares two V8 heap snapshots (v8.writeHeapSnapshot, or DevTools' Memory tab) of one
// process, taken before and after it took on N of something (idle watches, cached
// objects), and prints what each one costs, divided by --per:
//   - by class: the count and shallow (self) size of each constructor's instances, as
//     DevTools' Comparison view shows them; closures as `name()`, V8's internal kinds
//     as `(type) name` (e.g. `(hidden) system / Context`, a closure's captured scope);
//   - by layer: every object is charged to its nearest owner in the dominator tree (the
//     nearest object that every path from the GC roots to it passes through) whose class
//     is named in --layers; what no such owner dominates is `(shared)`, because it is
//     reachable along two independent paths (a socket's listener and a set of watches,
//     say), and is broken down by class. Ownership partitions the heap, so the layers
//     add up to the whole difference, unlike retained sizes of nested owners.
// The dominator tree follows DevTools' rules: weak edges do not retain, shortcut edges
// only from the root. Other scripts import summariseHeapSnapshot / compareHeapSummaries.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The parts of a .heapsnapshot this reads (see `snapshot.meta` in the file). */
export interface HeapSnapshotJson {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly unknown[];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly unknown[];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

export interface ClassTotals {
  count: number;
  selfSize: number;
}

export interface HeapSummary {
  readonly nodeCount: number;
  readonly totalSelfSize: number;
  /** Count and shallow size by class. */
  readonly byClass: ReadonlyMap<string, ClassTotals>;
  /** Shallow size by owning layer (`(shared)` for objects no layer owner dominates). */
  readonly byLayer: ReadonlyMap<string, number>;
  /** Of `(shared)`, count and shallow size by class. */
  readonly sharedByClass: ReadonlyMap<string, ClassTotals>;
  /** Count and retained size (dominator tree) of the instances of each layer-owner class. */
  readonly ownerRetained: ReadonlyMap<string, ClassTotals>;
  /**
   * What each owner holds, by where: `Owner.edge.edge : Class` along the dominator tree
   * (`~` where the dominator holds the object only through others), `pathDepth` deep.
   */
  readonly ownedByPath: ReadonlyMap<string, ClassTotals>;
}

export const SHARED = '(shared)';

/** The class DevTools would list an object under; strings and numbers as one class each. */
function classOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return `${name || '(anonymous)'}()`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'number':
      return '(number)';
    default:
      return `(${type}) ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
  }
}

function bump(map: Map<string, ClassTotals>, key: string, size: number): void {
  const t = map.get(key);
  if (t) {
    t.count++;
    t.selfSize += size;
  } else map.set(key, { count: 1, selfSize: size });
}

/**
 * Immediate dominators by Lengauer-Tarjan (the simple version, path compression only),
 * over the nodes reachable from node 0 along essential edges. Returns, in DFS order,
 * each reached node's index (`order`), and each reached node's dominator as a DFS
 * number (`idom`, indexed by DFS number; the root's is 0, itself).
 */
function dominators(
  nodeCount: number,
  firstEdge: Uint32Array,
  edgeTarget: Uint32Array,
  essential: Uint8Array,
): { order: Uint32Array; idom: Uint32Array; reached: number } {
  // DFS numbers start at 1; 0 means "not reached" / "none".
  const dfn = new Uint32Array(nodeCount);
  const order = new Uint32Array(nodeCount + 1);
  const parent = new Uint32Array(nodeCount + 1);
  let n = 0;
  const stackNode = new Uint32Array(nodeCount);
  const stackEdge = new Uint32Array(nodeCount);
  let sp = 0;
  dfn[0] = ++n;
  order[n] = 0;
  stackNode[sp] = 0;
  stackEdge[sp++] = firstEdge[0] ?? 0;
  while (sp > 0) {
    const v = stackNode[sp - 1] as number;
    const e = stackEdge[sp - 1] as number;
    if (e >= (firstEdge[v + 1] as number)) {
      sp--;
      continue;
    }
    stackEdge[sp - 1] = e + 1;
    if (!essential[e]) continue;
    const w = edgeTarget[e] as number;
    if (dfn[w] !== 0) continue;
    dfn[w] = ++n;
    order[n] = w;
    parent[n] = dfn[v] as number;
    stackNode[sp] = w;
    stackEdge[sp++] = firstEdge[w] as number;
  }
  // Predecessors of each reached node, by DFS number (a CSR of the reversed essential edges).
  const predStart = new Uint32Array(n + 2);
  for (let v = 0; v < nodeCount; v++) {
    if (dfn[v] === 0) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e++) {
      if (essential[e] && dfn[edgeTarget[e] as number] !== 0) {
        predStart[(dfn[edgeTarget[e] as number] as number) + 1]!++;
      }
    }
  }
  for (let i = 1; i <= n + 1; i++) predStart[i]! += predStart[i - 1] as number;
  const preds = new Uint32Array(predStart[n + 1] as number);
  const fill = predStart.slice();
  for (let v = 0; v < nodeCount; v++) {
    const dv = dfn[v] as number;
    if (dv === 0) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e++) {
      const dw = dfn[edgeTarget[e] as number] as number;
      if (essential[e] && dw !== 0) preds[fill[dw]!++] = dv;
    }
  }

  const semi = new Uint32Array(n + 1);
  const label = new Uint32Array(n + 1);
  const ancestor = new Uint32Array(n + 1);
  const idom = new Uint32Array(n + 1);
  const bucketHead = new Uint32Array(n + 1);
  const bucketNext = new Uint32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    semi[i] = i;
    label[i] = i;
  }
  const compressStack: number[] = [];
  const evaluate = (v: number): number => {
    if (ancestor[v] === 0) return v;
    let u = v;
    while (ancestor[ancestor[u] as number] !== 0) {
      compressStack.push(u);
      u = ancestor[u] as number;
    }
    while (compressStack.length > 0) {
      const x = compressStack.pop() as number;
      const a = ancestor[x] as number;
      if ((semi[label[a] as number] as number) < (semi[label[x] as number] as number))
        label[x] = label[a] as number;
      ancestor[x] = ancestor[a] as number;
    }
    return label[v] as number;
  };
  for (let w = n; w >= 2; w--) {
    for (let p = predStart[w] as number; p < (predStart[w + 1] as number); p++) {
      const u = evaluate(preds[p] as number);
      if ((semi[u] as number) < (semi[w] as number)) semi[w] = semi[u] as number;
    }
    const s = semi[w] as number;
    bucketNext[w] = bucketHead[s] as number;
    bucketHead[s] = w;
    const pw = parent[w] as number;
    ancestor[w] = pw;
    for (let v = bucketHead[pw] as number; v !== 0; v = bucketNext[v] as number) {
      const u = evaluate(v);
      idom[v] = (semi[u] as number) < (semi[v] as number) ? u : pw;
    }
    bucketHead[pw] = 0;
  }
  for (let w = 2; w <= n; w++) {
    if (idom[w] !== semi[w]) idom[w] = idom[idom[w] as number] as number;
  }
  idom[1] = 1;
  return { order, idom, reached: n };
}

/**
 * Summarises one snapshot. `layers` maps owner classes (as classOf names them: a
 * constructor name, or `name()` for a closure) to the layer they stand for.
 */
export function summariseHeapSnapshot(
  snap: HeapSnapshotJson,
  layers: ReadonlyMap<string, string> = new Map(),
  pathDepth = 3,
): HeapSummary {
  const meta = snap.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const typeAt = meta.node_fields.indexOf('type');
  const nameAt = meta.node_fields.indexOf('name');
  const sizeAt = meta.node_fields.indexOf('self_size');
  const edgeCountAt = meta.node_fields.indexOf('edge_count');
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const edgeToAt = meta.edge_fields.indexOf('to_node');
  const edgeNameAt = meta.edge_fields.indexOf('name_or_index');
  const nodeTypes = meta.node_types[typeAt] as readonly string[];
  const edgeTypes = meta.edge_types[edgeTypeAt] as readonly string[];
  const weak = edgeTypes.indexOf('weak');
  const element = edgeTypes.indexOf('element');
  const hidden = edgeTypes.indexOf('hidden');
  const shortcut = edgeTypes.indexOf('shortcut');
  const { nodes, edges, strings } = snap;
  const nodeCount = nodes.length / nodeFieldCount;
  const edgeCount = edges.length / edgeFieldCount;

  const firstEdge = new Uint32Array(nodeCount + 1);
  const edgeTarget = new Uint32Array(edgeCount);
  const essential = new Uint8Array(edgeCount);
  let e = 0;
  for (let v = 0; v < nodeCount; v++) {
    firstEdge[v] = e;
    const count = nodes[v * nodeFieldCount + edgeCountAt] as number;
    for (let i = 0; i < count; i++, e++) {
      const type = edges[e * edgeFieldCount + edgeTypeAt] as number;
      edgeTarget[e] = (edges[e * edgeFieldCount + edgeToAt] as number) / nodeFieldCount;
      essential[e] = type !== weak && (type !== shortcut || v === 0) ? 1 : 0;
    }
  }
  firstEdge[nodeCount] = e;

  const classNames = new Array<string>(nodeCount);
  const selfSize = new Float64Array(nodeCount);
  const byClass = new Map<string, ClassTotals>();
  let totalSelfSize = 0;
  for (let v = 0; v < nodeCount; v++) {
    const base = v * nodeFieldCount;
    const cls = classOf(
      nodeTypes[nodes[base + typeAt] as number] ?? 'unknown',
      strings[nodes[base + nameAt] as number] ?? '',
    );
    const size = nodes[base + sizeAt] as number;
    classNames[v] = cls;
    selfSize[v] = size;
    totalSelfSize += size;
    bump(byClass, cls, size);
  }

  /** The name of the edge from `from` to `to`, or `~` when there is none (held through others). */
  const edgeName = (from: number, to: number): string => {
    for (let i = firstEdge[from] as number; i < (firstEdge[from + 1] as number); i++) {
      if (edgeTarget[i] !== to) continue;
      const type = edges[i * edgeFieldCount + edgeTypeAt] as number;
      const name = edges[i * edgeFieldCount + edgeNameAt] as number;
      return type === element || type === hidden ? `[${name}]` : (strings[name] ?? '?');
    }
    return '~';
  };

  const { order, idom, reached } = dominators(nodeCount, firstEdge, edgeTarget, essential);
  // Owners top down (a dominator always has the smaller DFS number), retained sizes bottom up.
  const layerOf = new Array<string>(reached + 1);
  const pathOf = new Array<string | undefined>(reached + 1);
  const depthOf = new Uint8Array(reached + 1);
  layerOf[1] = layers.get(classNames[0] as string) ?? SHARED;
  for (let w = 2; w <= reached; w++) {
    const v = order[w] as number;
    const cls = classNames[v] as string;
    const own = layers.get(cls);
    const d = idom[w] as number;
    layerOf[w] = own ?? (layerOf[d] as string);
    if (own !== undefined) {
      pathOf[w] = cls;
    } else if (pathOf[d] !== undefined) {
      const deep = (depthOf[d] as number) >= pathDepth;
      pathOf[w] = deep ? pathOf[d] : `${pathOf[d] as string}.${edgeName(order[d] as number, v)}`;
      depthOf[w] = deep ? (depthOf[d] as number) : (depthOf[d] as number) + 1;
    }
  }
  const retained = new Float64Array(reached + 1);
  for (let w = reached; w >= 1; w--) {
    retained[w]! += selfSize[order[w] as number] as number;
    if (w > 1) retained[idom[w] as number]! += retained[w] as number;
  }
  const byLayer = new Map<string, number>();
  const sharedByClass = new Map<string, ClassTotals>();
  const ownerRetained = new Map<string, ClassTotals>();
  const ownedByPath = new Map<string, ClassTotals>();
  for (let w = 1; w <= reached; w++) {
    const v = order[w] as number;
    const layer = layerOf[w] as string;
    const path = pathOf[w];
    if (path !== undefined) bump(ownedByPath, `${path} : ${classNames[v] as string}`, selfSize[v] as number);
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + (selfSize[v] as number));
    if (layer === SHARED) bump(sharedByClass, classNames[v] as string, selfSize[v] as number);
    const cls = classNames[v] as string;
    if (layers.has(cls)) bump(ownerRetained, cls, retained[w] as number);
  }
  return { nodeCount, totalSelfSize, byClass, byLayer, sharedByClass, ownerRetained, ownedByPath };
}

export interface ClassDelta {
  readonly name: string;
  /** Instances added, per unit. */
  readonly count: number;
  /** Bytes added, per unit. */
  readonly size: number;
}

export interface HeapComparison {
  readonly per: number;
  /** Self size added, per unit (everything, including what the units share). */
  readonly totalPer: number;
  readonly byClass: readonly ClassDelta[];
  readonly byLayer: readonly ClassDelta[];
  readonly sharedByClass: readonly ClassDelta[];
  /** Retained size of the layer owners' instances, after minus before, per unit. */
  readonly ownerRetained: readonly ClassDelta[];
  /** What the owners hold, by path and class (see HeapSummary.ownedByPath). */
  readonly ownedByPath: readonly ClassDelta[];
}

function deltas(
  before: ReadonlyMap<string, ClassTotals>,
  after: ReadonlyMap<string, ClassTotals>,
  per: number,
): ClassDelta[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  const out: ClassDelta[] = [];
  for (const name of names) {
    const a = before.get(name) ?? { count: 0, selfSize: 0 };
    const b = after.get(name) ?? { count: 0, selfSize: 0 };
    if (a.count === b.count && a.selfSize === b.selfSize) continue;
    out.push({ name, count: (b.count - a.count) / per, size: (b.selfSize - a.selfSize) / per });
  }
  return out.sort((x, y) => y.size - x.size || x.name.localeCompare(y.name));
}

const asTotals = (m: ReadonlyMap<string, number>): Map<string, ClassTotals> =>
  new Map([...m].map(([k, v]) => [k, { count: 0, selfSize: v }]));

/** What `after` holds beyond `before`, divided by `per` (the units it took on). */
export function compareHeapSummaries(before: HeapSummary, after: HeapSummary, per: number): HeapComparison {
  return {
    per,
    totalPer: (after.totalSelfSize - before.totalSelfSize) / per,
    byClass: deltas(before.byClass, after.byClass, per),
    byLayer: deltas(asTotals(before.byLayer), asTotals(after.byLayer), per),
    sharedByClass: deltas(before.sharedByClass, after.sharedByClass, per),
    ownerRetained: deltas(before.ownerRetained, after.ownerRetained, per),
    ownedByPath: deltas(before.ownedByPath, after.ownedByPath, per),
  };
}

export function formatHeapComparison(c: HeapComparison, top = 30): string {
  const lines: string[] = [];
  const row = (d: ClassDelta, withCount: boolean): string =>
    `  ${d.size.toFixed(0).padStart(8)} B${withCount ? `  ${d.count.toFixed(2).padStart(7)}×` : ''}  ${d.name}`;
  lines.push(`self size added per unit (${c.per} units): ${c.totalPer.toFixed(0)} B`);
  if (c.byLayer.length > 0) {
    lines.push('by owning layer (dominator tree):');
    for (const d of c.byLayer) lines.push(row(d, false));
  }
  if (c.ownerRetained.length > 0) {
    lines.push('retained by the layer owners (instances added, retained bytes per unit):');
    for (const d of c.ownerRetained) lines.push(row(d, true));
  }
  lines.push(`by class, top ${top} (bytes and instances per unit):`);
  for (const d of c.byClass.slice(0, top)) lines.push(row(d, true));
  if (c.ownedByPath.length > 0) {
    lines.push(`held by the layer owners, by path, top ${top}:`);
    for (const d of c.ownedByPath.slice(0, top)) lines.push(row(d, true));
  }
  if (c.sharedByClass.length > 0) {
    lines.push(`${SHARED} by class, top ${top}:`);
    for (const d of c.sharedByClass.slice(0, top)) lines.push(row(d, true));
  }
  return lines.join('\n');
}

/** `Class=layer,Class=layer` as a map. */
export function parseLayers(spec: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of spec.split(',')) {
    const at = part.lastIndexOf('=');
    if (at > 0) map.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return map;
}

export function readHeapSnapshot(file: string): HeapSnapshotJson {
  return JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshotJson;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      per: { type: 'string', default: '1' },
      top: { type: 'string', default: '30' },
      layers: { type: 'string', default: '' },
    },
  });
  const [base, withUnits] = positionals;
  if (!base || !withUnits) {
    console.error(
      'usage: heap-snapshot-summary <base.heapsnapshot> <with.heapsnapshot> [--per N] [--top N] [--layers C=l,...]',
    );
    process.exit(2);
  }
  const layers = parseLayers(values.layers ?? '');
  const before = summariseHeapSnapshot(readHeapSnapshot(base), layers);
  const after = summariseHeapSnapshot(readHeapSnapshot(withUnits), layers);
  console.log(
    formatHeapComparison(compareHeapSummaries(before, after, Number(values.per)), Number(values.top)),
  );
}

if (process.argv[1]?.endsWith('heap-snapshot-summary.js')) main();
