import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { teamSchema } from '../management/v1/team.js';
import { sharedSecretSchema } from '../management/v1/shared-secret.js';
import { fieldErrorString } from '../meta/field-errors.js';
import { compileSchema } from './compile.js';

describe('list types in validation', () => {
  it('refuses a set member given twice, once, at its second place', () => {
    const team = compileSchema(teamSchema());
    const errs = team.validate({
      metadata: { name: 't' },
      spec: { users: ['a', 'b', 'a', 'a'], groups: ['x'] },
    });
    assert.deepEqual(errs.map(fieldErrorString), ['spec.users[2]: Duplicate value: "a"']);
  });

  it('refuses a list-map key given twice, showing the key', () => {
    const secret = compileSchema(sharedSecretSchema());
    const errs = secret.validate({
      metadata: { name: 's' },
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Ready', status: 'False' },
        ],
      },
    });
    assert.deepEqual(errs.map(fieldErrorString), ['status.conditions[1]: Duplicate value: {"type":"Ready"}']);
  });

  it('accepts repeated values in atomic lists and distinct set members', () => {
    const team = compileSchema(teamSchema());
    const errs = team.validate({
      metadata: { name: 't', finalizers: ['x', 'x'] },
      spec: {
        users: ['a', 'b'],
        access: [
          { verbs: ['get', 'get'], users: ['a'] },
          { verbs: ['get', 'get'], users: ['a'] },
        ],
      },
    });
    assert.deepEqual(errs.map(fieldErrorString), []);
  });
});
