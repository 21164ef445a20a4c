import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { read, simulateCreate, simulateUpdate } from '../strategy-testing.js';
import { userStrategy } from './strategy.js';

const strategy = userStrategy('management.platform.dev');

describe('User validation', () => {
  it('accepts a plain user', async () => {
    const { errors } = await simulateCreate(strategy, {
      metadata: { name: 'alice' },
      spec: { username: 'alice', email: 'alice@example.com', tokenGeneration: 0, disabled: false },
    });
    assert.deepEqual(errors, []);
  });

  it('rejects a negative token generation and a malformed email', async () => {
    const { errors } = await simulateCreate(strategy, {
      metadata: { name: 'alice' },
      spec: { email: 'alice at example.com', tokenGeneration: -1 },
    });
    assert.deepEqual(errors, [
      'spec.email: Invalid value: "alice at example.com": must be a valid email address',
      'spec.tokenGeneration: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('rejects a token generation that is not an integer through the schema', async () => {
    const { errors } = await simulateCreate(strategy, {
      metadata: { name: 'a' },
      spec: { tokenGeneration: 'two' },
    });
    assert.deepEqual(errors, [
      'spec.tokenGeneration: Invalid value: "string": spec.tokenGeneration in body must be of type integer: "string"',
    ]);
  });

  it('keeps the computed teams in status', async () => {
    const old = { metadata: { name: 'alice' }, spec: {}, status: { teams: ['dev'] } };
    const { stored } = await simulateUpdate(
      strategy,
      { ...read(strategy, old), status: { teams: ['admins'] } },
      old,
    );
    assert.deepEqual(stored['status'], { teams: ['dev'] });
  });
});

describe('User table', () => {
  it('shows display name, username, email and disabled', () => {
    const obj = {
      metadata: { name: 'a' },
      spec: { displayName: 'Alice', username: 'alice', email: 'a@x', disabled: true },
    };
    assert.deepEqual(
      strategy.tableColumns.map((c) => [c.definition.name, c.cell(obj)]),
      [
        ['Display Name', 'Alice'],
        ['Username', 'alice'],
        ['Email', 'a@x'],
        ['Disabled', true],
      ],
    );
    assert.equal(strategy.tableColumns[3]?.cell({ metadata: {} }), false);
  });
});

describe('User tokenGeneration', () => {
  it('may grow but not go back: that would revive revoked keys', async () => {
    const old = { metadata: { name: 'dave' }, spec: { tokenGeneration: 2 } };
    const up = await simulateUpdate(
      strategy,
      { metadata: { name: 'dave' }, spec: { tokenGeneration: 3 } },
      old,
    );
    assert.deepEqual(up.errors, []);
    const down = await simulateUpdate(strategy, { metadata: { name: 'dave' }, spec: {} }, old);
    assert.deepEqual(down.errors, [
      'spec.tokenGeneration: Invalid value: 0: may not be decreased (it is 2): that would make revoked tokens valid again',
    ]);
  });
});
