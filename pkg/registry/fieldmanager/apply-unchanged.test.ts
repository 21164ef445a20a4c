// When an apply changed nothing, as kube-apiserver 1.32 decides it: smd v4.4.2's
// merge/update.go Apply returns no object when value.Equals(live, merged) (the
// objects by value, lists in order, maps by content), where 4.1.2 asked whether the
// field comparison of the two was empty. They differ on an apply that only reorders
// a set or a list-map (the comparison sees the same members) and on one that only
// changes fields the endpoint never owns (reset fields, which the comparison leaves
// out). An unchanged apply leaves the object and its entry's time alone; a changed
// one moves its manager's time (managedFieldsUpdater).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject, ManagedFieldsEntry } from '../../apis/meta/types.js';
import { kindSchema } from './testing/kind-schema.js';
import { FieldManager } from './index.js';

const GV = 'example.dev/v1';

const SCHEMA = kindSchema({
  spec: {
    type: 'object',
    properties: {
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      rules: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, verb: { type: 'string' } } },
      },
    },
  },
  status: { type: 'object', properties: { phase: { type: 'string' } } },
});

/** A field manager whose clock moves one second per apply. */
function widgets(): FieldManager {
  let t = Date.parse('2026-01-01T00:00:00Z');
  return new FieldManager({
    schema: SCHEMA,
    apiVersion: GV,
    kind: 'Widget',
    now: () => new Date((t += 1000)),
  });
}

const config = (body: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: GV,
  kind: 'Widget',
  metadata: { name: 'w' },
  ...body,
});

function stored(obj: KubeObject): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, uid: 'u1', resourceVersion: '1' } };
}

const entry = (obj: KubeObject, manager: string): ManagedFieldsEntry | undefined =>
  obj.metadata.managedFields?.find((e) => e.manager === manager);

const spec = (obj: KubeObject): unknown => (obj as unknown as Record<string, unknown>)['spec'];
const status = (obj: KubeObject): unknown => (obj as unknown as Record<string, unknown>)['status'];

describe('an apply that changed nothing, as smd 4.4.2 decides it (value.Equals)', () => {
  const first = { tags: ['a', 'b'], rules: [{ name: 'r' }, { name: 's', verb: 'get' }] };

  function applied(fm: FieldManager): KubeObject {
    return stored(
      fm.apply({ apiVersion: GV, kind: 'Widget', metadata: {} }, config({ spec: first }), 'ci', false),
    );
  }

  it('the same configuration again: unchanged, the entry keeps its time', () => {
    const fm = widgets();
    const live = applied(fm);
    const again = fm.apply(live, config({ spec: first }), 'ci', false);
    assert.deepEqual(again, live);
  });

  it('a configuration that only reorders a set and a list-map: changed, in the new order, with a new time', () => {
    const fm = widgets();
    const live = applied(fm);
    const reordered = { tags: ['b', 'a'], rules: [{ name: 's', verb: 'get' }, { name: 'r' }] };
    const out = fm.apply(live, config({ spec: reordered }), 'ci', false);
    assert.deepEqual(spec(out), reordered);
    assert.notEqual(entry(out, 'ci')?.time, entry(live, 'ci')?.time);
    // The fields owned are the same: only the order and the time moved.
    assert.deepEqual(entry(out, 'ci')?.fieldsV1, entry(live, 'ci')?.fieldsV1);
  });

  it('a configuration that only changes a field the endpoint never owns (status): changed, owning nothing more', () => {
    const fm = widgets();
    const live = applied(fm);
    const out = fm.apply(live, config({ spec: first, status: { phase: 'Ready' } }), 'ci', false);
    assert.deepEqual(status(out), { phase: 'Ready' });
    assert.notEqual(entry(out, 'ci')?.time, entry(live, 'ci')?.time);
    assert.deepEqual(entry(out, 'ci')?.fieldsV1, entry(live, 'ci')?.fieldsV1);
  });
});
