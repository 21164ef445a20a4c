import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../apis/meta/types.js';
import { IdentityCache } from '../identity/identity-cache.js';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { CallerResolver } from './caller.js';

const ROOT = '/registry/g/';
const team = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'g/v1',
  kind: 'Team',
  metadata: { name },
  spec,
});

async function resolverWith(
  teams: KubeObject[],
): Promise<{ callers: CallerResolver; storage: KVStorage; stop: () => Promise<void> }> {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  for (const t of teams) await storage.create(`${ROOT}teams/${t.metadata.name ?? ''}`, t);
  const cache = new IdentityCache({
    storage,
    users: `${ROOT}users/`,
    teams: `${ROOT}teams/`,
    accessKeys: `${ROOT}ownedaccesskeys/`,
  });
  const callers = new CallerResolver(cache, { adminUsername: 'admin', adminRole: 'platform-admin' });
  cache.start();
  assert.ok(await cache.waitForSync(10_000));
  return { callers, storage, stop: () => cache.stop() };
}

test('only a team key speaks for a team: a host identity called team:<name> is a plain user', async (t) => {
  const { callers, stop } = await resolverWith([team('ops', { clusterRoles: [{ name: 'platform-admin' }] })]);
  t.after(stop);
  const key = callers.resolve({ name: 'team:ops', groups: ['team:ops', 'system:authenticated'] });
  assert.equal(key.team, 'ops');
  assert.equal(key.admin, true);
  const host = callers.resolve({ name: 'team:ops', groups: ['system:authenticated'], hostIdentity: true });
  assert.equal(host.team, '');
  assert.deepEqual([...host.teams], []);
  assert.equal(host.admin, false);
});

test('admin teams follow the teams as they change', async (t) => {
  const { callers, storage, stop } = await resolverWith([team('ops', { users: ['ann'] })]);
  t.after(stop);
  const ann = { name: 'ann', groups: ['system:authenticated'] };
  assert.equal(callers.resolve(ann).admin, false);
  await storage.guaranteedUpdate(`${ROOT}teams/ops`, (cur) => ({
    ...(cur as KubeObject),
    spec: { users: ['ann'], clusterRoles: [{ name: 'platform-admin' }] },
  }));
  const deadline = Date.now() + 10_000;
  while (!callers.resolve({ ...ann }).admin) {
    assert.ok(Date.now() < deadline, 'ann never became an administrator');
    await new Promise((r) => setTimeout(r, 10));
  }
  await storage.delete(`${ROOT}teams/ops`);
  while (callers.resolve({ ...ann }).admin) {
    assert.ok(Date.now() < deadline, 'ann stayed an administrator');
    await new Promise((r) => setTimeout(r, 10));
  }
});
