import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import type { SubresourceStorage } from '../rest/interfaces.js';
import {
  CREATE,
  PATCH,
  UPDATE,
  collect,
  newFixture,
  rejectsWith,
  widget,
  type Fixture,
} from './testing/fixtures.js';

function statusOf(f: Fixture): SubresourceStorage {
  const sub = f.store.subresources.get('status');
  assert.ok(sub, 'the Store serves a status subresource');
  return sub;
}

function update(
  f: Fixture,
  name: string,
  body: unknown,
  fieldManager = '',
): Promise<{ object: KubeObject; created: boolean }> {
  const sub = statusOf(f);
  assert.ok(sub.update);
  return sub.update(f.ctx(), name, body, { ...UPDATE, fieldManager });
}

describe('the status subresource', () => {
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

  it('is listed like upstream: the parent kind, get/patch/update', () => {
    const sub = statusOf(f);
    assert.deepEqual(sub.info, { name: 'status', kind: 'Widget', verbs: ['get', 'patch', 'update'] });
  });

  it('a PUT to status changes status and nothing else', async () => {
    const body = structuredClone(w1);
    body.status = { phase: 'Ready' };
    body.spec = { size: 99 };
    body.metadata.labels = { a: 'changed' };
    const { object } = await update(f, 'w1', body, 'status-writer');
    assert.deepEqual(object.status, { phase: 'Ready' });
    assert.deepEqual(object.spec, { size: 1 });
    assert.deepEqual(object.metadata.labels, { a: 'b' });
    // Status is not the desired state: generation stays.
    assert.equal(object.metadata.generation, 1);
    assert.notEqual(object.metadata.resourceVersion, w1.metadata.resourceVersion);
    assert.equal(f.strategy.statusPrepared, 1);
    const stored = await f.store.get(f.ctx(), 'w1', {});
    assert.deepEqual(stored.status, { phase: 'Ready' });
    assert.deepEqual(stored.spec, { size: 1 });
  });

  it('records the write under its manager with subresource: status', async () => {
    const body = structuredClone(w1);
    body.status = { phase: 'Ready' };
    const { object } = await update(f, 'w1', body, 'status-writer');
    const entry = object.metadata.managedFields?.find((e) => e.manager === 'status-writer');
    assert.ok(entry, JSON.stringify(object.metadata.managedFields));
    assert.equal(entry.operation, 'Update');
    assert.equal(entry.subresource, 'status');
    // The main resource's entry of the creating manager is still there, without subresource.
    const creator = object.metadata.managedFields?.find((e) => e.manager === 'kubectl');
    assert.ok(creator);
    assert.equal(creator.subresource, undefined);
  });

  it('a status write without status removes it', async () => {
    const body = structuredClone(w1);
    delete body.status;
    const { object } = await update(f, 'w1', body);
    assert.equal(object.status, undefined);
  });

  it('a status write that changes nothing writes nothing', async () => {
    const watcher = await f.store.watch(f.ctx(), { resourceVersion: w1.metadata.resourceVersion });
    try {
      const body = structuredClone(w1);
      body.spec = { size: 42 };
      const { object } = await update(f, 'w1', body, 'someone');
      assert.equal(object.metadata.resourceVersion, w1.metadata.resourceVersion);
      assert.deepEqual(object.metadata.managedFields, w1.metadata.managedFields);
      const events = await collect(watcher, 1, 300);
      assert.equal(events.length, 0);
    } finally {
      watcher.stop();
    }
  });

  it('the main resource keeps the stored status', async () => {
    const body = structuredClone(w1);
    body.status = { phase: 'Hacked' };
    body.spec = { size: 2 };
    const { object } = await f.store.update(f.ctx(), 'w1', body, UPDATE);
    assert.deepEqual(object.status, { phase: 'Pending' });
    assert.equal((object.spec as { size: number }).size, 2);
    assert.equal(object.metadata.generation, 2);
  });

  it('checks the resourceVersion, the schema and the kind’s status rules', async () => {
    const stale = structuredClone(w1);
    stale.metadata.resourceVersion = '1';
    stale.status = { phase: 'Ready' };
    await rejectsWith(update(f, 'w1', stale), { code: 409, reason: 'Conflict' });
    const wrongType = structuredClone(w1);
    wrongType.status = { phase: 7 };
    await rejectsWith(update(f, 'w1', wrongType), { code: 422, reason: 'Invalid', message: /status\.phase/ });
    const bogus = structuredClone(w1);
    bogus.status = { phase: 'Bogus' };
    await rejectsWith(update(f, 'w1', bogus), {
      code: 422,
      message:
        'Widget.test.example.dev "w1" is invalid: status.phase: Invalid value: "Bogus": is not a phase',
    });
    await rejectsWith(
      update(f, 'nope', { ...structuredClone(w1), metadata: { name: 'nope', resourceVersion: '5' } }),
      {
        code: 404,
        message: 'widgets.test.example.dev "nope" not found',
      },
    );
  });

  it('patches status with merge and JSON patches, ignoring the rest of the patch', async () => {
    const sub = statusOf(f);
    assert.ok(sub.patch);
    const merged = await sub.patch(
      f.ctx(),
      'w1',
      'merge',
      { status: { phase: 'Running' }, spec: { size: 7 }, metadata: { labels: { x: 'y' } } },
      { ...PATCH, fieldManager: 'patcher' },
    );
    assert.deepEqual(merged.object.status, { phase: 'Running' });
    assert.deepEqual(merged.object.spec, { size: 1 });
    assert.deepEqual(merged.object.metadata.labels, { a: 'b' });
    const json = await sub.patch(
      f.ctx(),
      'w1',
      'json',
      [{ op: 'replace', path: '/status/phase', value: 'Done' }],
      PATCH,
    );
    assert.deepEqual(json.object.status, { phase: 'Done' });
    const entry = json.object.metadata.managedFields?.find((e) => e.manager === 'kubectl');
    assert.equal(entry?.subresource, undefined, 'the create entry stays the main resource’s');
    assert.ok(
      json.object.metadata.managedFields?.some((e) => e.manager === 'kubectl' && e.subresource === 'status'),
    );
  });

  it('dry runs write nothing', async () => {
    const body = structuredClone(w1);
    body.status = { phase: 'Ready' };
    const sub = statusOf(f);
    assert.ok(sub.update);
    const { object } = await sub.update(f.ctx(), 'w1', body, { ...UPDATE, dryRun: true });
    assert.deepEqual(object.status, { phase: 'Ready' });
    const stored = await f.store.get(f.ctx(), 'w1', {});
    assert.deepEqual(stored.status, { phase: 'Pending' });
    assert.equal(stored.metadata.resourceVersion, w1.metadata.resourceVersion);
  });

  it('gets the object', async () => {
    const sub = statusOf(f);
    assert.ok(sub.get);
    const got = (await sub.get(f.ctx(), 'w1', {})) as KubeObject;
    assert.deepEqual(got.status, { phase: 'Pending' });
    assert.equal(got.kind, 'Widget');
  });
});
