import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeHeapSnapshot } from 'node:v8';

import {
  compareHeapSummaries,
  type HeapSnapshotJson,
  readHeapSnapshot,
  SHARED,
  summariseHeapSnapshot,
} from './heap-snapshot-summary.js';

const META = {
  node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
  node_types: [['hidden', 'array', 'string', 'object', 'code', 'closure', 'synthetic']],
  edge_fields: ['type', 'name_or_index', 'to_node'],
  edge_types: [['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak']],
};
const TYPE = { object: 3, closure: 5, synthetic: 6 } as const;
const EDGE = { element: 1, property: 2, weak: 6 } as const;

interface FakeNode {
  readonly type: keyof typeof TYPE;
  readonly name: string;
  readonly size: number;
  readonly edges: readonly (readonly [type: keyof typeof EDGE, name: string | number, to: number])[];
}

/** A snapshot in V8's format from a small graph; node 0 is the root. */
function snapshot(graph: readonly FakeNode[]): HeapSnapshotJson {
  const strings: string[] = [];
  const str = (s: string): number => {
    const at = strings.indexOf(s);
    return at >= 0 ? at : strings.push(s) - 1;
  };
  const nodes: number[] = [];
  const edges: number[] = [];
  graph.forEach((n, id) => {
    nodes.push(TYPE[n.type], str(n.name), id * 2 + 1, n.size, n.edges.length);
    for (const [type, name, to] of n.edges) {
      edges.push(EDGE[type], typeof name === 'number' ? name : str(name), to * META.node_fields.length);
    }
  });
  return { snapshot: { meta: META }, nodes, edges, strings };
}

// The root holds an Owner and another object; both hold one Shared object, so no
// owner dominates it. The Owner alone holds a cycle (x <-> y) and what hangs off it,
// and a closure. Something only weakly held is counted by class but owned by nobody.
const ROOT: FakeNode = {
  type: 'synthetic',
  name: '',
  size: 0,
  edges: [
    ['property', 'owner', 1],
    ['property', 'other', 5],
    ['weak', 'cache', 7],
  ],
};
const WITH_OWNER: FakeNode[] = [
  ROOT,
  {
    type: 'object',
    name: 'Owner',
    size: 10,
    edges: [
      ['property', 'x', 2],
      ['property', 'both', 6],
      ['property', 'onEnd', 8],
    ],
  },
  { type: 'object', name: 'X', size: 20, edges: [['property', 'y', 3]] },
  {
    type: 'object',
    name: 'Y',
    size: 30,
    edges: [
      ['property', 'x', 2],
      ['element', 0, 4],
    ],
  },
  { type: 'object', name: 'Leaf', size: 40, edges: [] },
  { type: 'object', name: 'Other', size: 7, edges: [['property', 'both', 6]] },
  { type: 'object', name: 'Shared', size: 5, edges: [] },
  { type: 'object', name: 'Weakly', size: 3, edges: [] },
  { type: 'closure', name: 'onEnd', size: 56, edges: [] },
];
const LAYERS = new Map([['Owner', 'owner layer']]);

test('charges what an owner alone holds to its layer, through cycles; what two paths reach is shared', () => {
  const s = summariseHeapSnapshot(snapshot(WITH_OWNER), LAYERS);
  assert.equal(s.totalSelfSize, 171);
  assert.deepEqual(s.byClass.get('onEnd()'), { count: 1, selfSize: 56 });
  assert.deepEqual(s.byClass.get('Weakly'), { count: 1, selfSize: 3 });
  assert.equal(s.byLayer.get('owner layer'), 10 + 20 + 30 + 40 + 56);
  // The root, Other and Shared; the weakly held object belongs to no layer.
  assert.equal(s.byLayer.get(SHARED), 7 + 5);
  assert.deepEqual(s.ownerRetained.get('Owner'), { count: 1, selfSize: 156 });
  assert.deepEqual(s.sharedByClass.get('Shared'), { count: 1, selfSize: 5 });
  assert.deepEqual(Object.fromEntries([...s.ownedByPath].map(([k, v]) => [k, v.selfSize])), {
    'Owner : Owner': 10,
    'Owner.x : X': 20,
    'Owner.onEnd : onEnd()': 56,
    'Owner.x.y : Y': 30,
    'Owner.x.y.[0] : Leaf': 40,
  });
});

test('compares two summaries per unit', () => {
  // Before: the root without the owner (its edge to the owner removed, the nodes unreached).
  const before = snapshot(
    [
      { ...ROOT, edges: ROOT.edges.filter(([, name]) => name !== 'owner') },
      ...WITH_OWNER.slice(1).filter((n) => n.name === 'Other' || n.name === 'Shared' || n.name === 'Weakly'),
    ].map((n) => ({
      ...n,
      // Renumbered: Other 1, Shared 2, Weakly 3.
      edges: n.edges.map(
        ([t, name, to]) => [t, name, to === 5 ? 1 : to === 6 ? 2 : to === 7 ? 3 : to] as const,
      ),
    })),
  );
  const c = compareHeapSummaries(
    summariseHeapSnapshot(before, LAYERS),
    summariseHeapSnapshot(snapshot(WITH_OWNER), LAYERS),
    2,
  );
  assert.equal(c.totalPer, (10 + 20 + 30 + 40 + 56) / 2);
  assert.deepEqual(c.byLayer, [{ name: 'owner layer', count: 0, size: 78 }]);
  assert.deepEqual(
    c.byClass.map((d) => [d.name, d.count, d.size]),
    [
      ['onEnd()', 0.5, 28],
      ['Leaf', 0.5, 20],
      ['Y', 0.5, 15],
      ['X', 0.5, 10],
      ['Owner', 0.5, 5],
    ],
  );
});

class HeapSummaryProbe {
  readonly payload = { values: [1, 2, 3] };
}

test('reads a real V8 snapshot: the instances a process took on, and what they hold', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heap-summary-'));
  try {
    const layers = new Map([['HeapSummaryProbe', 'probe']]);
    const held: HeapSummaryProbe[] = [];
    const before = summariseHeapSnapshot(
      readHeapSnapshot(writeHeapSnapshot(join(dir, 'a.heapsnapshot'))),
      layers,
    );
    for (let i = 0; i < 500; i++) held.push(new HeapSummaryProbe());
    const after = summariseHeapSnapshot(
      readHeapSnapshot(writeHeapSnapshot(join(dir, 'b.heapsnapshot'))),
      layers,
    );
    const c = compareHeapSummaries(before, after, held.length);
    const probe = c.byClass.find((d) => d.name === 'HeapSummaryProbe');
    assert.equal(probe?.count, 1);
    // Each probe alone holds its payload object and the array in it.
    const retained = c.ownerRetained.find((d) => d.name === 'HeapSummaryProbe');
    assert.equal(retained?.count, 1);
    assert.ok((retained?.size ?? 0) > (probe?.size ?? 0), 'a probe retains more than itself');
    assert.ok(
      c.ownedByPath.some((d) => d.name === 'HeapSummaryProbe.payload : Object' && d.count === 1),
      'the payload is held under its property name',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
