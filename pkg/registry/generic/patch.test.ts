import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../../apis/meta/errors.js';
import { MAX_NESTING_DEPTH, nestingDepth, nestsDeeperThan } from './object.js';
import { applyPatch, preparePatch } from './patch.js';

const SCHEMA = { type: 'object' };

/** `{"a":{"a":...}}` nested `levels` deep (an empty object at the bottom). */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

function refused(code: number, pattern: RegExp) {
  return (err: unknown): boolean =>
    err instanceof ApiError &&
    err.code === code &&
    pattern.test(`${err.message} ${JSON.stringify(err.details?.causes ?? [])}`);
}

describe('nesting depth', () => {
  it('measures iteratively, at any depth', () => {
    assert.equal(nestingDepth(1), 0);
    assert.equal(nestingDepth({}), 1);
    assert.equal(nestingDepth({ a: [1, { b: [] }] }), 4);
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(nestsDeeperThan(deep), true);
    assert.equal(nestsDeeperThan(nested(MAX_NESTING_DEPTH)), false);
    assert.equal(nestsDeeperThan(nested(MAX_NESTING_DEPTH + 1)), true);
  });
});

describe('patches that would nest too deep or grow without bound', () => {
  const current = { metadata: { name: 'x' }, spec: { v: 'y'.repeat(1000) } };

  it('refuses a JSON patch whose copies add more than the copy limit (json-patch AccumulatedCopySizeLimit)', () => {
    // Each copy doubles the spec: forty of them would be a terabyte.
    const ops: Record<string, unknown>[] = [];
    for (let i = 0; i < 40; i++) ops.push({ op: 'copy', from: '/spec', path: `/spec/c${i}` });
    const prepared = preparePatch('json', ops);
    assert.throws(
      () => applyPatch(current, prepared, SCHEMA),
      // Upstream's bare 422: patch.go keeps no cause for a patch that fails to apply.
      refused(422, /the server rejected our request due to an error in our request/),
    );
    // A few copies are fine.
    const few = preparePatch('json', [{ op: 'copy', from: '/spec/v', path: '/spec/w' }]);
    assert.deepEqual((applyPatch(current, few, SCHEMA) as { spec: { w: string } }).spec.w, current.spec.v);
  });

  it('refuses a JSON patch that nests the object past the limit, one operation at a time', () => {
    const value = nested(MAX_NESTING_DEPTH - 2);
    const ok = applyPatch(current, preparePatch('json', [{ op: 'add', path: '/spec/d', value }]), SCHEMA);
    assert.equal(nestingDepth(ok), MAX_NESTING_DEPTH);
    const ops = [
      { op: 'add', path: '/spec/d', value },
      { op: 'copy', from: '/spec/d', path: '/spec/d/a/a/a/e' },
    ];
    assert.throws(
      () => applyPatch(current, preparePatch('json', ops), SCHEMA),
      refused(422, /exceeded max depth of 1000/),
    );
    const moves = [
      { op: 'add', path: '/spec/d', value },
      { op: 'add', path: '/spec/e', value: { f: {} } },
      { op: 'move', from: '/spec/d', path: '/spec/e/f/g' },
    ];
    assert.throws(
      () => applyPatch(current, preparePatch('json', moves), SCHEMA),
      refused(422, /exceeded max depth/),
    );
  });

  it('refuses merge and strategic merge results past the limit', () => {
    const patch = { spec: { d: nested(MAX_NESTING_DEPTH - 1) } };
    for (const type of ['merge', 'strategic'] as const) {
      assert.throws(
        () => applyPatch(current, preparePatch(type, patch), SCHEMA),
        refused(422, /exceeded max depth/),
      );
      const fits = { spec: { d: nested(MAX_NESTING_DEPTH - 2) } };
      assert.equal(nestingDepth(applyPatch(current, preparePatch(type, fits), SCHEMA)), MAX_NESTING_DEPTH);
    }
  });
});
