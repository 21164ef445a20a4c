import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../apis/meta/types.js';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { IdentityCache } from './identity-cache.js';
import { compileSchema } from '../apis/schema/compile.js';
import { Store } from '../registry/generic/store.js';
import { userStrategy } from '../registry/management/index.js';
import { TEAM_STATUS_MANAGER } from './status-writer.js';
import { statusTeams, TeamStatusController } from './team-status.js';

const ROOT = '/registry/g/';
const USERS = ROOT + 'users/';
const TEAMS = ROOT + 'teams/';

function obj(kind: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'g/v1', kind, metadata: { name }, spec };
}

async function eventually(fn: () => Promise<void>): Promise<void> {
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

test('User.status.teams follows team users, team groups and user groups', async (t) => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  await storage.create(USERS + 'alice', obj('User', 'alice', { groups: ['sso-devs'] }));
  await storage.create(TEAMS + 'devs', obj('Team', 'devs', { groups: ['sso-devs'] }));
  await storage.create(TEAMS + 'qa', obj('Team', 'qa', { users: ['bob', 'alice'] }));
  const cache = new IdentityCache({
    storage,
    users: USERS,
    teams: TEAMS,
    accessKeys: ROOT + 'ownedaccesskeys/',
  });
  // Through the users' status subresource, as the server wires it.
  const users = new Store({ strategy: userStrategy('g'), storage, keyPrefix: '/registry', compileSchema });
  const controller = new TeamStatusController({ cache, writer: users });
  // bob is made through the Store, as clients make users: his managedFields are tracked.
  await users.create(
    { user: { name: 'admin', groups: [] }, namespace: '', warnings: [] },
    obj('User', 'bob', {}),
    {
      dryRun: false,
      fieldManager: 'kubectl',
      fieldValidation: 'Strict',
    },
  );
  t.after(async () => {
    await controller.stop();
    await cache.stop();
    await storage.close();
  });
  controller.start();
  cache.start();
  const teamsOf = async (name: string): Promise<string[]> =>
    statusTeams((await storage.get(USERS + name)) ?? undefined);

  // On start every user is reconciled.
  await eventually(async () => {
    assert.deepEqual(await teamsOf('alice'), ['devs', 'qa']);
    assert.deepEqual(await teamsOf('bob'), ['qa']);
  });

  // A team change reaches the users it names, by name or by group.
  await storage.guaranteedUpdate(TEAMS + 'devs', () =>
    obj('Team', 'devs', { groups: ['sso-devs'], users: ['bob'] }),
  );
  await eventually(async () => assert.deepEqual(await teamsOf('bob'), ['devs', 'qa']));
  await storage.delete(TEAMS + 'qa');
  await eventually(async () => {
    assert.deepEqual(await teamsOf('alice'), ['devs']);
    assert.deepEqual(await teamsOf('bob'), ['devs']);
  });

  // A user's own groups count: losing the group leaves the team.
  await storage.guaranteedUpdate(USERS + 'alice', (cur) => ({
    ...(cur ?? obj('User', 'alice', {})),
    spec: {},
  }));
  await eventually(async () => assert.deepEqual(await teamsOf('alice'), []));

  // A status already right is not written again.
  await controller.idle();
  const rv = (await storage.get(USERS + 'bob'))?.metadata.resourceVersion;
  await storage.guaranteedUpdate(TEAMS + 'devs', (cur) => ({
    ...(cur ?? obj('Team', 'devs', {})),
    spec: { groups: ['sso-devs'], users: ['bob'], displayName: 'Devs' },
  }));
  await eventually(async () => assert.equal(cache.team('devs')?.['spec'] !== undefined, true));
  await controller.idle();
  const bob = await storage.get(USERS + 'bob');
  assert.equal(bob?.metadata.resourceVersion, rv);
  // The controller's writes are recorded under its own name, through the status subresource.
  const entry = bob?.metadata.managedFields?.find((e) => e.manager === TEAM_STATUS_MANAGER);
  assert.equal(entry?.subresource, 'status');
  assert.equal(entry?.operation, 'Update');
  // It made the status object, so it owns that too ('.'); status.teams is a set of its members.
  assert.deepEqual(entry?.fieldsV1, { 'f:status': { '.': {}, 'f:teams': { '.': {}, 'v:"devs"': {} } } });
});
