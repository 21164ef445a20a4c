// When a write is recorded in managedFields: as kube-apiserver's create, update and
// patch handlers do, from the object the request made, before the kind's strategy
// (BeforeCreate/BeforeUpdate) and admission change it. What the server sets is
// therefore owned by no manager of that request, so a later apply by anyone may set
// it without a conflict; and admission cannot leave managedFields undecodable.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject, ManagedFieldsEntry } from '../../apis/meta/types.js';
import { compileSchema } from '../../apis/schema/compile.js';
import { invalidManagedFieldsAfterAdmissionWarning } from '../fieldmanager/index.js';
import type { Admission, RequestContext } from '../rest/interfaces.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import { Store } from './store.js';
import { API_VERSION, CREATE, PATCH, TestStrategy, testInfo } from './testing/fixtures.js';

/** A kind whose strategy labels every object and fills spec.color when the client left it out. */
class DefaultingStrategy extends TestStrategy {
  override prepareForCreate(ctx: RequestContext, obj: KubeObject): void {
    super.prepareForCreate(ctx, obj);
    serverDefaults(obj);
  }
  override prepareForUpdate(ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
    super.prepareForUpdate(ctx, obj, old);
    serverDefaults(obj);
  }
}

function serverDefaults(obj: KubeObject): void {
  obj.metadata.labels = { ...obj.metadata.labels, 'example.dev/stamped': 'yes' };
  const spec = obj['spec'] as Record<string, unknown>;
  spec['color'] ??= 'blue';
}

/** An admission plugin that does what it should not (our Admission contract says so). */
class MisbehavingAdmission implements Admission {
  mutate: ((obj: KubeObject) => void) | undefined;
  admit(_ctx: RequestContext, obj: KubeObject): void {
    this.mutate?.(obj);
  }
}

function ownedBy(obj: KubeObject, manager: string): Record<string, unknown> | undefined {
  const entry = obj.metadata.managedFields?.find((e) => e.manager === manager);
  return entry?.fieldsV1 as Record<string, unknown> | undefined;
}

describe('Store: managedFields are recorded before the strategy and admission', () => {
  let storage: KVStorage;
  let store: Store;
  let admission: MisbehavingAdmission;
  const ctx = (): RequestContext => ({
    user: { name: 'alice', groups: ['system:authenticated'] },
    namespace: 'default',
    userAgent: 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc',
    warnings: [],
  });
  beforeEach(() => {
    storage = new KVStorage(SqliteKV.open(':memory:'));
    admission = new MisbehavingAdmission();
    store = new Store({
      strategy: new DefaultingStrategy(testInfo(true)),
      storage,
      keyPrefix: '/registry',
      compileSchema,
      admission,
      now: () => new Date('2026-07-01T10:00:00.000Z'),
    });
  });
  afterEach(() => storage.close());

  const create = (c: RequestContext, fieldManager = 'creator'): Promise<KubeObject> =>
    store.create(
      c,
      { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
      { ...CREATE, fieldManager },
    );

  it('a create owns what the client sent, not what the server added', async () => {
    const out = await create(ctx());
    assert.equal(out.metadata.labels?.['example.dev/stamped'], 'yes');
    assert.equal((out['spec'] as Record<string, unknown>)['color'], 'blue');
    assert.deepEqual(ownedBy(out, 'creator'), { 'f:spec': { '.': {}, 'f:size': {} } });
  });

  it('a later apply by another manager sets a server-added field without a conflict', async () => {
    await create(ctx());
    const { object } = await store.patch(
      ctx(),
      'w1',
      'apply',
      { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w1' }, spec: { color: 'red' } },
      { ...PATCH, fieldManager: 'gitops' },
    );
    assert.equal((object['spec'] as Record<string, unknown>)['color'], 'red');
    assert.deepEqual(ownedBy(object, 'gitops'), { 'f:spec': { 'f:color': {} } });
  });

  it('an update owns what it changed, not what the strategy set again', async () => {
    const created = await create(ctx());
    const next = structuredClone(created);
    delete next.metadata.labels;
    (next['spec'] as Record<string, unknown>)['size'] = 2;
    delete (next['spec'] as Record<string, unknown>)['color'];
    const { object } = await store.update(ctx(), 'w1', next, { ...CREATE, fieldManager: 'editor' });
    assert.equal(object.metadata.labels?.['example.dev/stamped'], 'yes');
    assert.deepEqual(ownedBy(object, 'editor'), { 'f:spec': { 'f:size': {} } });
  });

  it('a field admission sets is owned by no manager of the request', async () => {
    admission.mutate = (obj) => {
      obj.metadata.annotations = { 'example.dev/admitted': 'true' };
    };
    const out = await create(ctx());
    assert.equal(out.metadata.annotations?.['example.dev/admitted'], 'true');
    assert.deepEqual(ownedBy(out, 'creator'), { 'f:spec': { '.': {}, 'f:size': {} } });
  });

  it('managedFields that admission broke are put back, with upstream warning', async () => {
    admission.mutate = (obj) => {
      obj.metadata.managedFields = [{ manager: 'x', operation: 'Bogus' } as unknown as ManagedFieldsEntry];
    };
    const c = ctx();
    const out = await create(c);
    assert.deepEqual(ownedBy(out, 'creator'), { 'f:spec': { '.': {}, 'f:size': {} } });
    assert.equal(out.metadata.managedFields?.length, 1);
    assert.deepEqual(c.warnings, [
      invalidManagedFieldsAfterAdmissionWarning('operation must be `Apply` or `Update`'),
    ]);
    assert.match(c.warnings[0] ?? '', /^\.metadata\.managedFields was in an invalid state after admission; /);
    const stored = await store.get(ctx(), 'w1', {});
    assert.deepEqual(stored.metadata.managedFields, out.metadata.managedFields);

    // The same on an update (and so on a patch, which takes its path).
    const u = ctx();
    const next = structuredClone(stored);
    (next['spec'] as Record<string, unknown>)['size'] = 5;
    const { object } = await store.update(u, 'w1', next, { ...CREATE, fieldManager: 'editor' });
    assert.deepEqual(ownedBy(object, 'editor'), { 'f:spec': { 'f:size': {} } });
    assert.equal(u.warnings.length, 1);
  });

  it('managedFields that admission changed validly are kept, without a warning', async () => {
    admission.mutate = (obj) => {
      obj.metadata.managedFields = (obj.metadata.managedFields ?? []).map((e) => ({
        ...e,
        manager: 'renamed',
      }));
    };
    const c = ctx();
    const out = await create(c);
    assert.deepEqual(
      out.metadata.managedFields?.map((e) => e.manager),
      ['renamed'],
    );
    assert.deepEqual(c.warnings, []);
  });
});

/** A kind whose strategy keeps spec.size as stored: a client's change of it is put back. */
class KeepingSizeStrategy extends TestStrategy {
  override prepareForUpdate(ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
    super.prepareForUpdate(ctx, obj, old);
    (obj['spec'] as Record<string, unknown>)['size'] = (old['spec'] as Record<string, unknown>)['size'];
  }
}

describe('Store: an update the strategy undoes writes nothing', () => {
  it('keeps the resourceVersion and the managers\' times (IgnoreManagedFieldsTimestampsTransformer)', async () => {
    const storage = new KVStorage(SqliteKV.open(':memory:'));
    let now = new Date('2026-07-01T10:00:00.000Z');
    const store = new Store({
      strategy: new KeepingSizeStrategy(testInfo(true)),
      storage,
      keyPrefix: '/registry',
      compileSchema,
      now: () => now,
    });
    try {
      const c: RequestContext = { user: { name: 'alice', groups: [] }, namespace: 'default', warnings: [] };
      const created = await store.create(
        c,
        { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
        { ...CREATE, fieldManager: 'creator' },
      );
      now = new Date('2026-07-01T11:00:00.000Z');
      const next = structuredClone(created);
      (next['spec'] as Record<string, unknown>)['size'] = 2;
      const { object } = await store.update(c, 'w1', next, { ...CREATE, fieldManager: 'creator' });
      assert.equal(object.metadata.resourceVersion, created.metadata.resourceVersion);
      assert.deepEqual(object.metadata.managedFields, created.metadata.managedFields);
      assert.equal((object['spec'] as Record<string, unknown>)['size'], 1);
    } finally {
      storage.close();
    }
  });
});
