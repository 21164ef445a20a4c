import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject, OwnerReference } from '../../apis/meta/types.js';
import { compileSchema } from '../../apis/schema/compile.js';
import {
  API_VERSION,
  CREATE,
  DELETE,
  GROUP,
  TestStrategy,
  testInfo,
} from '../../registry/generic/testing/fixtures.js';
import { Store } from '../../registry/generic/store.js';
import type { RequestContext } from '../../registry/rest/interfaces.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import { silentLogger } from '../../util/log/index.js';
import { exposition } from '../../metrics/registry.js';
import { sample } from '../../metrics/testing.js';
import { GarbageCollectorController } from './controller.js';

/** One sample of the process's metrics (0 when the series does not exist yet). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  return sample((await exposition()).body, name, labels) ?? 0;
}

// Gadgets are cluster-scoped, widgets namespaced: both kinds over one storage,
// with the collector running as the server runs it.

interface Env {
  storage: KVStorage;
  gadgets: Store;
  widgets: Store;
  gc: GarbageCollectorController;
  warnings: Record<string, unknown>[];
}

const ctx = (namespace = ''): RequestContext => ({
  user: { name: 'alice', groups: ['system:authenticated'] },
  namespace,
  warnings: [],
});

function newEnv(): Env {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const store = (namespaced: boolean): Store =>
    new Store({
      strategy: new TestStrategy(testInfo(namespaced)),
      storage,
      keyPrefix: '/registry',
      compileSchema,
    });
  const gadgets = store(false);
  const widgets = store(true);
  const warnings: Record<string, unknown>[] = [];
  const gc = new GarbageCollectorController({
    storage,
    collectionPrefix: (resource) => `/registry/${GROUP}/${resource}/`,
    stores: [gadgets, widgets],
    logger: {
      ...silentLogger,
      info: () => undefined,
      warn: (msg, fields) => warnings.push({ msg, ...fields }),
      error: () => undefined,
    },
  });
  gc.start();
  return { storage, gadgets, widgets, gc, warnings };
}

async function gadget(env: Env, name: string, extra: Record<string, unknown> = {}): Promise<KubeObject> {
  return env.gadgets.create(
    ctx(),
    { apiVersion: API_VERSION, metadata: { name, ...extra }, spec: { size: 1 } },
    CREATE,
  );
}

async function widget(
  env: Env,
  name: string,
  owners: OwnerReference[],
  namespace = 'default',
): Promise<KubeObject> {
  return env.widgets.create(
    ctx(namespace),
    { apiVersion: API_VERSION, metadata: { name, ownerReferences: owners }, spec: { size: 1 } },
    CREATE,
  );
}

function ref(owner: KubeObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: owner.kind ?? '',
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    ...extra,
  };
}

async function exists(store: Store, name: string, namespace = ''): Promise<KubeObject | undefined> {
  try {
    return await store.get(ctx(namespace), name, {});
  } catch {
    return undefined;
  }
}

/** Polls until `check` holds (generous bound: the machine is shared). */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting until ${what}`);
}

/** Gives the collector time to act wrongly (used only to show that something does NOT happen). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 500));

describe('garbage collector', () => {
  let env: Env;
  beforeEach(() => {
    env = newEnv();
  });
  afterEach(async () => {
    await env.gc.stop();
    await env.storage.close();
  });

  it('background: deletes a dependent once its only owner is gone', async () => {
    const deleted = await metric('platform_garbage_collector_deleted_objects_total', { propagation_policy: 'Background' });
    const queue = { name: 'garbage_collector_attempt_to_delete' };
    const adds = await metric('workqueue_adds_total', queue);
    const attempts = await metric('platform_garbage_collector_attempts_total', {
      queue: queue.name,
      result: 'success',
    });
    const owner = await gadget(env, 'owner');
    await widget(env, 'dep', [ref(owner)]);
    await settle();
    assert.ok(await exists(env.widgets, 'dep', 'default'), 'a dependent of a live owner stays');
    await env.gadgets.delete(ctx(), 'owner', { ...DELETE, propagationPolicy: 'Background' });
    await eventually('the dependent is gone', async () => !(await exists(env.widgets, 'dep', 'default')));
    // What the collector did shows in its metrics.
    assert.equal(
      await metric('platform_garbage_collector_deleted_objects_total', { propagation_policy: 'Background' }),
      deleted + 1,
    );
    assert.ok((await metric('workqueue_adds_total', queue)) > adds);
    assert.ok(
      (await metric('platform_garbage_collector_attempts_total', { queue: queue.name, result: 'success' })) >
        attempts,
    );
    assert.equal(await metric('workqueue_depth', queue), 0);
  });

  it('deletes a dependent whose owner was re-created under the same name (uid differs)', async () => {
    const first = await gadget(env, 'owner');
    await env.gadgets.delete(ctx(), 'owner', DELETE);
    await gadget(env, 'owner');
    await widget(env, 'dep', [ref(first)]);
    await eventually('the dependent is gone', async () => !(await exists(env.widgets, 'dep', 'default')));
    assert.ok(await exists(env.gadgets, 'owner'), 'the new owner is untouched');
  });

  it('keeps an object while any of its owners exists', async () => {
    const a = await gadget(env, 'a');
    const b = await gadget(env, 'b');
    await widget(env, 'dep', [ref(a), ref(b)]);
    await env.gadgets.delete(ctx(), 'a', DELETE);
    await eventually('the reference to the deleted owner is dropped', async () => {
      const dep = await exists(env.widgets, 'dep', 'default');
      return dep?.metadata.ownerReferences?.length === 1;
    });
    await settle();
    const dep = await exists(env.widgets, 'dep', 'default');
    assert.deepEqual(
      dep?.metadata.ownerReferences?.map((r) => r.name),
      ['b'],
    );
    await env.gadgets.delete(ctx(), 'b', DELETE);
    await eventually('the dependent is gone', async () => !(await exists(env.widgets, 'dep', 'default')));
  });

  it('foreground: the owner waits with its finalizer until blocking dependents are gone, then disappears', async () => {
    const owner = await gadget(env, 'owner');
    await widget(env, 'blocking', [ref(owner, { blockOwnerDeletion: true })]);
    await widget(env, 'plain', [ref(owner)]);
    const { object, deleted } = await env.gadgets.delete(ctx(), 'owner', {
      ...DELETE,
      propagationPolicy: 'Foreground',
    });
    assert.equal(deleted, false);
    assert.deepEqual((object as KubeObject).metadata.finalizers, ['foregroundDeletion']);
    assert.ok((object as KubeObject).metadata.deletionTimestamp);
    await eventually('the owner is gone', async () => !(await exists(env.gadgets, 'owner')));
    assert.equal(await exists(env.widgets, 'blocking', 'default'), undefined);
    await eventually(
      'the non-blocking dependent is gone',
      async () => !(await exists(env.widgets, 'plain', 'default')),
    );
  });

  it('foreground: an owner whose blocking dependent has a finalizer stays until that finalizer goes', async () => {
    const owner = await gadget(env, 'owner');
    const dep = await env.widgets.create(
      ctx('default'),
      {
        apiVersion: API_VERSION,
        metadata: {
          name: 'held',
          finalizers: ['example.dev/hold'],
          ownerReferences: [ref(owner, { blockOwnerDeletion: true })],
        },
        spec: { size: 1 },
      },
      CREATE,
    );
    await env.gadgets.delete(ctx(), 'owner', { ...DELETE, propagationPolicy: 'Foreground' });
    await eventually(
      'the dependent is being deleted',
      async () => !!(await exists(env.widgets, 'held', 'default'))?.metadata.deletionTimestamp,
    );
    await settle();
    assert.ok(await exists(env.gadgets, 'owner'), 'the owner waits for its blocking dependent');
    const held = await exists(env.widgets, 'held', 'default');
    await env.widgets.patch(
      ctx('default'),
      'held',
      'merge',
      { metadata: { finalizers: null, resourceVersion: held?.metadata.resourceVersion } },
      CREATE,
    );
    await eventually('the owner is gone', async () => !(await exists(env.gadgets, 'owner')));
    assert.ok(dep.metadata.uid);
  });

  it('orphan: removes the reference from every dependent, then the finalizer, and keeps the dependents', async () => {
    const orphaned = await metric('platform_garbage_collector_orphaned_dependents_total');
    const owner = await gadget(env, 'owner');
    const other = await gadget(env, 'other');
    await widget(env, 'd1', [ref(owner)]);
    await widget(env, 'd2', [ref(owner), ref(other)]);
    const { object } = await env.gadgets.delete(ctx(), 'owner', { ...DELETE, propagationPolicy: 'Orphan' });
    assert.deepEqual((object as KubeObject).metadata.finalizers, ['orphan']);
    await eventually('the owner is gone', async () => !(await exists(env.gadgets, 'owner')));
    await settle();
    const d1 = await exists(env.widgets, 'd1', 'default');
    const d2 = await exists(env.widgets, 'd2', 'default');
    assert.ok(d1 && d2, 'orphaned dependents stay');
    assert.equal(d1.metadata.ownerReferences, undefined);
    assert.deepEqual(
      d2.metadata.ownerReferences?.map((r) => r.name),
      ['other'],
    );
    assert.equal(await metric('platform_garbage_collector_orphaned_dependents_total'), orphaned + 2);
  });

  it('never deletes because of an invalid reference, and reports it once', async () => {
    const nsOwner = await widget(env, 'ns-owner', []);
    // A cluster-scoped object owned by a namespaced kind.
    await gadget(env, 'cluster-dep', { ownerReferences: [ref(nsOwner)] });
    // An owner kind this server does not serve.
    await gadget(env, 'foreign-dep', {
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: 'f00' }],
    });
    // A namespaced owner that lives in another namespace.
    await widget(env, 'cross-ns', [ref(nsOwner)], 'elsewhere');
    await env.widgets.delete(ctx('default'), 'ns-owner', DELETE);
    await settle();
    await settle();
    assert.ok(await exists(env.gadgets, 'cluster-dep'));
    assert.ok(await exists(env.gadgets, 'foreign-dep'));
    assert.ok(await exists(env.widgets, 'cross-ns', 'elsewhere'));
    const reasons = env.warnings.filter((w) => w.msg === 'invalid owner reference').map((w) => w.reason);
    assert.ok(reasons.includes('ClusterScopedDependentOfNamespacedOwner'), JSON.stringify(reasons));
    assert.ok(reasons.includes('OwnerKindNotServed'), JSON.stringify(reasons));
    assert.ok(reasons.includes('OwnerInOtherNamespace'), JSON.stringify(reasons));
    assert.equal(new Set(reasons).size, reasons.length, 'each reference is reported once');
    assert.equal(env.gc.invalidOwnerReferences.count, reasons.length);
  });
});

describe('Store without a garbage collector', () => {
  it('adds no deletion finalizer: Foreground and Orphan deletes remove the object at once', async () => {
    const storage = new KVStorage(SqliteKV.open(':memory:'));
    try {
      const store = new Store({
        strategy: new TestStrategy(testInfo(false)),
        storage,
        keyPrefix: '/registry',
        compileSchema,
        garbageCollection: false,
      });
      for (const propagationPolicy of ['Foreground', 'Orphan'] as const) {
        await store.create(
          ctx(),
          { apiVersion: API_VERSION, metadata: { name: 'g' }, spec: { size: 1 } },
          CREATE,
        );
        const { deleted } = await store.delete(ctx(), 'g', { ...DELETE, propagationPolicy });
        assert.equal(deleted, true, propagationPolicy);
      }
    } finally {
      await storage.close();
    }
  });
});
