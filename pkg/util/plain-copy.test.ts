// plainCopy is only ever a shortcut: whenever it copies, the copy must be what the
// long way (a JSON round trip, or structuredClone) makes, key order included.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { NOT_PLAIN, plainCopy } from './plain-copy.js';

const values = fc.anything({
  withNullPrototype: true,
  withSparseArray: true,
  withMap: true,
  withBigInt: true,
  withBoxedValues: true,
  withObjectString: true,
});

describe('plainCopy', () => {
  it('under JSON rules, makes what a JSON round trip makes, in the same key order', () => {
    let copied = 0;
    fc.assert(
      fc.property(values, (value) => {
        const copy = plainCopy(value, { json: true });
        if (copy === NOT_PLAIN) return;
        copied++;
        const roundTrip: unknown = JSON.parse(JSON.stringify(value));
        assert.deepStrictEqual(copy, roundTrip);
        assert.equal(JSON.stringify(copy), JSON.stringify(roundTrip));
      }),
      { numRuns: 3000 },
    );
    assert.ok(copied > 300, `the shortcut is taken for plain data (${copied} of 3000)`);
  });

  it('with sorted keys, makes what parsing the sorted JSON makes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = plainCopy(value, { json: true, sortKeys: true });
        if (copy === NOT_PLAIN) return;
        const sorted = JSON.stringify(value, (_k, v: unknown) =>
          typeof v === 'object' && v !== null && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
            : v,
        );
        assert.equal(JSON.stringify(copy), sorted);
      }),
    );
  });

  it('leaves what JSON would change to the caller', () => {
    for (const odd of [undefined, -0, Number.NaN, 1n, [1, undefined], new Date(0), () => 1]) {
      assert.equal(plainCopy({ a: odd }, { json: true }) === NOT_PLAIN, odd !== undefined, String(odd));
    }
    assert.deepStrictEqual(plainCopy({ a: undefined, b: 1 }, { json: true }), { b: 1 });
    assert.deepStrictEqual(plainCopy({ a: undefined }, { json: false }), { a: undefined });
  });
});
