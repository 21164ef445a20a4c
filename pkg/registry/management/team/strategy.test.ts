import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { read, simulateCreate, simulateUpdate } from '../strategy-testing.js';
import { teamStrategy } from './strategy.js';

const strategy = teamStrategy('management.platform.dev');

describe('Team validation', () => {
  it('accepts a team with members, roles and rules', async () => {
    const { errors } = await simulateCreate(strategy, {
      metadata: { name: 'dev' },
      spec: {
        users: ['alice'],
        groups: ['oidc:dev'],
        clusterRoles: [{ name: 'view' }],
        access: [{ verbs: ['get', 'bind'], teams: ['ops'] }],
      },
    });
    assert.deepEqual(errors, []);
  });

  it('requires verbs in access rules and non-empty names everywhere', async () => {
    const { errors } = await simulateCreate(strategy, {
      metadata: { name: 'dev' },
      spec: {
        users: ['alice', ''],
        groups: [''],
        clusterRoles: [{}],
        access: [{ users: ['bob'] }, { verbs: ['get', ''], teams: [''] }],
      },
    });
    assert.deepEqual(errors, [
      'spec.access[0].verbs: Required value',
      'spec.users[1]: Required value',
      'spec.groups[0]: Required value',
      'spec.clusterRoles[0].name: Required value',
      'spec.access[1].verbs[1]: Required value',
      'spec.access[1].teams[0]: Required value',
    ]);
  });

  it('keeps the stored status and ignores a client’s', async () => {
    const { stored } = await simulateCreate(strategy, {
      metadata: { name: 'dev' },
      spec: {},
      status: { x: 1 },
    });
    assert.equal(stored['status'], undefined);
    const { stored: after } = await simulateUpdate(
      strategy,
      { ...read(strategy, stored), status: { y: 2 } },
      stored,
    );
    assert.equal(after['status'], undefined);
  });
});

describe('Team table', () => {
  it('shows members as short comma lists', () => {
    const obj = {
      metadata: { name: 'dev' },
      spec: { displayName: 'Developers', users: ['a', 'b', 'c', 'd', 'e'], groups: ['g1', 'g2'] },
    };
    assert.deepEqual(
      strategy.tableColumns.map((c) => [c.definition.name, c.cell(obj)]),
      [
        ['Display Name', 'Developers'],
        ['Users', 'a,b,c + 2 more...'],
        ['Groups', 'g1,g2'],
      ],
    );
  });
});
