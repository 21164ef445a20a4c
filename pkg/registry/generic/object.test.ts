// clone() copies plain data itself and leaves everything else to structuredClone:
// either way the copy must be what structuredClone makes, and share nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { clone } from './object.js';

describe('clone', () => {
  it('makes what structuredClone makes, for any value', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withNullPrototype: true,
          withSparseArray: true,
          withMap: true,
          withSet: true,
          withBigInt: true,
          withBoxedValues: true,
          withTypedArray: true,
        }),
        (value) => {
          assert.deepStrictEqual(clone(value), structuredClone(value));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('shares nothing with the original', () => {
    const original = {
      metadata: { name: 'a', labels: { x: 'y' } },
      spec: { list: [{ a: 1 }], none: undefined },
    };
    const copy = clone(original);
    copy.metadata.labels.x = 'changed';
    (copy.spec.list[0] as { a: number }).a = 2;
    assert.deepStrictEqual(original, {
      metadata: { name: 'a', labels: { x: 'y' } },
      spec: { list: [{ a: 1 }], none: undefined },
    });
    assert.ok('none' in copy.spec, 'an undefined member is kept, as structuredClone keeps it');
  });

  it('copies cycles, odd keys and holes as structuredClone does, and refuses what it refuses', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    const copy = clone(cyclic);
    assert.equal(copy['self'], copy);
    const proto = JSON.parse('{"__proto__":{"x":1},"b":2}') as Record<string, unknown>;
    assert.deepStrictEqual(clone(proto), structuredClone(proto));
    assert.ok(Object.hasOwn(clone(proto), '__proto__'));
    // eslint-disable-next-line no-sparse-arrays
    const holes = [1, , 3];
    assert.equal(1 in clone(holes), false);
    assert.throws(() => clone({ f: () => 1 }), { name: 'DataCloneError' });
    // (Dates are left out of the property above: an invalid Date never deep-equals itself.)
    const dated = { at: new Date(0), list: [new Date(1)] };
    assert.deepStrictEqual(clone(dated), structuredClone(dated));
  });
});
