import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../../apis/meta/types.js';
import { read, simulateCreate, simulateUpdate } from '../strategy-testing.js';
import { MAX_SECRET_SIZE, sharedSecretStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const strategy = sharedSecretStrategy(GROUP);

function secret(data: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name: 's', namespace: 'p-a' }, spec: { data, ...extra } };
}

describe('SharedSecret validation', () => {
  it('accepts config-style keys with base64 values', async () => {
    const { errors } = await simulateCreate(
      strategy,
      secret({ 'my-key': 'dmFsdWU=', KEY_2: '', '.dot.file': 'YQ==' }),
    );
    assert.deepEqual(errors, []);
  });

  it('rejects a bad key with Kubernetes’ secret key message, naming the key', async () => {
    const { errors } = await simulateCreate(strategy, secret({ 'my key': 'YQ==' }));
    assert.deepEqual(errors, [
      "spec.data[my key]: Invalid value: \"my key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
  });

  it('rejects the directory names and over-long keys', async () => {
    const { errors } = await simulateCreate(
      strategy,
      secret({ '.': 'YQ==', '..': 'YQ==', '..x': 'YQ==', ['k'.repeat(254)]: 'YQ==' }),
    );
    assert.deepEqual(errors, [
      'spec.data[.]: Invalid value: ".": must not be \'.\'',
      'spec.data[..]: Invalid value: "..": must not be \'..\'',
      'spec.data[..x]: Invalid value: "..x": must not start with \'..\'',
      `spec.data[${'k'.repeat(254)}]: Invalid value: "${'k'.repeat(254)}": must be no more than 253 characters`,
    ]);
  });

  it('rejects a value that is not base64 without printing it', async () => {
    const { errors } = await simulateCreate(strategy, secret({ password: 'hunter2' }));
    assert.deepEqual(errors, [
      'spec.data[password]: Invalid value: spec.data[password] in body must be of type byte',
    ]);
  });

  it('limits the decoded data to 1 MiB', async () => {
    const big = Buffer.alloc(MAX_SECRET_SIZE / 2 + 1).toString('base64');
    const { errors } = await simulateCreate(strategy, secret({ a: big, b: big }));
    assert.deepEqual(errors, ['spec.data: Too long: must have at most 1048576 bytes']);
  });

  it('checks owner and access rules', async () => {
    const { errors } = await simulateCreate(
      strategy,
      secret({}, { owner: { user: 'a', team: 'b' }, access: [{ verbs: [], users: [''] }] }),
    );
    assert.deepEqual(errors, [
      'spec.owner.team: Forbidden: may not be set together with owner.user',
      'spec.access[0].verbs: Required value: at least one verb is required',
      'spec.access[0].users[0]: Required value',
    ]);
  });
});

describe('SharedSecret status', () => {
  it('ignores status on create and keeps the stored status on update', async () => {
    const conditions = [{ type: 'Synced', status: 'True' }];
    const { stored } = await simulateCreate(strategy, { ...secret({}), status: { conditions } });
    assert.equal(stored['status'], undefined);
    const withStatus = { ...stored, status: { conditions } };
    const { stored: after } = await simulateUpdate(
      strategy,
      { ...read(strategy, withStatus), status: { conditions: [{ type: 'Synced', status: 'False' }] } },
      withStatus,
    );
    assert.deepEqual(after['status'], { conditions });
  });
});

describe('SharedSecret table', () => {
  it('shows the display name and the number of keys', () => {
    const obj = secret({ a: 'YQ==', b: 'Yg==' }, { displayName: 'Registry' });
    assert.deepEqual(
      strategy.tableColumns.map((c) => [c.definition.name, c.definition.type, c.cell(obj)]),
      [
        ['Display Name', 'string', 'Registry'],
        ['Keys', 'integer', 2],
      ],
    );
    assert.deepEqual(
      strategy.tableColumns.map((c) => c.cell({ metadata: { name: 'x' } })),
      ['', 0],
    );
  });
});
