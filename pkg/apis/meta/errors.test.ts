import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError, newConflict, newForbidden, newInternalError, newNotFound, toApiError } from './errors.js';

const TEAMS = { group: 'management.platform.dev', resource: 'teams' };

/** Whether a stack names any frame (V8 writes each as a line starting "    at "). */
const hasFrames = (stack: string | undefined): boolean => /\n\s+at /.test(stack ?? '');

describe('ApiError stacks', () => {
  it('captures no frames for a refusal: nothing prints them, and they cost every refusal', () => {
    for (const err of [
      newNotFound(TEAMS, 'a'),
      newForbidden(TEAMS, 'a', 'no'),
      newConflict(TEAMS, 'a', 'changed'),
      new ApiError(429, 'TooManyRequests', 'slow down'),
      new ApiError(503, 'ServiceUnavailable', 'not ready'),
    ]) {
      assert.equal(hasFrames(err.stack), false, `${err.code}: ${err.stack}`);
      assert.equal(err.stack, `ApiError: ${err.message}`);
      assert.ok(err instanceof Error);
    }
  });

  it('keeps the frames of an internal error, and the thrown cause with its own', () => {
    assert.ok(hasFrames(newInternalError('the store failed').stack));
    const thrown = new TypeError('x is undefined');
    const wrapped = toApiError(thrown);
    assert.equal(wrapped.code, 500);
    assert.equal(wrapped.cause, thrown);
    assert.ok(hasFrames((wrapped.cause as Error).stack), 'the thrown error keeps its stack for the log');
  });

  it('leaves every other error its stack (the limit is restored)', () => {
    const before = Error.stackTraceLimit;
    newNotFound(TEAMS, 'a');
    assert.equal(Error.stackTraceLimit, before);
    assert.ok(hasFrames(new Error('a real fault').stack));
  });

  it('leaves the stack limit alone when reading a refusal\'s message throws', () => {
    const before = Error.stackTraceLimit;
    const hostile = {
      toString(): string {
        throw new TypeError('no text');
      },
    } as unknown as string;
    assert.throws(() => new ApiError(404, 'NotFound', hostile), TypeError);
    assert.equal(Error.stackTraceLimit, before);
    assert.ok(hasFrames(new Error('a later fault').stack), 'a later error still has its frames');
  });
});
