import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isObject, type KubeObject } from '../../apis/meta/types.js';
import { KVStorage } from '../../storage/store.js';
import { SqliteKV } from '../../storage/sqlite/sqlite-kv.js';
import type { RequestContext, SubresourceStorage } from '../rest/interfaces.js';
import { sharedSecretKind } from './shared-secret/kind.js';
import type { KindDefinition } from './kind.js';
import { installKinds } from './install.js';
import { MANAGEMENT_KINDS } from './kinds.js';

const GROUP = 'management.platform.dev';
const WRITE = { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict' } as const;
const ctx = (): RequestContext => ({
  user: { name: 'system:admin', groups: ['system:masters'] },
  namespace: '',
  warnings: [],
});

function openStorage(t: { after(fn: () => unknown): void }): KVStorage {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  t.after(() => storage.close());
  return storage;
}

test('one Store per kind in the list, with the subresources each kind declares', (t) => {
  const stores = installKinds(GROUP, openStorage(t), '/registry');
  assert.deepEqual(
    stores.map((s) => s.info.resource),
    MANAGEMENT_KINDS.map((k) => k.info(GROUP).resource),
  );
  const subresources = Object.fromEntries(stores.map((s) => [s.info.resource, [...s.subresources.keys()]]));
  assert.deepEqual(subresources, {
    sharedsecrets: ['status'],
    teams: ['status', 'accesskeys'],
    users: ['status', 'accesskeys'],
    ownedaccesskeys: ['status'],
    // kubeconfig only when the server can issue credentials (the token services build it).
    virtualclusterinstances: ['status'],
  });
});

test("a kind's subresource reads another kind's Store: a user's accesskeys are the keys naming the user", async (t) => {
  const stores = installKinds(GROUP, openStorage(t), '/registry');
  const store = (resource: string) => stores.find((s) => s.info.resource === resource);
  await store('users')?.create(
    ctx(),
    { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name: 'ann' }, spec: {} },
    WRITE,
  );
  for (const [name, user] of [
    ['ann-key', 'ann'],
    ['bob-key', 'bob'],
  ]) {
    await store('ownedaccesskeys')?.create(
      ctx(),
      { apiVersion: `${GROUP}/v1`, kind: 'OwnedAccessKey', metadata: { name }, spec: { user } },
      WRITE,
    );
  }
  const answer = (await store('users')
    ?.subresources.get('accesskeys')
    ?.get?.(ctx(), 'ann', {})) as KubeObject;
  const keys = answer['accessKeys'];
  assert.ok(Array.isArray(keys));
  assert.deepEqual(
    keys.map((k: unknown) => (isObject(k) && isObject(k['metadata']) ? k['metadata']['name'] : undefined)),
    ['ann-key'],
  );
});

test('the kubeconfig hook given in the options is served under virtualclusterinstances', (t) => {
  const kubeConfig = (): SubresourceStorage => ({
    info: { name: 'kubeconfig', kind: 'VirtualClusterInstanceKubeConfig', verbs: ['create'] },
  });
  const stores = installKinds(GROUP, openStorage(t), '/registry', {
    kinds: { virtualClusterInstances: { kubeConfig } },
  });
  const instances = stores.find((s) => s.info.resource === 'virtualclusterinstances');
  assert.deepEqual([...(instances?.subresources.keys() ?? [])], ['status', 'kubeconfig']);
});

test('a new kind is one definition: its Store, names, schema and subresources come from it alone', async (t) => {
  // A made-up kind built from an existing one's parts, under other names.
  const widgetKind: KindDefinition = {
    info: (group) => ({
      ...sharedSecretKind.info(group),
      resource: 'widgets',
      singular: 'widget',
      kind: 'Widget',
      listKind: 'WidgetList',
    }),
    schema: sharedSecretKind.schema,
    strategy: (group, options) => {
      const base = sharedSecretKind.strategy(group, options);
      return { ...base, info: widgetKind.info(group) };
    },
    traits: sharedSecretKind.traits,
    subresources: ({ storeOf }) => [
      {
        info: { name: 'secrets', kind: 'SharedSecretList', verbs: ['get'] },
        get: (c) => storeOf(sharedSecretKind).list(c, {}),
      },
    ],
  };
  const stores = installKinds(GROUP, openStorage(t), '/registry', {}, [...MANAGEMENT_KINDS, widgetKind]);
  const widgets = stores.at(-1);
  assert.equal(widgets?.info.resource, 'widgets');
  const made = await widgets?.create(
    { ...ctx(), namespace: 'default' },
    { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: {} },
    WRITE,
  );
  assert.equal(made?.kind, 'Widget');
  const secrets = await widgets?.subresources.get('secrets')?.get?.({ ...ctx(), namespace: '' }, 'w', {});
  assert.equal(secrets?.kind, 'SharedSecretList');
});
