import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError, newNotFound } from '../../apis/meta/errors.js';
import {
  expired,
  expiredContinue,
  invalidContinue,
  invalidObj,
  invalidResourceVersion,
  keyExists,
  keyNotFound,
  StorageError,
  tooLargeResourceVersion,
} from '../../storage/errors.js';
import { interpretStorageError } from './errors.js';

const gr = { group: 'g.io', resource: 'teams' };

function api(err: unknown, operation: Parameters<typeof interpretStorageError>[3] = 'get'): ApiError {
  const out = interpretStorageError(err, gr, 'foo', operation);
  assert.ok(out instanceof ApiError, `not an ApiError: ${String(out)}`);
  return out;
}

describe('interpretStorageError', () => {
  it('maps missing and existing keys', () => {
    assert.equal(api(keyNotFound('/k')).message, 'teams.g.io "foo" not found');
    assert.equal(api(keyNotFound('/k')).code, 404);
    const exists = api(keyExists('/k'), 'create');
    assert.equal(exists.code, 409);
    assert.equal(exists.reason, 'AlreadyExists');
    assert.equal(api(keyExists('/k'), 'update').reason, 'Conflict');
  });

  it('maps failed preconditions to a Conflict that carries the storage detail', () => {
    const err = api(
      invalidObj('/k', 0, 'Precondition failed: UID in precondition: a, UID in object meta: b'),
      'update',
    );
    assert.equal(err.code, 409);
    assert.equal(
      err.message,
      'Operation cannot be fulfilled on teams.g.io "foo": StorageError: invalid object, Code: 4, Key: /k, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: a, UID in object meta: b',
    );
  });

  it('maps a too large resourceVersion to a 504 with the ResourceVersionTooLarge cause', () => {
    const err = api(tooLargeResourceVersion(200, 150));
    assert.equal(err.code, 504);
    assert.equal(err.message, 'Timeout: Too large resource version: 200, current: 150');
    assert.deepEqual(err.details?.causes, [
      { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
    ]);
    assert.equal(err.details?.retryAfterSeconds, 1);
  });

  it('maps Expired to 410, with the continue token in the Status when there is one', () => {
    const plain = api(expired('The resourceVersion for the provided list is too old.'), 'list');
    assert.equal(plain.code, 410);
    assert.equal(plain.reason, 'Expired');
    assert.deepEqual(plain.toStatus().metadata, {});
    const paging = api(expiredContinue('too old', 'tok'), 'list');
    assert.deepEqual(paging.toStatus().metadata, { continue: 'tok' });
    assert.equal(paging.toStatus().code, 410);
  });

  it('maps bad continue tokens and resource versions to 400', () => {
    assert.equal(
      api(invalidContinue('continue key is not valid: x'), 'list').message,
      'invalid continue token: continue key is not valid: x',
    );
    const rv = api(invalidResourceVersion('abc'), 'list');
    assert.equal(rv.code, 400);
    assert.match(rv.message, /^invalid resource version/);
  });

  it('maps an unreachable store to a ServerTimeout and internal errors to 500', () => {
    const t = api(new StorageError('Unreachable', '/k', 'down'), 'list');
    assert.equal(t.code, 500);
    assert.equal(t.reason, 'ServerTimeout');
    assert.equal(
      t.message,
      'The list operation against teams.g.io could not be completed at this time, please try again.',
    );
    assert.equal(api(new StorageError('Internal', '/k', 'boom')).code, 500);
  });

  it('passes ApiErrors and foreign errors through', () => {
    const nf = newNotFound(gr, 'x');
    assert.equal(interpretStorageError(nf, gr, 'foo', 'get'), nf);
    const other = new TypeError('x');
    assert.equal(interpretStorageError(other, gr, 'foo', 'get'), other);
  });
});
