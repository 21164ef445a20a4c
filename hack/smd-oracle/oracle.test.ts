// The server-side apply engine (pkg/registry/fieldmanager) against the reference
// structured-merge-diff (hack/smd-oracle): random sequences of applies, forced
// applies, updates and merge-patch-style updates by several managers, over the
// real kinds' schemas and one schema that has every merge type, must leave the
// same object, the same field set for every manager (FieldsV1, byte for byte) and
// the same conflicts. The order of a merged set or list-map is 4.4.2's in the
// engine and 4.1.2's in the oracle, so objects are compared with those lists in a
// canonical order (canonicalOrder below); merge-order.test.ts proves the order.
// 4.4.2 also decides that an apply changed nothing by the objects' values, not by
// an empty comparison (apply-unchanged.test.ts): with lists in a canonical order
// the two agree, except on a root pruned to null, compared here as {}.
//
// CI runs a fixed seed and a modest number of cases. For thousands:
//   SMD_ORACLE_RUNS=5000 node --test dist/hack/smd-oracle/oracle.test.js
// (SMD_ORACLE_SEED picks another seed.) A failure prints the case as JSON.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { managementKinds } from '../../pkg/registry/management/kinds.js';
import { setToFieldsV1 } from '../../pkg/registry/fieldmanager/fields-v1.js';
import { pathToString } from '../../pkg/registry/fieldmanager/path.js';
import { fieldType, fromOpenAPI, type Atom } from '../../pkg/registry/fieldmanager/schema.js';
import { identityOf, listItemElement } from '../../pkg/registry/fieldmanager/typed.js';
import { ConflictsError, Updater, type ManagedFieldSets } from '../../pkg/registry/fieldmanager/updater.js';
import { isList, isMap, type Value } from '../../pkg/registry/fieldmanager/value.js';
import { runOracle, type OracleCase, type OracleOp, type OracleStep } from './oracle.js';

const RUNS = Number(process.env['SMD_ORACLE_RUNS'] ?? '150');
const SEED = Number(process.env['SMD_ORACLE_SEED'] ?? '20261125');
const API_VERSION = 'management.platform.dev/v1';

/** Every merge type smd knows, nested: granular and atomic maps, sets, list-maps, deduced values. */
const KITCHEN_SINK = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    count: { type: 'integer' },
    enabled: { type: 'boolean' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    selector: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
    ref: {
      type: 'object',
      'x-kubernetes-map-type': 'atomic',
      properties: { kind: { type: 'string' }, name: { type: 'string' } },
    },
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ports: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-list-type': 'set' },
    args: { type: 'array', items: { type: 'string' } },
    rules: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          verbs: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          note: { type: 'string' },
          limits: { type: 'object', additionalProperties: { type: 'integer' } },
        },
      },
    },
    endpoints: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['host', 'port'],
      items: {
        type: 'object',
        properties: { host: { type: 'string' }, port: { type: 'integer' }, weight: { type: 'integer' } },
      },
    },
    nested: {
      type: 'object',
      properties: {
        inner: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } },
        list: {
          type: 'array',
          items: { type: 'object', properties: { x: { type: 'string' } } },
        },
      },
    },
    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
} as const;

// ---- generators -------------------------------------------------------------------------

// One string Go's encoding/json escapes (HTML-safe), so FieldsV1 keys' escaping is compared too.
const STRINGS = ['a', 'b', 'c<&>'];
const KEYS = ['k1', 'k2', 'k3'];

/** Fields left out of generated objects: the server's own bookkeeping. */
const SKIPPED = new Set(['managedFields']);

function scalarArb(atom: Atom): fc.Arbitrary<Value> {
  switch (atom.scalar) {
    case 'numeric':
      return fc.integer({ min: 0, max: 2 });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return fc.constantFrom(...STRINGS);
    default:
      return fc.oneof(fc.constantFrom(...STRINGS), fc.integer({ min: 0, max: 2 }), fc.boolean());
  }
}

function valueArb(atom: Atom, depth: number): fc.Arbitrary<Value> {
  if (atom.map) {
    const m = atom.map;
    if (depth > 5) return fc.constant({});
    const names = [...m.fields.keys()].filter((n) => !SKIPPED.has(n));
    const declared = fc
      .subarray(names, { maxLength: Math.min(3, names.length) })
      .chain((picked) =>
        fc.record(Object.fromEntries(picked.map((n) => [n, valueArb(m.fields.get(n) as Atom, depth + 1)]))),
      );
    const elementType = m.elementType;
    const extra = elementType
      ? fc.dictionary(fc.constantFrom(...KEYS), valueArb(elementType, depth + 1), { maxKeys: 2 })
      : fc.constant({});
    return fc.tuple(declared, extra).map(([a, b]) => ({ ...b, ...a }) as Value);
  }
  if (atom.list) {
    const l = atom.list;
    if (depth > 5) return fc.constant([]);
    if (l.relationship === 'atomic') return fc.array(valueArb(l.elementType, depth + 1), { maxLength: 2 });
    if (l.keys.length === 0)
      return fc.uniqueArray(scalarArb(l.elementType), { maxLength: 3, selector: (v) => JSON.stringify(v) });
    const keyed = l.elementType.map;
    const item = fc
      .tuple(
        fc.record(
          Object.fromEntries(l.keys.map((k) => [k, scalarArb(keyed?.fields.get(k) ?? { scalar: 'string' })])),
        ),
        valueArb(l.elementType, depth + 1),
      )
      .map(([keys, rest]) => ({ ...(rest as object), ...keys }) as Value);
    return fc.uniqueArray(item, {
      maxLength: 3,
      selector: (v) => JSON.stringify(l.keys.map((k) => (v as Record<string, Value>)[k])),
    });
  }
  return scalarArb(atom);
}

type OpKind = 'apply' | 'forceApply' | 'update' | 'patch';

interface GeneratedOp {
  readonly kind: OpKind;
  readonly manager: string;
  readonly object: Value;
}

function caseArb(atom: Atom): fc.Arbitrary<GeneratedOp[]> {
  const op = fc.record({
    kind: fc.constantFrom<OpKind>('apply', 'apply', 'forceApply', 'update', 'patch'),
    manager: fc.constantFrom('a', 'b', 'c'),
    object: valueArb(atom, 0),
  });
  return fc.array(op, { minLength: 1, maxLength: 6 });
}

// ---- the engine's side --------------------------------------------------------------------

/** JSON merge patch (RFC 7386): what a merge-patch update makes of the live object. */
function mergePatch(target: Value, patch: Value): Value {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const base: Record<string, Value> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, Value>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k] ?? null, v);
  }
  return base;
}

interface EngineStep {
  object: Value;
  managers: Record<string, { applied: boolean; apiVersion: string; fieldsV1: string }>;
  conflicts?: string[];
  error?: string;
}

/** Runs a case through the engine; returns its steps and the concrete ops for the oracle. */
function runEngine(atom: Atom, ops: readonly GeneratedOp[]): { steps: EngineStep[]; oracleCase: OracleCase } {
  const updater = new Updater({ schema: atom, apiVersion: API_VERSION });
  let live: Value = {};
  let managers: ManagedFieldSets = new Map();
  const steps: EngineStep[] = [];
  const concrete: OracleOp[] = [];
  for (const op of ops) {
    const object: Value = op.kind === 'patch' ? mergePatch(live, op.object) : op.object;
    const isApply = op.kind === 'apply' || op.kind === 'forceApply';
    const force = op.kind === 'forceApply';
    concrete.push({ op: isApply ? 'apply' : 'update', manager: op.manager, force, object });
    const step: Partial<EngineStep> = {};
    try {
      if (isApply) {
        const r = updater.apply(live, object, managers, op.manager, force);
        if (r.object !== undefined) live = r.object;
        managers = r.managers;
      } else {
        managers = updater.update(live, object, managers, op.manager).managers;
        live = object;
      }
    } catch (err) {
      if (err instanceof ConflictsError)
        step.conflicts = err.conflicts.map((c) => `${c.manager} ${pathToString(c.path)}`).sort();
      else step.error = (err as Error).message;
    }
    const out: EngineStep['managers'] = {};
    for (const [name, vs] of [...managers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      out[name] = {
        applied: vs.applied,
        apiVersion: vs.apiVersion,
        fieldsV1: JSON.stringify(setToFieldsV1(vs.set)),
      };
    steps.push({ ...step, object: JSON.parse(JSON.stringify(live)) as Value, managers: out });
  }
  return { steps, oracleCase: { live: {}, ops: concrete } };
}

function normalizeOracle(step: OracleStep): EngineStep {
  const managers: EngineStep['managers'] = {};
  for (const [name, m] of Object.entries(step.managers))
    managers[name] = { applied: m.applied, apiVersion: m.apiVersion, fieldsV1: JSON.stringify(m.fieldsV1) };
  const out: EngineStep = { object: step.object as Value, managers };
  if (step.conflicts) out.conflicts = step.conflicts.map((c) => `${c.manager} ${c.path}`).sort();
  if (step.error) out.error = step.error;
  return out;
}

/**
 * The value with the items of every set and list-map in one canonical order (by
 * key), everything else as it is. The oracle is smd 4.1.2, which orders a merged
 * list live-first; the engine follows 4.4.2 (kube-apiserver 1.32), which takes the
 * configuration's order (fieldmanager/merge-order.test.ts proves that order with
 * 4.4.2's own cases). Their contents, field sets and conflicts must still agree, and
 * atomic lists keep their order here.
 */
function canonicalOrder(v: Value, atom: Atom): Value {
  if (isMap(v) && atom.map) {
    const m = atom.map;
    if (m.relationship === 'atomic') return v;
    const out: Record<string, Value> = {};
    for (const [k, item] of Object.entries(v)) out[k] = canonicalOrder(item, fieldType(m, k));
    return out;
  }
  if (isList(v) && atom.list?.relationship === 'associative') {
    const t = atom.list;
    return v
      .map((item, i) => ({
        id: identityOf(listItemElement(t, i, item, [])),
        item: canonicalOrder(item, t.elementType),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((e) => e.item);
  }
  return v;
}

function compareWithOracle(name: string, atom: Atom, runs: number, seed: number): void {
  const cases = fc.sample(caseArb(atom), { numRuns: runs, seed });
  const engine = cases.map((ops) => runEngine(atom, ops));
  const oracle = runOracle(
    atom,
    API_VERSION,
    engine.map((e) => e.oracleCase),
  );
  engine.forEach((e, i) => {
    const want = (oracle[i] ?? []).map(normalizeOracle);
    e.steps.forEach((got, j) => {
      const expected = want[j];
      const where = `${name}, case ${i}, operation ${j}:\n${JSON.stringify(e.oracleCase.ops.slice(0, j + 1))}`;
      assert.ok(expected, `oracle returned no step for ${where}`);
      if (expected.error !== undefined || got.error !== undefined) {
        assert.equal(
          got.error !== undefined,
          expected.error !== undefined,
          `error outcome differs (${got.error ?? expected.error}) at ${where}`,
        );
        return;
      }
      assert.deepEqual(got.conflicts, expected.conflicts, `conflicts differ at ${where}`);
      // A root left null by pruning equals an empty object: 4.1.2 calls an apply of
      // {} onto it unchanged (the root is no field), 4.4.2 (value.Equals) changed.
      assert.deepEqual(
        canonicalOrder(got.object ?? {}, atom),
        canonicalOrder(expected.object ?? {}, atom),
        `object differs at ${where}`,
      );
      assert.deepEqual(got.managers, expected.managers, `managers differ at ${where}`);
    });
  });
}

describe('server-side apply engine vs structured-merge-diff (hack/smd-oracle)', () => {
  const schemas: [string, Atom][] = [
    ['kitchen sink', fromOpenAPI(KITCHEN_SINK)],
    ...managementKinds('management.platform.dev').map((k): [string, Atom] => [
      k.info.kind,
      fromOpenAPI(k.schema),
    ]),
  ];
  for (const [name, atom] of schemas) {
    it(`${name}: same objects, field sets and conflicts`, () => {
      compareWithOracle(name, atom, RUNS, SEED);
    });
  }
});
