import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';

import { newUnauthorized } from '../apis/meta/errors.js';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';
import { UnionAuthenticator } from './union.js';

const req = { headers: {} } as IncomingMessage;

function fixed(result: AuthenticatedUser | null | Error, calls: string[], name: string): Authenticator {
  return {
    authenticate: () => {
      calls.push(name);
      return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
    },
  };
}

describe('UnionAuthenticator', () => {
  it('takes the first authenticator that recognises the caller', async () => {
    const calls: string[] = [];
    const alice = { name: 'alice', groups: [] };
    const union = new UnionAuthenticator([
      fixed(null, calls, 'a'),
      fixed(alice, calls, 'b'),
      fixed({ name: 'bob', groups: [] }, calls, 'c'),
    ]);
    assert.equal(await union.authenticate(req), alice);
    assert.deepEqual(calls, ['a', 'b']);
  });

  it('stops at a 401 and answers null when nobody recognises the caller', async () => {
    const calls: string[] = [];
    const refusing = new UnionAuthenticator([
      fixed(newUnauthorized('expired'), calls, 'a'),
      fixed(null, calls, 'b'),
    ]);
    await assert.rejects(refusing.authenticate(req), /expired/);
    assert.deepEqual(calls, ['a']);
    assert.equal(await new UnionAuthenticator([fixed(null, [], 'x')]).authenticate(req), null);
  });
});
