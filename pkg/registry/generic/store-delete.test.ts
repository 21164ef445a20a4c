import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { CREATE, DELETE, newFixture, rejectsWith, widget, type Fixture } from './testing/fixtures.js';

describe('Store.delete', () => {
  let f: Fixture;
  let w1: KubeObject;
  beforeEach(async () => {
    f = newFixture();
    w1 = await f.store.create(f.ctx(), widget('w1'), CREATE);
  });
  afterEach(() => f.close());

  it('removes an object without finalizers and answers a Success Status', async () => {
    const { object, deleted } = await f.store.delete(f.ctx(), 'w1', DELETE);
    assert.equal(deleted, true);
    assert.deepEqual(object, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'w1', group: 'test.example.dev', kind: 'widgets', uid: w1.metadata.uid },
    });
    await rejectsWith(f.store.get(f.ctx(), 'w1', {}), { code: 404 });
  });

  it('answers 404 for a missing object', async () => {
    await rejectsWith(f.store.delete(f.ctx(), 'nope', DELETE), {
      code: 404,
      message: 'widgets.test.example.dev "nope" not found',
    });
  });

  it('checks preconditions, naming the kind in the conflict', async () => {
    await rejectsWith(f.store.delete(f.ctx(), 'w1', { ...DELETE, preconditions: { uid: 'other' } }), {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on Widget.test.example.dev "w1": the UID in the precondition (other) does not match the UID in record (${w1.metadata.uid}). The object might have been deleted and then recreated`,
    });
    await rejectsWith(f.store.delete(f.ctx(), 'w1', { ...DELETE, preconditions: { resourceVersion: '1' } }), {
      code: 409,
      message: `Operation cannot be fulfilled on Widget.test.example.dev "w1": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${w1.metadata.resourceVersion}). The object might have been modified`,
    });
    const { deleted } = await f.store.delete(f.ctx(), 'w1', {
      ...DELETE,
      preconditions: { uid: w1.metadata.uid, resourceVersion: w1.metadata.resourceVersion },
    });
    assert.equal(deleted, true);
  });

  it('validates DeleteOptions', async () => {
    await rejectsWith(
      f.store.delete(f.ctx(), 'w1', { ...DELETE, orphanDependents: true, propagationPolicy: 'Orphan' }),
      {
        code: 422,
        message:
          'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
      },
    );
    await rejectsWith(
      f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Sideways' as unknown as 'Orphan' }),
      {
        code: 422,
        message:
          'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
      },
    );
    await rejectsWith(f.store.delete(f.ctx(), 'w1', { ...DELETE, dryRun: ['Some'] }), {
      code: 422,
      message:
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"',
    });
  });

  it('dry run answers as if deleted but keeps the object', async () => {
    const { deleted, object } = await f.store.delete(f.ctx(), 'w1', { ...DELETE, dryRunAll: true });
    assert.equal(deleted, true);
    assert.equal((object as { status?: string }).status, 'Success');
    assert.equal((await f.store.get(f.ctx(), 'w1', {})).metadata.name, 'w1');
  });

  describe('with finalizers', () => {
    let held: KubeObject;
    beforeEach(async () => {
      const body = structuredClone(w1);
      body.metadata.finalizers = ['example.com/hold'];
      held = (
        await f.store.update(f.ctx(), 'w1', body, {
          dryRun: false,
          fieldManager: '',
          fieldValidation: 'Strict',
        })
      ).object;
    });

    it('marks the object as being deleted and keeps it', async () => {
      f.clock = new Date('2026-07-01T10:05:00.000Z');
      const { object, deleted } = await f.store.delete(f.ctx(), 'w1', DELETE);
      assert.equal(deleted, false);
      const marked = object as KubeObject;
      assert.equal(marked.kind, 'Widget');
      assert.equal(marked.metadata.deletionTimestamp, '2026-07-01T10:05:00Z');
      assert.equal(marked.metadata.deletionGracePeriodSeconds, 0);
      assert.equal(marked.metadata.generation, (held.metadata.generation ?? 0) + 1);
      assert.deepEqual(marked.metadata.finalizers, ['example.com/hold']);
      assert.equal((await f.store.get(f.ctx(), 'w1', {})).metadata.deletionTimestamp, '2026-07-01T10:05:00Z');
    });

    it('a repeated delete keeps the first deletionTimestamp and writes nothing', async () => {
      f.clock = new Date('2026-07-01T10:05:00.000Z');
      const first = (await f.store.delete(f.ctx(), 'w1', DELETE)).object as KubeObject;
      f.clock = new Date('2026-07-01T10:09:00.000Z');
      const again = await f.store.delete(f.ctx(), 'w1', DELETE);
      assert.equal(again.deleted, false);
      const second = again.object as KubeObject;
      assert.equal(second.metadata.deletionTimestamp, '2026-07-01T10:05:00Z');
      assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
      assert.equal(second.metadata.generation, first.metadata.generation);
    });

    it('dry run shows the mark without making it', async () => {
      const { object, deleted } = await f.store.delete(f.ctx(), 'w1', { ...DELETE, dryRunAll: true });
      assert.equal(deleted, false);
      assert.ok((object as KubeObject).metadata.deletionTimestamp);
      assert.equal((await f.store.get(f.ctx(), 'w1', {})).metadata.deletionTimestamp, undefined);
    });
  });

  describe('propagation policies', () => {
    it('Orphan adds the orphan finalizer, Foreground swaps it for foregroundDeletion', async () => {
      const orphan = (await f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Orphan' }))
        .object as KubeObject;
      assert.deepEqual(orphan.metadata.finalizers, ['orphan']);
      assert.ok(orphan.metadata.deletionTimestamp);
      const fg = (await f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Foreground' }))
        .object as KubeObject;
      assert.deepEqual(fg.metadata.finalizers, ['foregroundDeletion']);
    });

    it('orphanDependents: true means orphan', async () => {
      const { object } = await f.store.delete(f.ctx(), 'w1', { ...DELETE, orphanDependents: true });
      assert.deepEqual((object as KubeObject).metadata.finalizers, ['orphan']);
    });

    it('Background on an object held only by orphan removes it', async () => {
      await f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Orphan' });
      const { deleted } = await f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Background' });
      assert.equal(deleted, true);
      await rejectsWith(f.store.get(f.ctx(), 'w1', {}), { code: 404 });
    });

    it('Background alone deletes immediately', async () => {
      const { deleted } = await f.store.delete(f.ctx(), 'w1', { ...DELETE, propagationPolicy: 'Background' });
      assert.equal(deleted, true);
    });
  });
});

describe('Store.deleteCollection', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = newFixture();
    for (const [ns, name, tier] of [
      ['a', 'w1', 'web'],
      ['a', 'w2', 'db'],
      ['b', 'w3', 'web'],
    ] as const) {
      await f.store.create(f.ctx(ns), widget(name, { metadata: { name, labels: { tier } } }), CREATE);
    }
    await f.store.create(
      f.ctx('b'),
      widget('w4', { metadata: { name: 'w4', labels: { tier: 'web' }, finalizers: ['example.com/hold'] } }),
      CREATE,
    );
  });
  afterEach(() => f.close());

  it('deletes what the selectors select, in one namespace', async () => {
    const list = await f.store.deleteCollection(f.ctx('a'), DELETE, { labelSelector: 'tier=web' });
    assert.equal(list.kind, 'WidgetList');
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['w1'],
    );
    const left = await f.store.list(f.ctx(''), {});
    assert.deepEqual(
      left.items.map((i) => i.metadata.name),
      ['w2', 'w3', 'w4'],
    );
  });

  it('across all namespaces, marks what finalizers hold', async () => {
    const list = await f.store.deleteCollection(f.ctx(''), DELETE, { labelSelector: 'tier=web' });
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['w1', 'w3', 'w4'],
    );
    assert.ok(list.items[2]?.metadata.deletionTimestamp, 'the held object is returned marked');
    const left = await f.store.list(f.ctx(''), {});
    assert.deepEqual(
      left.items.map((i) => i.metadata.name),
      ['w2', 'w4'],
    );
  });

  it('refuses invalid options before deleting anything', async () => {
    await rejectsWith(f.store.deleteCollection(f.ctx(''), DELETE, { labelSelector: 'a in' }), { code: 400 });
    assert.equal((await f.store.list(f.ctx(''), {})).items.length, 4);
  });
});
