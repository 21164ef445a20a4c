import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../apis/meta/types.js';
import type { Storage } from '../storage/interfaces.js';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { compileSchema } from '../apis/schema/compile.js';
import { Store } from '../registry/generic/store.js';
import { ownedAccessKeyStrategy } from '../registry/management/index.js';
import { AccessKeyActivity, rfc3339Seconds, storedLastActivity } from './activity.js';
import { ACCESS_KEY_ACTIVITY_MANAGER } from './status-writer.js';
import { silentLogger } from '../util/log/index.js';

/** The keys' Store over `storage`: the writer goes through its status subresource. */
function keysStore(storage: Storage): Store {
  return new Store({ strategy: ownedAccessKeyStrategy('g'), storage, keyPrefix: '/registry', compileSchema });
}

const KEYS = '/registry/g/ownedaccesskeys/';

function key(name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'g/v1',
    kind: 'OwnedAccessKey',
    metadata: { name },
    spec: { user: 'alice' },
    ...extra,
  };
}

/** Storage that counts the writes guaranteedUpdate makes. */
function counting(storage: Storage): { storage: Storage; writes: () => number } {
  let writes = 0;
  const proxy = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === 'guaranteedUpdate') {
        return async (...args: Parameters<Storage['guaranteedUpdate']>) => {
          const before = (await target.get(args[0], { ignoreNotFound: true }))?.metadata.resourceVersion;
          const out = await target.guaranteedUpdate(...args);
          if (out.metadata.resourceVersion !== before) writes++;
          return out;
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { storage: proxy, writes: () => writes };
}

test('many uses within an interval make one write, off the request path', async (t) => {
  const raw = new KVStorage(SqliteKV.open(':memory:'));
  t.after(() => raw.close());
  const { storage, writes } = counting(raw);
  // Made by a client, so its managedFields are tracked.
  const made = {
    manager: 'kubectl',
    operation: 'Update' as const,
    apiVersion: 'g/v1',
    time: '2030-01-01T00:00:00Z',
    fieldsType: 'FieldsV1' as const,
    fieldsV1: { 'f:spec': { '.': {}, 'f:user': {} } },
  };
  const stored = await raw.create(KEYS + 'k', key('k', { metadata: { name: 'k', managedFields: [made] } }));
  let now = Date.parse('2030-01-01T00:00:00Z');
  const activity = new AccessKeyActivity({
    writer: keysStore(storage),
    intervalMs: 60_000,
    now: () => now,
  });
  t.after(() => activity.stop());

  for (let i = 0; i < 100; i++) {
    activity.record(stored);
    now += 100;
  }
  // Recording never writes by itself.
  assert.equal(writes(), 0);
  assert.equal(activity.lastUse('k'), now - 100);
  await activity.flush();
  assert.equal(writes(), 1);
  const after = await raw.get(KEYS + 'k');
  assert.equal(after?.['status'] && storedLastActivity(after), Date.parse(rfc3339Seconds(now - 100)));
  // The rest of the key is untouched.
  assert.deepEqual(after?.['spec'], { user: 'alice' });
  // The write went through the status subresource, under the writer's own name.
  const entry = after?.metadata.managedFields?.find((e) => e.manager === ACCESS_KEY_ACTIVITY_MANAGER);
  assert.equal(entry?.subresource, 'status');
  assert.deepEqual(entry?.fieldsV1, { 'f:status': { '.': {}, 'f:lastActivity': {} } });
});

test('a value another replica wrote in the same second counts as written', async (t) => {
  const raw = new KVStorage(SqliteKV.open(':memory:'));
  t.after(() => raw.close());
  const { storage, writes } = counting(raw);
  const now = Date.parse('2030-01-01T00:00:00Z');
  const fresh = await raw.create(KEYS + 'k', key('k', { status: { lastActivity: rfc3339Seconds(now) } }));
  const activity = new AccessKeyActivity({
    writer: keysStore(storage),
    intervalMs: 60_000,
    now: () => now,
  });
  t.after(() => activity.stop());
  activity.record(fresh);
  await activity.flush();
  assert.equal(writes(), 0);
});

test('a key deleted before its write is forgotten quietly', async (t) => {
  const raw = new KVStorage(SqliteKV.open(':memory:'));
  t.after(() => raw.close());
  const stored = await raw.create(KEYS + 'gone', key('gone'));
  const warnings: string[] = [];
  const activity = new AccessKeyActivity({
    writer: keysStore(raw),
    logger: {
      ...silentLogger,
      info: () => undefined,
      warn: (m) => warnings.push(m),
      error: (m) => warnings.push(m),
    },
  });
  t.after(() => activity.stop());
  activity.record(stored);
  await raw.delete(KEYS + 'gone');
  await activity.flush();
  assert.equal(await raw.get(KEYS + 'gone', { ignoreNotFound: true }), null);
  assert.deepEqual(warnings, []);
  assert.equal(activity.lastUse('gone'), undefined);
});
