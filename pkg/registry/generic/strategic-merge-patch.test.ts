import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isApiError } from '../../apis/meta/errors.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

const schema: Record<string, unknown> = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        atomic: { type: 'array', items: { type: 'string' } },
        set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        keyed: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, v: { type: 'integer' }, w: { type: 'integer' } },
          },
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        nested: {
          type: 'object',
          properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
        },
      },
    },
  },
};

const original = (): Record<string, unknown> => ({
  metadata: { name: 'x', finalizers: ['a'], labels: { keep: '1' } },
  spec: {
    atomic: ['a', 'b'],
    set: ['a', 'b'],
    keyed: [
      { name: 'one', v: 1, w: 1 },
      { name: 'two', v: 2 },
    ],
    nested: { a: '1', b: '2' },
  },
});

describe('strategicMergePatch', () => {
  it('behaves like a merge patch for maps and atomic lists', () => {
    const out = strategicMergePatch(
      original(),
      { spec: { atomic: ['z'], nested: { a: null, c: '3' } } },
      schema,
    );
    assert.deepEqual((out.spec as Record<string, unknown>).atomic, ['z']);
    assert.deepEqual((out.spec as Record<string, unknown>).nested, { b: '2', c: '3' });
  });

  it('merges sets and keyed lists', () => {
    const out = strategicMergePatch(
      original(),
      {
        spec: {
          set: ['b', 'c'],
          keyed: [
            { name: 'two', v: 22 },
            { name: 'three', v: 3 },
          ],
        },
      },
      schema,
    );
    const spec = out.spec as Record<string, unknown>;
    assert.deepEqual(spec.set, ['a', 'b', 'c']);
    assert.deepEqual(spec.keyed, [
      { name: 'one', v: 1, w: 1 },
      { name: 'two', v: 22 },
      { name: 'three', v: 3 },
    ]);
  });

  it('merges metadata.finalizers as a set whatever the kind schema says', () => {
    const out = strategicMergePatch(original(), { metadata: { finalizers: ['b'] } }, { type: 'object' });
    assert.deepEqual((out.metadata as Record<string, unknown>).finalizers, ['a', 'b']);
  });

  it('replaces a map or a list on $patch: replace', () => {
    const out = strategicMergePatch(
      original(),
      {
        spec: {
          nested: { $patch: 'replace', c: '9' },
          keyed: [{ $patch: 'replace' }, { name: 'only', v: 0 }],
        },
      },
      schema,
    );
    const spec = out.spec as Record<string, unknown>;
    assert.deepEqual(spec.nested, { c: '9' });
    assert.deepEqual(spec.keyed, [{ name: 'only', v: 0 }]);
  });

  it('deletes a map on $patch: delete', () => {
    const out = strategicMergePatch(original(), { spec: { nested: { $patch: 'delete' } } }, schema);
    assert.equal((out.spec as Record<string, unknown>).nested, undefined);
  });

  it('keeps only $retainKeys', () => {
    const out = strategicMergePatch(
      original(),
      { spec: { nested: { $retainKeys: ['a', 'c'], c: '3' } } },
      schema,
    );
    assert.deepEqual((out.spec as Record<string, unknown>).nested, { a: '1', c: '3' });
  });

  it('refuses malformed directives with a 400', () => {
    const bad: Record<string, unknown>[] = [
      { spec: { nested: { $patch: 'explode' } } },
      { spec: { keyed: [{ v: 1 }] } },
      { spec: { nested: { $retainKeys: 'a' } } },
      { spec: { '$deleteFromPrimitiveList/set': 'a' } },
    ];
    for (const patch of bad) {
      assert.throws(
        () => strategicMergePatch(original(), patch, schema),
        (err: unknown) => isApiError(err) && err.code === 400,
        JSON.stringify(patch),
      );
    }
  });

  it('does not change the original', () => {
    const o = original();
    strategicMergePatch(o, { spec: { set: ['c'], nested: { a: null } } }, schema);
    assert.deepEqual(o, original());
  });
});
