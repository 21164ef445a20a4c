// Authentication and authorization of a request must cost the same whether the
// server holds one key, one user and one team or 10,000 keys, 1,000 users and 100
// teams: every look-up is an index, never a scan. Timing would be flaky, so this
// counts work instead: every call into the identity cache, and every element any
// Map or Set iteration visits while the requests are decided. A scan of stored
// keys, users, teams or access rules anywhere on the path makes the counts differ.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../apis/meta/types.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { AccessKeyAuthenticator } from '../authentication/access-key.js';
import { IdentityCache } from '../identity/identity-cache.js';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { newPlatformAuthorization } from './index.js';
import { resourceAttributes } from './permissions.js';

const G = 'management.platform.dev';
const ROOT = `/registry/${G}/`;
const ADMIN_ROLE = 'platform-admin';

const obj = (kind: string, name: string, spec: Record<string, unknown>, namespace?: string): KubeObject => ({
  apiVersion: `${G}/v1`,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}), creationTimestamp: new Date().toISOString() },
  spec,
});
const key = (name: string, owner: Record<string, unknown>, plain: string): KubeObject =>
  obj('OwnedAccessKey', name, { ...owner, key: hashAccessKey(plain) });

/** The callers and objects every scenario has. */
function fixtures(): [string, KubeObject][] {
  return [
    [`users/reader`, obj('User', 'reader', {})],
    [`users/sso-user`, obj('User', 'sso-user', { groups: ['sso-devs'] })],
    [`users/boss`, obj('User', 'boss', {})],
    [`teams/team-0`, obj('Team', 'team-0', { users: ['reader'] })],
    [`teams/sso-team`, obj('Team', 'sso-team', { groups: ['sso-devs'] })],
    [`teams/admins`, obj('Team', 'admins', { users: ['boss'], clusterRoles: [{ name: ADMIN_ROLE }] })],
    [`ownedaccesskeys/reader-key`, key('reader-key', { user: 'reader' }, 'reader-secret')],
    [`ownedaccesskeys/sso-key`, key('sso-key', { user: 'sso-user' }, 'sso-secret')],
    [`ownedaccesskeys/boss-key`, key('boss-key', { user: 'boss' }, 'boss-secret')],
    [`ownedaccesskeys/team-key`, key('team-key', { team: 'team-0' }, 'team-secret')],
    [
      `sharedsecrets/p-1/s-0`,
      obj('SharedSecret', 's-0', { access: [{ verbs: ['get'], users: ['reader'] }] }, 'p-1'),
    ],
  ];
}

/** Stored objects unrelated to the callers: what a busy server holds besides. */
function filler(keys: number, users: number, teams: number, secrets: number): [string, KubeObject][] {
  const out: [string, KubeObject][] = [];
  for (let u = 0; u < users; u++)
    out.push([`users/member-${u}`, obj('User', `member-${u}`, { groups: [`g-${u % 50}`] })]);
  for (let t = 1; t <= teams; t++) {
    const members: string[] = [];
    for (let u = t; u < users; u += teams) members.push(`member-${u}`);
    out.push([`teams/team-${t}`, obj('Team', `team-${t}`, { users: members, groups: [`g-${t % 50}`] })]);
  }
  for (let k = 0; k < keys; k++)
    out.push([`ownedaccesskeys/key-${k}`, key(`key-${k}`, { user: `member-${k % users}` }, `k${k}`)]);
  for (let s = 1; s <= secrets; s++)
    out.push([
      `sharedsecrets/p-1/s-${s}`,
      obj('SharedSecret', `s-${s}`, { access: [{ verbs: ['*'], users: [`member-${s}`] }] }, 'p-1'),
    ]);
  return out;
}

interface Counts {
  readonly calls: Record<string, number>;
  readonly iterated: number;
  readonly decisions: string[];
}

/** Counts every element visited by Map and Set iteration while `counting` is on. */
const iteration = { counting: false, visited: 0 };
function countIterations(): () => void {
  const restore: (() => void)[] = [];
  for (const proto of [Map.prototype, Set.prototype] as unknown as Record<PropertyKey, unknown>[]) {
    for (const method of ['keys', 'values', 'entries', Symbol.iterator] as PropertyKey[]) {
      const original = proto[method] as (this: unknown) => Iterator<unknown>;
      proto[method] = function (this: unknown): Iterator<unknown> {
        const inner = original.call(this);
        if (!iteration.counting) return inner;
        const counted = {
          next: (): IteratorResult<unknown> => {
            const r = inner.next();
            if (!r.done) iteration.visited++;
            return r;
          },
          [Symbol.iterator]: () => counted,
        };
        return counted;
      };
      restore.push(() => (proto[method] = original));
    }
    const forEach = proto['forEach'] as (this: unknown, fn: (...a: unknown[]) => void) => void;
    proto['forEach'] = function (this: unknown, fn: (...a: unknown[]) => void): void {
      forEach.call(this, (...a: unknown[]) => {
        if (iteration.counting) iteration.visited++;
        fn(...a);
      });
    };
    restore.push(() => (proto['forEach'] = forEach));
  }
  return () => restore.forEach((r) => r());
}

async function measure(extra: [string, KubeObject][]): Promise<Counts> {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  for (const [path, o] of [...fixtures(), ...extra]) await storage.create(ROOT + path, o);
  const cache = new IdentityCache({
    storage,
    users: ROOT + 'users/',
    teams: ROOT + 'teams/',
    accessKeys: ROOT + 'ownedaccesskeys/',
    accessHolders: [{ resource: 'sharedsecrets', prefix: ROOT + 'sharedsecrets/' }],
  });
  cache.start();
  try {
    assert.ok(await cache.waitForSync(30_000));
    const calls: Record<string, number> = {};
    // Every method of the cache, counted, for whoever holds it.
    const counted = new Proxy(cache, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        return (...args: unknown[]): unknown => {
          if (iteration.counting) calls[prop] = (calls[prop] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(receiver, args);
        };
      },
    });
    const authn = new AccessKeyAuthenticator(counted, {
      generationAnnotation: tokenGenerationAnnotation(G),
      formerOwnerAnnotation: formerOwnerAnnotation(G),
      revisionAnnotation: keyRevisionAnnotation(G),
    });
    const { authorizer } = newPlatformAuthorization({
      group: G,
      cache: counted,
      adminUsername: 'admin',
      adminRole: ADMIN_ROLE,
      listableResources: ['users', 'teams', 'ownedaccesskeys', 'sharedsecrets'],
    });
    const requests: [string, { verb: string; resource: string; name: string; namespace?: string }][] = [
      ['reader-secret', { verb: 'get', resource: 'users', name: 'reader' }],
      ['reader-secret', { verb: 'get', resource: 'teams', name: 'team-0' }],
      ['reader-secret', { verb: 'get', resource: 'sharedsecrets', name: 's-0', namespace: 'p-1' }],
      ['reader-secret', { verb: 'get', resource: 'ownedaccesskeys', name: 'reader-key' }],
      ['reader-secret', { verb: 'get', resource: 'users', name: 'member-1' }],
      ['reader-secret', { verb: 'delete', resource: 'sharedsecrets', name: 's-1', namespace: 'p-1' }],
      ['sso-secret', { verb: 'get', resource: 'teams', name: 'sso-team' }],
      ['team-secret', { verb: 'get', resource: 'teams', name: 'team-0' }],
      ['team-secret', { verb: 'get', resource: 'users', name: 'reader' }],
      ['boss-secret', { verb: 'delete', resource: 'users', name: 'member-2' }],
      ['reader-secret', { verb: 'list', resource: 'teams', name: '' }],
    ];
    const decisions: string[] = [];
    iteration.visited = 0;
    iteration.counting = true;
    try {
      // Twice: the first request of a caller and the ones after it.
      for (let round = 0; round < 2; round++) {
        for (const [token, q] of requests) {
          const req = {
            headers: { authorization: `Bearer ${token}` },
            socket: {},
          } as unknown as IncomingMessage;
          const user = await authn.authenticate(req);
          assert.ok(user);
          const result = await authorizer.authorize(resourceAttributes(user, { group: G, ...q }));
          decisions.push(`${user.name} ${q.verb} ${q.resource}/${q.name}: ${result.decision}`);
        }
      }
    } finally {
      iteration.counting = false;
    }
    return { calls, iterated: iteration.visited, decisions };
  } finally {
    await cache.stop();
  }
}

test('authentication and authorization do the same work with 10,000 keys, 1,000 users and 100 teams stored as with a handful', async () => {
  const restore = countIterations();
  try {
    const small = await measure([]);
    const large = await measure(filler(10_000, 1000, 100, 1000));
    // The requests are decided as they should be (so the counts are of real work).
    assert.deepEqual(small.decisions.slice(0, 11), [
      'reader get users/reader: allow',
      'reader get teams/team-0: allow',
      'reader get sharedsecrets/s-0: allow',
      'reader get ownedaccesskeys/reader-key: allow',
      'reader get users/member-1: deny',
      'reader delete sharedsecrets/s-1: deny',
      'sso-user get teams/sso-team: allow',
      'team:team-0 get teams/team-0: allow',
      'team:team-0 get users/reader: deny',
      'boss delete users/member-2: allow',
      'reader list teams/: allow',
    ]);
    assert.deepEqual(large.decisions, small.decisions);
    assert.deepEqual(large.calls, small.calls);
    assert.equal(large.iterated, small.iterated);
    // Nothing on the path lists a whole collection.
    for (const scan of ['allUserNames', 'allTeams', 'usersInGroup'])
      assert.equal(small.calls[scan] ?? 0, 0, `${scan} called on the request path`);
  } finally {
    restore();
  }
});
