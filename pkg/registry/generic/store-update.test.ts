import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import type { StorageWatchEvent } from '../../storage/interfaces.js';
import {
  CREATE,
  DELETE,
  UPDATE,
  collect,
  newFixture,
  rejectsWith,
  widget,
  type Fixture,
} from './testing/fixtures.js';

function withSpec(obj: KubeObject, spec: Record<string, unknown>): KubeObject {
  return { ...structuredClone(obj), spec: { ...(obj.spec as Record<string, unknown>), ...spec } };
}

describe('Store.update', () => {
  let f: Fixture;
  let w1: KubeObject;
  beforeEach(async () => {
    f = newFixture();
    w1 = await f.store.create(
      f.ctx(),
      widget('w1', { metadata: { name: 'w1', labels: { a: 'b' } } }),
      CREATE,
    );
  });
  afterEach(() => f.close());

  it('replaces the object, bumps generation and resourceVersion, keeps identity', async () => {
    f.clock = new Date('2026-07-01T11:00:00Z');
    const { object, created } = await f.store.update(f.ctx(), 'w1', withSpec(w1, { size: 5 }), UPDATE);
    assert.equal(created, false);
    assert.equal((object.spec as Record<string, unknown>).size, 5);
    assert.equal(object.metadata.generation, 2);
    assert.notEqual(object.metadata.resourceVersion, w1.metadata.resourceVersion);
    assert.equal(object.metadata.uid, w1.metadata.uid);
    assert.equal(object.metadata.creationTimestamp, w1.metadata.creationTimestamp);
    assert.equal(object.metadata.managedFields?.[0]?.time, '2026-07-01T11:00:00Z');
  });

  it('does not bump generation for a metadata-only change', async () => {
    const changed = structuredClone(w1);
    changed.metadata.labels = { a: 'c' };
    const { object } = await f.store.update(f.ctx(), 'w1', changed, UPDATE);
    assert.equal(object.metadata.generation, 1);
    assert.deepEqual(object.metadata.labels, { a: 'c' });
    assert.notEqual(object.metadata.resourceVersion, w1.metadata.resourceVersion);
  });

  it('writes nothing for an update that changes nothing: same resourceVersion, same managedFields time, no event', async () => {
    const watcher = await f.store.watch(f.ctx(), { resourceVersion: w1.metadata.resourceVersion });
    try {
      f.clock = new Date('2026-07-01T12:00:00Z');
      const { object } = await f.store.update(f.ctx(), 'w1', structuredClone(w1), {
        ...UPDATE,
        fieldManager: 'other',
      });
      assert.equal(object.metadata.resourceVersion, w1.metadata.resourceVersion);
      assert.deepEqual(object.metadata.managedFields, w1.metadata.managedFields);
      // A real change afterwards is the first event the watch sees.
      const { object: changed } = await f.store.update(f.ctx(), 'w1', withSpec(object, { size: 9 }), UPDATE);
      const events: StorageWatchEvent[] = await collect(watcher, 1);
      assert.equal(events.length, 1);
      assert.equal(events[0]?.type, 'MODIFIED');
      assert.equal(events[0]?.object.metadata.resourceVersion, changed.metadata.resourceVersion);
    } finally {
      watcher.stop();
    }
  });

  it('requires a resourceVersion, naming the resource in the 422', async () => {
    const body = structuredClone(w1);
    delete body.metadata.resourceVersion;
    await rejectsWith(f.store.update(f.ctx(), 'w1', body, UPDATE), {
      code: 422,
      reason: 'Invalid',
      message:
        'widgets.test.example.dev "w1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
    });
  });

  it('refuses a stale resourceVersion with the optimistic-lock conflict', async () => {
    await f.store.update(f.ctx(), 'w1', withSpec(w1, { size: 2 }), UPDATE);
    await rejectsWith(f.store.update(f.ctx(), 'w1', withSpec(w1, { size: 3 }), UPDATE), {
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on widgets.test.example.dev "w1": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('refuses a uid that is not the stored one', async () => {
    const body = structuredClone(w1);
    body.metadata.uid = 'other-uid';
    await rejectsWith(f.store.update(f.ctx(), 'w1', body, UPDATE), {
      code: 409,
      reason: 'Conflict',
      message: new RegExp(
        `^Operation cannot be fulfilled on widgets\\.test\\.example\\.dev "w1": StorageError: invalid object, Code: 4, Key: /registry/test\\.example\\.dev/widgets/default/w1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other-uid, UID in object meta: ${w1.metadata.uid}$`,
      ),
    });
  });

  it('refuses a body whose name is not the one in the URL', async () => {
    await rejectsWith(f.store.update(f.ctx(), 'w2', structuredClone(w1), UPDATE), {
      code: 400,
      message: 'the name of the object (w1) does not match the name on the URL (w2)',
    });
  });

  it('answers 404 for a missing object rather than creating it', async () => {
    const body = structuredClone(w1);
    body.metadata.name = 'nope';
    await rejectsWith(f.store.update(f.ctx(), 'nope', body, UPDATE), {
      code: 404,
      reason: 'NotFound',
      message: 'widgets.test.example.dev "nope" not found',
    });
  });

  it('restores creationTimestamp silently and refuses a move to another namespace', async () => {
    const body = structuredClone(w1);
    body.metadata.creationTimestamp = '2000-01-01T00:00:00Z';
    const { object } = await f.store.update(f.ctx(), 'w1', body, UPDATE);
    assert.equal(object.metadata.creationTimestamp, w1.metadata.creationTimestamp);
    const moved = structuredClone(object);
    moved.metadata.namespace = 'other';
    await rejectsWith(f.store.update(f.ctx(), 'w1', moved, UPDATE), {
      code: 400,
      message: 'the namespace of the object (other) does not match the namespace on the request (default)',
    });
  });

  it('keeps status: clients cannot set it through the main resource', async () => {
    const { object } = await f.store.update(
      f.ctx(),
      'w1',
      { ...structuredClone(w1), status: { phase: 'Hacked' } },
      UPDATE,
    );
    assert.deepEqual(object.status, { phase: 'Pending' });
  });

  it('validates the new object', async () => {
    await rejectsWith(f.store.update(f.ctx(), 'w1', withSpec(w1, { size: -4 }), UPDATE), {
      code: 422,
      message:
        'Widget.test.example.dev "w1" is invalid: spec.size: Invalid value: -4: must be greater than or equal to 0',
    });
  });

  it('dry run validates and answers without writing', async () => {
    const { object } = await f.store.update(f.ctx(), 'w1', withSpec(w1, { size: 8 }), {
      ...UPDATE,
      dryRun: true,
    });
    assert.equal((object.spec as Record<string, unknown>).size, 8);
    const stored = await f.store.get(f.ctx(), 'w1', {});
    assert.equal((stored.spec as Record<string, unknown>).size, 1);
    assert.equal(stored.metadata.resourceVersion, w1.metadata.resourceVersion);
  });

  describe('while the object is being deleted', () => {
    let deleting: KubeObject;
    beforeEach(async () => {
      const held = structuredClone(w1);
      held.metadata.finalizers = ['example.com/a', 'example.com/b'];
      await f.store.update(f.ctx(), 'w1', held, UPDATE);
      const { object } = await f.store.delete(f.ctx(), 'w1', DELETE);
      deleting = object as KubeObject;
      assert.ok(deleting.metadata.deletionTimestamp);
    });

    it('refuses new finalizers', async () => {
      const body = structuredClone(deleting);
      body.metadata.finalizers = ['example.com/a', 'example.com/b', 'example.com/c'];
      await rejectsWith(f.store.update(f.ctx(), 'w1', body, UPDATE), {
        code: 422,
        message:
          'Widget.test.example.dev "w1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c"}',
      });
    });

    it('keeps deletionTimestamp whatever the client sends', async () => {
      const body = structuredClone(deleting);
      delete body.metadata.deletionTimestamp;
      body.metadata.finalizers = ['example.com/a'];
      const { object } = await f.store.update(f.ctx(), 'w1', body, UPDATE);
      assert.equal(object.metadata.deletionTimestamp, deleting.metadata.deletionTimestamp);
    });

    it('deletes the object when the last finalizer is removed, in the same request', async () => {
      const watcher = await f.store.watch(f.ctx(), { resourceVersion: deleting.metadata.resourceVersion });
      try {
        const body = structuredClone(deleting);
        body.metadata.finalizers = [];
        const { object } = await f.store.update(f.ctx(), 'w1', body, UPDATE);
        assert.equal(object.metadata.name, 'w1');
        await rejectsWith(f.store.get(f.ctx(), 'w1', {}), { code: 404 });
        const events = await collect(watcher, 1);
        assert.equal(events[0]?.type, 'DELETED');
      } finally {
        watcher.stop();
      }
    });
  });
});
