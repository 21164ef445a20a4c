import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import type { Storage } from '../storage/interfaces.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isApiError } from '../apis/meta/errors.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { IdentityCache } from '../identity/identity-cache.js';
import { AccessKeyAuthenticator, EXPIRED_MESSAGE, sameHash, type AccessKeyUse } from './access-key.js';

const GROUP = 'management.platform.dev';
const ROOT = `/registry/${GROUP}/`;
const KEYS = ROOT + 'ownedaccesskeys/';
const USERS = ROOT + 'users/';
const TEAMS = ROOT + 'teams/';
const ANNOTATION = tokenGenerationAnnotation(GROUP);
const FORMER_OWNER = formerOwnerAnnotation(GROUP);

function keyObject(
  name: string,
  plain: string,
  spec: Record<string, unknown> = { user: 'alice' },
  meta: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name, creationTimestamp: new Date().toISOString(), ...meta },
    spec: { ...spec, key: hashAccessKey(plain) },
  };
}

function userObject(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name }, spec };
}

function request(authorization?: string): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization } } as IncomingMessage;
}

interface Setup {
  storage: Storage;
  cache: IdentityCache;
  authn: AccessKeyAuthenticator;
  clock: { now: number };
  used: string[];
}

async function setup(
  t: { after(fn: () => Promise<void>): void },
  options: { passUnknownTokens?: boolean; lastUse?: number } = {},
): Promise<Setup> {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  await storage.create(USERS + 'alice', userObject('alice', { groups: ['devs'] }));
  const cache = new IdentityCache({
    storage,
    users: USERS,
    teams: TEAMS,
    accessKeys: KEYS,
    maxRetryDelayMs: 50,
  });
  const clock = { now: Date.now() };
  const used: string[] = [];
  const use: AccessKeyUse = {
    record: (key) => used.push(key.metadata.name ?? ''),
    lastUse: () => options.lastUse,
  };
  const authn = new AccessKeyAuthenticator(cache, {
    generationAnnotation: ANNOTATION,
    formerOwnerAnnotation: FORMER_OWNER,
    revisionAnnotation: keyRevisionAnnotation(GROUP),
    now: () => clock.now,
    use,
    ...(options.passUnknownTokens ? { passUnknownTokens: true } : {}),
  });
  t.after(async () => {
    await cache.stop();
    await storage.close();
  });
  return { storage, cache, authn, clock, used };
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
  const { cache, authn } = await setup(t);
  cache.start();
  assert.equal(await authn.authenticate(request()), null);
  assert.equal(await authn.authenticate(request('Basic YWxpY2U6cHc=')), null);
  assert.equal(await authn.authenticate(request('Bearer ')), null);
  assert.equal(await authn.authenticate(request('')), null);
});

test("a key authenticates as its user, with the key's and the user's groups, name, type and scope", async (t) => {
  const { storage, cache, authn, used } = await setup(t);
  const scope = { roles: [{ role: 'platformCLI' }] };
  await storage.create(
    KEYS + 'alice-ci',
    keyObject('alice-ci', 'plain-alice', { user: 'alice', groups: ['ci', 'ops'], type: 'User', scope }),
  );
  cache.start();
  const user = await authn.authenticate(request('Bearer plain-alice'));
  assert.deepEqual(user, {
    name: 'alice',
    groups: ['ci', 'ops', 'devs', 'system:authenticated'],
    accessKeyName: 'alice-ci',
    accessKeyType: 'User',
    scope,
  });
  // The scheme is case-insensitive, as in Kubernetes; every success is noted as activity.
  assert.equal((await authn.authenticate(request('bearer plain-alice')))?.name, 'alice');
  assert.deepEqual(used, ['alice-ci', 'alice-ci']);
});

test('an unknown key is 401 Unauthorized, or no opinion when other authenticators read bearer tokens', async (t) => {
  const { storage, cache, authn } = await setup(t);
  await storage.create(KEYS + 'k', keyObject('k', 'right'));
  cache.start();
  assert.deepEqual(await authStatus(authn, 'wrong'), { code: 401, message: 'Unauthorized' });
  // The stored hash itself is not a credential.
  assert.equal((await authStatus(authn, hashAccessKey('right'))).code, 401);

  const passing = new AccessKeyAuthenticator(cache, {
    generationAnnotation: ANNOTATION,
    formerOwnerAnnotation: FORMER_OWNER,
    revisionAnnotation: keyRevisionAnnotation(GROUP),
    passUnknownTokens: true,
  });
  assert.equal(await passing.authenticate(request('Bearer wrong')), null);
  assert.equal((await passing.authenticate(request('Bearer right')))?.name, 'alice');
});

test('team and subject keys get their documented identities', async (t) => {
  const { storage, cache, authn } = await setup(t);
  await storage.create(TEAMS + 'devs', {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name: 'devs' },
  });
  await storage.create(KEYS + 'team-key', keyObject('team-key', 'tk', { team: 'devs' }));
  await storage.create(
    KEYS + 'subject-key',
    keyObject('subject-key', 'sk', { subject: 'robot', groups: ['bots'] }),
  );
  await storage.create(KEYS + 'nobody', keyObject('nobody', 'nk', {}));
  await storage.create(KEYS + 'lost-team', keyObject('lost-team', 'lt', { team: 'gone' }));
  cache.start();
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
  assert.deepEqual(await authStatus(authn, 'lt'), {
    code: 401,
    message: 'the team "gone" of the access key "lost-team" does not exist; use another key',
  });
});

test('create, rotate, disable and delete take effect on the next calls', async (t) => {
  const { storage, cache, authn } = await setup(t);
  cache.start();
  assert.equal((await authStatus(authn, 'first')).code, 401);

  await storage.create(KEYS + 'k', keyObject('k', 'first'));
  await eventually(async () => assert.equal((await authStatus(authn, 'first')).code, 200));

  // Rotation: the old key stops working, the new one works.
  await storage.guaranteedUpdate(KEYS + 'k', () => keyObject('k', 'second'));
  await eventually(async () => assert.equal((await authStatus(authn, 'second')).code, 200));
  assert.equal((await authStatus(authn, 'first')).code, 401);

  // Disabled: 401 with a message that says so.
  await storage.guaranteedUpdate(KEYS + 'k', () =>
    keyObject('k', 'second', { user: 'alice', disabled: true }),
  );
  const disabled = await eventually(async () => {
    const s = await authStatus(authn, 'second');
    assert.equal(s.code, 401);
    return s;
  });
  assert.equal(
    disabled.message,
    'the access key "k" is disabled; ask an administrator to enable it or use another key',
  );

  // Enabled again, then deleted.
  await storage.guaranteedUpdate(KEYS + 'k', () => keyObject('k', 'second'));
  await eventually(async () => assert.equal((await authStatus(authn, 'second')).code, 200));
  await storage.delete(KEYS + 'k');
  await eventually(async () =>
    assert.deepEqual(await authStatus(authn, 'second'), { code: 401, message: 'Unauthorized' }),
  );
});

test("the user's state decides: missing, disabled, or tokens invalidated since the key was made", async (t) => {
  const { storage, cache, authn } = await setup(t);
  await storage.create(KEYS + 'ghost-key', keyObject('ghost-key', 'gk', { user: 'ghost' }));
  await storage.create(
    KEYS + 'gen1',
    keyObject('gen1', 'g1', { user: 'alice' }, { annotations: { [ANNOTATION]: '1' } }),
  );
  await storage.create(KEYS + 'old', keyObject('old', 'g0', { user: 'alice' }));
  cache.start();
  assert.deepEqual(await authStatus(authn, 'gk'), {
    code: 401,
    message:
      'the user "ghost" of the access key "ghost-key" does not exist; ask an administrator to create the user or use another key',
  });
  assert.equal((await authStatus(authn, 'g0')).code, 200);

  await storage.guaranteedUpdate(USERS + 'alice', () => userObject('alice', { tokenGeneration: 1 }));
  const revoked = await eventually(async () => {
    const s = await authStatus(authn, 'g0');
    assert.equal(s.code, 401);
    return s;
  });
  assert.equal(
    revoked.message,
    'the access key "old" was revoked: the tokens of user "alice" were invalidated; please log in again',
  );
  // A key made under generation 1 still works.
  assert.equal((await authStatus(authn, 'g1')).code, 200);

  await storage.guaranteedUpdate(USERS + 'alice', () =>
    userObject('alice', { tokenGeneration: 1, disabled: true }),
  );
  const disabled = await eventually(async () => {
    const s = await authStatus(authn, 'g1');
    assert.equal(s.code, 401);
    return s;
  });
  assert.equal(disabled.message, 'the user "alice" is disabled; ask an administrator to enable the user');
});

test('ttl counts from creation, or from the last activity', async (t) => {
  const { storage, cache, authn, clock } = await setup(t);
  const created = '2030-01-01T00:00:00Z';
  const start = Date.parse(created);
  await storage.create(
    KEYS + 'short',
    keyObject('short', 'short', { user: 'alice', ttl: 60 }, { creationTimestamp: created }),
  );
  const idle = keyObject(
    'idle',
    'idle',
    { user: 'alice', ttl: 60, ttlAfterLastActivity: true },
    { creationTimestamp: created },
  );
  await storage.create(KEYS + 'idle', { ...idle, status: { lastActivity: '2030-01-01T00:10:00Z' } });
  cache.start();

  clock.now = start + 59_000;
  assert.equal((await authStatus(authn, 'short')).code, 200);
  clock.now = start + 60_000;
  assert.deepEqual(await authStatus(authn, 'short'), { code: 401, message: EXPIRED_MESSAGE });

  // Ten minutes after creation, but used at 00:10:00: still good until 00:11:00.
  clock.now = start + 10 * 60_000 + 59_000;
  assert.equal((await authStatus(authn, 'idle')).code, 200);
  clock.now = start + 11 * 60_000;
  assert.deepEqual(await authStatus(authn, 'idle'), { code: 401, message: EXPIRED_MESSAGE });
});

test('a use this replica saw but has not written yet keeps a ttlAfterLastActivity key alive', async (t) => {
  const created = '2030-01-01T00:00:00Z';
  const start = Date.parse(created);
  const { storage, cache, authn, clock } = await setup(t, { lastUse: start + 5 * 60_000 });
  await storage.create(
    KEYS + 'idle',
    keyObject(
      'idle',
      'idle',
      { user: 'alice', ttl: 60, ttlAfterLastActivity: true },
      { creationTimestamp: created },
    ),
  );
  cache.start();
  clock.now = start + 5 * 60_000 + 30_000;
  assert.equal((await authStatus(authn, 'idle')).code, 200);
  clock.now = start + 6 * 60_000;
  assert.deepEqual(await authStatus(authn, 'idle'), { code: 401, message: EXPIRED_MESSAGE });
});

test('requests wait for the first list; a storage that never answers gives 503, not 401', async (t) => {
  let release = (): void => undefined;
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const hanging = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === 'getList') {
        return () => new Promise((_resolve, reject) => (release = () => reject(new Error('released'))));
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const cache = new IdentityCache({ storage: hanging, users: USERS, teams: TEAMS, accessKeys: KEYS });
  t.after(async () => {
    release();
    await cache.stop();
    await storage.close();
  });
  cache.start();
  const authn = new AccessKeyAuthenticator(cache, {
    generationAnnotation: ANNOTATION,
    formerOwnerAnnotation: FORMER_OWNER,
    revisionAnnotation: keyRevisionAnnotation(GROUP),
    syncTimeoutMs: 50,
  });
  assert.equal((await authStatus(authn, 'anything')).code, 503);
  assert.equal(cache.hasSynced, false);
});

test("a deleted user's keys authenticate nobody before the collector removes them", async (t) => {
  const { storage, cache, authn } = await setup(t);
  await storage.delete(USERS + 'alice');
  await storage.create(USERS + 'alice', {
    ...userObject('alice'),
    metadata: { name: 'alice', uid: 'first-uid' },
  });
  const ref = { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'first-uid' };
  await storage.create(KEYS + 'k', keyObject('k', 'plain-k', { user: 'alice' }, { ownerReferences: [ref] }));
  cache.start();
  assert.equal((await authStatus(authn, 'plain-k')).code, 200);

  // Being deleted (a foreground delete waits with a finalizer): the key is already dead.
  await storage.guaranteedUpdate(USERS + 'alice', (cur) => ({
    ...cur!,
    metadata: {
      ...cur!.metadata,
      deletionTimestamp: new Date().toISOString(),
      finalizers: ['foregroundDeletion'],
    },
  }));
  const gone = {
    code: 401,
    message:
      'the user "alice" the access key "k" was made for no longer exists; use another key (a user created again with that name does not inherit it)',
  };
  await eventually(async () => assert.deepEqual(await authStatus(authn, 'plain-k'), gone));

  // Deleted and re-created under the same name: the old key does not speak for the new user,
  // and says so as it did while she was gone (its holder is not told she exists again).
  await storage.delete(USERS + 'alice');
  await eventually(async () => assert.equal(cache.user('alice'), undefined));
  assert.deepEqual(await authStatus(authn, 'plain-k'), gone);
  await storage.create(USERS + 'alice', {
    ...userObject('alice'),
    metadata: { name: 'alice', uid: 'another-uid' },
  });
  await eventually(async () => assert.ok(cache.user('alice')?.metadata.uid === 'another-uid'));
  assert.deepEqual(await authStatus(authn, 'plain-k'), gone);
});

test('a key orphaned from a deleted user does not speak for a user re-created under that name', async (t) => {
  const { storage, cache, authn } = await setup(t);
  await storage.guaranteedUpdate(USERS + 'alice', (cur) => ({
    ...cur!,
    metadata: { ...cur!.metadata, uid: 'new-uid' },
  }));
  // The orphaning delete of the first alice (uid old-uid) removed the reference and recorded her.
  await storage.create(
    KEYS + 'orphan',
    keyObject('orphan', 'plain-orphan', { user: 'alice' }, { annotations: { [FORMER_OWNER]: 'old-uid' } }),
  );
  await storage.create(KEYS + 'legacy', keyObject('legacy', 'plain-legacy', { user: 'alice' }));
  cache.start();
  const r = await authStatus(authn, 'plain-orphan');
  assert.equal(r.code, 401);
  // What it says with no alice at all: alice exists (again), which the key's holder is not told.
  assert.equal(
    r.message,
    'the user "alice" the access key "orphan" was made for no longer exists; use another key (a user created again with that name does not inherit it)',
  );
  // A key stored before keys named their owner still works for the user it names.
  assert.equal((await authStatus(authn, 'plain-legacy')).code, 200);
});

test('stored hashes compare equal only when every character is', () => {
  const a = hashAccessKey('a'.repeat(64));
  assert.equal(sameHash(a, hashAccessKey('a'.repeat(64))), true);
  assert.equal(sameHash(a, hashAccessKey('b'.repeat(64))), false);
  // One character off, at either end; a prefix; the empty string.
  assert.equal(sameHash(a, `${a.slice(0, -1)}${a.endsWith('0') ? '1' : '0'}`), false);
  assert.equal(sameHash(a, `x${a.slice(1)}`), false);
  assert.equal(sameHash(a, a.slice(0, -1)), false);
  assert.equal(sameHash(a, ''), false);
});
