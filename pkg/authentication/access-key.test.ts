import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import type { Storage, Watcher } from '../storage/interfaces.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isApiError } from '../apis/meta/errors.js';
import { hashAccessKey } from '../apis/management/v1/owned-access-key.js';
import { AccessKeyIndex } from './access-key-index.js';
import { AccessKeyAuthenticator } from './access-key.js';
import type { AuthenticatedUser } from './interfaces.js';

const PREFIX = '/registry/management.platform.dev/ownedaccesskeys/';

function keyObject(
  name: string,
  plain: string,
  spec: Record<string, unknown> = { user: 'alice' },
): KubeObject {
  return {
    apiVersion: 'management.platform.dev/v1',
    kind: 'OwnedAccessKey',
    metadata: { name },
    spec: { ...spec, key: hashAccessKey(plain) },
  };
}

function request(authorization?: string): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization } } as IncomingMessage;
}

async function setup(t: { after(fn: () => Promise<void>): void }, wrap?: (s: Storage) => Storage) {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const index = new AccessKeyIndex({
    storage: wrap ? wrap(storage) : storage,
    prefix: PREFIX,
    maxRetryDelayMs: 50,
  });
  const authn = new AccessKeyAuthenticator(index);
  t.after(async () => {
    await index.stop();
    await storage.close();
  });
  return { storage, index, authn };
}

/** Retries `fn` until it stops throwing: watch events arrive asynchronously. */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function authStatus(
  authn: AccessKeyAuthenticator,
  token: string,
): Promise<{ code: number; message: string }> {
  try {
    await authn.authenticate(request(`Bearer ${token}`));
    return { code: 200, message: '' };
  } catch (err) {
    assert.ok(isApiError(err), `expected an ApiError, got ${String(err)}`);
    return { code: err.code, message: err.message };
  }
}

test('no Authorization header, another scheme or an empty token: no opinion', async (t) => {
  const { index, authn } = await setup(t);
  index.start();
  assert.equal(await authn.authenticate(request()), null);
  assert.equal(await authn.authenticate(request('Basic YWxpY2U6cHc=')), null);
  assert.equal(await authn.authenticate(request('Bearer ')), null);
  assert.equal(await authn.authenticate(request('')), null);
});

test('a known key authenticates as its user, with its groups and name', async (t) => {
  const { storage, index, authn } = await setup(t);
  await storage.create(
    PREFIX + 'alice-ci',
    keyObject('alice-ci', 'plain-alice', { user: 'alice', groups: ['ci', 'ops'] }),
  );
  index.start();
  const user = await authn.authenticate(request('Bearer plain-alice'));
  assert.deepEqual(user, {
    name: 'alice',
    groups: ['ci', 'ops', 'system:authenticated'],
    accessKeyName: 'alice-ci',
  } satisfies AuthenticatedUser);
  // The scheme is case-insensitive, as in Kubernetes.
  assert.equal((await authn.authenticate(request('bearer plain-alice')))?.name, 'alice');
});

test('an unknown key is 401 Unauthorized', async (t) => {
  const { storage, index, authn } = await setup(t);
  await storage.create(PREFIX + 'k', keyObject('k', 'right'));
  index.start();
  assert.deepEqual(await authStatus(authn, 'wrong'), { code: 401, message: 'Unauthorized' });
  // The stored hash itself is not a credential.
  assert.equal((await authStatus(authn, hashAccessKey('right'))).code, 401);
});

test('team and subject keys get their documented identities', async (t) => {
  const { storage, index, authn } = await setup(t);
  await storage.create(PREFIX + 'team-key', keyObject('team-key', 'tk', { team: 'devs' }));
  await storage.create(
    PREFIX + 'subject-key',
    keyObject('subject-key', 'sk', { subject: 'robot', groups: ['bots'] }),
  );
  await storage.create(PREFIX + 'nobody', keyObject('nobody', 'nk', {}));
  index.start();
  assert.deepEqual(await authn.authenticate(request('Bearer tk')), {
    name: 'team:devs',
    groups: ['team:devs', 'system:authenticated'],
    accessKeyName: 'team-key',
  });
  assert.deepEqual(await authn.authenticate(request('Bearer sk')), {
    name: 'robot',
    groups: ['bots', 'system:authenticated'],
    accessKeyName: 'subject-key',
  });
  assert.equal((await authStatus(authn, 'nk')).code, 401);
});

test('create, rotate, disable and delete take effect on the next calls', async (t) => {
  const { storage, index, authn } = await setup(t);
  index.start();
  assert.equal((await authStatus(authn, 'first')).code, 401);

  await storage.create(PREFIX + 'k', keyObject('k', 'first'));
  await eventually(async () => assert.equal((await authStatus(authn, 'first')).code, 200));

  // Rotation: the old key stops working, the new one works.
  await storage.guaranteedUpdate(PREFIX + 'k', () => keyObject('k', 'second'));
  await eventually(async () => assert.equal((await authStatus(authn, 'second')).code, 200));
  assert.equal((await authStatus(authn, 'first')).code, 401);

  // Disabled: 401 with a message that says so.
  await storage.guaranteedUpdate(PREFIX + 'k', () =>
    keyObject('k', 'second', { user: 'alice', disabled: true }),
  );
  const disabled = await eventually(async () => {
    const s = await authStatus(authn, 'second');
    assert.equal(s.code, 401);
    return s;
  });
  assert.match(disabled.message, /access key "k" is disabled/);

  // Enabled again, then deleted.
  await storage.guaranteedUpdate(PREFIX + 'k', () => keyObject('k', 'second'));
  await eventually(async () => assert.equal((await authStatus(authn, 'second')).code, 200));
  await storage.delete(PREFIX + 'k');
  await eventually(async () =>
    assert.deepEqual(await authStatus(authn, 'second'), { code: 401, message: 'Unauthorized' }),
  );
});

test('after a watch error the index relists and sees what changed meanwhile', async (t) => {
  let watches = 0;
  const failFirstWatch = (s: Storage): Storage =>
    new Proxy(s, {
      get(target, prop, receiver) {
        if (prop === 'watch') {
          return async (key: string, opts: Parameters<Storage['watch']>[1]): Promise<Watcher> => {
            watches++;
            if (watches > 1) return target.watch(key, opts);
            // Like a watch whose start revision was compacted: one ERROR, then the end.
            await target.create(PREFIX + 'late', keyObject('late', 'late-key'));
            const events = [
              {
                type: 'ERROR' as const,
                object: { metadata: {}, kind: 'Status', code: 410, reason: 'Expired', message: 'too old' },
              },
            ];
            return {
              stop() {},
              async *[Symbol.asyncIterator]() {
                yield* events;
              },
            };
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  const { index, authn } = await setup(t, failFirstWatch);
  index.start();
  await eventually(async () => assert.equal((await authStatus(authn, 'late-key')).code, 200));
  assert.ok(watches >= 2);
});

test('requests wait for the first list; a storage that never answers gives 503, not 401', async (t) => {
  let release = (): void => undefined;
  const hanging = (s: Storage): Storage =>
    new Proxy(s, {
      get(target, prop, receiver) {
        if (prop === 'getList') {
          return () => new Promise((_resolve, reject) => (release = () => reject(new Error('released'))));
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const index = new AccessKeyIndex({ storage: hanging(storage), prefix: PREFIX });
  t.after(async () => {
    release();
    await index.stop();
    await storage.close();
  });
  index.start();
  const authn = new AccessKeyAuthenticator(index, { syncTimeoutMs: 50 });
  assert.equal((await authStatus(authn, 'anything')).code, 503);
  assert.equal(index.hasSynced, false);
});

test('waitForKey resolves once a key with that hash arrives, and false when none does', async (t) => {
  const { storage, index } = await setup(t);
  index.start();
  const waiting = index.waitForKey(hashAccessKey('soon'), 10_000);
  await storage.create(PREFIX + 'soon', keyObject('soon', 'soon'));
  assert.equal(await waiting, true);
  assert.equal(await index.waitForKey(hashAccessKey('never'), 30), false);
});
