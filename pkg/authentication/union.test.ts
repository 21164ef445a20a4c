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
    await assert.rejects(async () => refusing.authenticate(req), /expired/);
    assert.deepEqual(calls, ['a']);
    assert.equal(await new UnionAuthenticator([fixed(null, [], 'x')]).authenticate(req), null);
  });

  it('answers at once when every authenticator asked answers at once, and in order when some wait', async () => {
    const alice = { name: 'alice', groups: [] };
    const calls: string[] = [];
    const now = (result: AuthenticatedUser | null, name: string): Authenticator => ({
      authenticate: () => {
        calls.push(name);
        return result;
      },
    });
    // No promise at all: the caller gets the user itself.
    assert.equal(new UnionAuthenticator([now(null, 'a'), now(alice, 'b')]).authenticate(req), alice);
    assert.deepEqual(calls, ['a', 'b']);
    assert.equal(new UnionAuthenticator([now(null, 'c')]).authenticate(req), null);
    // A synchronous 401 ends the search as a rejected one does.
    const refusing: Authenticator = {
      authenticate: () => {
        calls.push('refuse');
        throw newUnauthorized('expired');
      },
    };
    calls.length = 0;
    assert.throws(
      () => new UnionAuthenticator([now(null, 'a'), refusing, now(alice, 'c')]).authenticate(req),
      /expired/,
    );
    assert.deepEqual(calls, ['a', 'refuse']);
    // After one that waits, the rest are still asked in order, and a later 401 still counts.
    calls.length = 0;
    const mixed = new UnionAuthenticator([now(null, 'a'), fixed(null, calls, 'b'), now(null, 'c'), refusing]);
    await assert.rejects(async () => mixed.authenticate(req), /expired/);
    assert.deepEqual(calls, ['a', 'b', 'c', 'refuse']);
    calls.length = 0;
    const found = new UnionAuthenticator([fixed(null, calls, 'a'), now(alice, 'b'), refusing]);
    assert.equal(await found.authenticate(req), alice);
    assert.deepEqual(calls, ['a', 'b']);
  });
});
