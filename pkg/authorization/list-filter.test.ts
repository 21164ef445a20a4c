import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../apis/meta/types.js';
import type { RequestContext, RESTStorage } from '../registry/rest/interfaces.js';
import type { StorageWatchEvent, Watcher } from '../storage/interfaces.js';
import type { Attributes, Authorizer } from './interfaces.js';
import { withListFiltering } from './list-filter.js';

const info = {
  group: 'g',
  version: 'v1',
  resource: 'teams',
  singular: 'team',
  kind: 'Team',
  listKind: 'TeamList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: [],
  subresources: [],
} as const;

function team(name: string, secret = ''): KubeObject {
  return {
    apiVersion: 'g/v1',
    kind: 'Team',
    metadata: { name, uid: `uid-${name}`, resourceVersion: '7' },
    spec: { secret },
  };
}

/** The caller may get the names in `visible`, and list nothing wholesale. */
function authorizer(visible: Set<string>): Authorizer {
  return {
    authorize: (attrs: Attributes) =>
      Promise.resolve({ decision: attrs.verb === 'get' && visible.has(attrs.name) ? 'allow' : 'deny' }),
  };
}

const ctx: RequestContext = { user: { name: 'bob', groups: [] }, namespace: '', warnings: [] };

function storageWith(items: KubeObject[], events: StorageWatchEvent[]): RESTStorage {
  return {
    info,
    list: () =>
      Promise.resolve({
        apiVersion: 'g/v1',
        kind: 'TeamList',
        metadata: { resourceVersion: '7', remainingItemCount: 3 },
        items,
      }),
    watch: (): Promise<Watcher> =>
      Promise.resolve({
        stop() {},
        async *[Symbol.asyncIterator]() {
          yield* events;
        },
      }),
  };
}

test('a list holds only what the caller may get, and counts nothing hidden', async () => {
  const filtered = withListFiltering(
    storageWith([team('a'), team('b'), team('c')], []),
    authorizer(new Set(['b'])),
  );
  const list = await filtered.list?.(ctx, {});
  assert.deepEqual(
    list?.items.map((i) => i.metadata.name),
    ['b'],
  );
  assert.equal(list?.metadata.remainingItemCount, undefined);
  assert.equal(filtered.get, undefined, 'verbs the storage lacks stay missing');
});

test('a watch shows visible objects, turns lost ones into DELETED tombstones, and hides the rest', async () => {
  const visible = new Set(['a']);
  const events: StorageWatchEvent[] = [
    { type: 'ADDED', object: team('a') },
    { type: 'ADDED', object: team('hidden') },
    { type: 'MODIFIED', object: team('hidden', 'changed') },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '8' } } },
  ];
  const inner = storageWith([], events);
  // After the first event the caller loses access to "a".
  const auth: Authorizer = {
    authorize: async (attrs) => {
      const decision = (await authorizer(visible).authorize(attrs)).decision;
      if (attrs.name === 'a') visible.delete('a');
      return { decision };
    },
  };
  const seen: StorageWatchEvent[] = [];
  const watcher = await withListFiltering(inner, auth).watch?.(ctx, {});
  assert.ok(watcher);
  // The second look at "a" (a MODIFIED) is refused: DELETED, without the new content.
  events.splice(1, 0, { type: 'MODIFIED', object: team('a', 'new secret') });
  for await (const e of watcher) seen.push(e);
  assert.deepEqual(
    seen.map((e) => [e.type, e.object.metadata.name ?? e.object.metadata.resourceVersion]),
    [
      ['ADDED', 'a'],
      ['DELETED', 'a'],
      ['BOOKMARK', '8'],
    ],
  );
  assert.deepEqual(seen[1]?.object, {
    apiVersion: 'g/v1',
    kind: 'Team',
    metadata: { name: 'a', uid: 'uid-a', resourceVersion: '7' },
  });
});

test('the filtered resource keeps every other member of the resource, decodeProtobuf included', async () => {
  const decoded: unknown[] = [];
  const storage: RESTStorage = {
    ...storageWith([team('a')], []),
    decodeProtobuf: (raw) => {
      decoded.push(raw.length);
      return {};
    },
    get: () => Promise.resolve(team('a')),
  };
  const filtered = withListFiltering(storage, authorizer(new Set(['a'])));
  assert.deepEqual(Object.keys(filtered).sort(), ['decodeProtobuf', 'get', 'info', 'list', 'watch']);
  filtered.decodeProtobuf?.(Buffer.from([1, 2]));
  assert.deepEqual(decoded, [2]);
  assert.equal((await filtered.get?.(ctx, 'a', {}))?.metadata.name, 'a');
});
