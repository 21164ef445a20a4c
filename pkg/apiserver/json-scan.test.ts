import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { outsideInt64, changedByDouble, scanJSON } from './json-scan.js';

describe('scanJSON', () => {
  it('counts nesting as encoding/json does: the top-level object is level 1', () => {
    assert.equal(scanJSON('{"a":[1]}', 2).tooDeep, false);
    assert.equal(scanJSON('{"a":[1]}', 1).tooDeep, true);
    assert.equal(scanJSON('1', 0).tooDeep, false);
    // Brackets inside strings are text, not nesting.
    assert.equal(scanJSON('{"a":"[[[[{{{{"}', 1).tooDeep, false);
  });

  it('scans a million levels without exhausting the stack', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    assert.equal(scanJSON(deep, 1000).tooDeep, true);
    // Text that is not JSON is scanned without a throw, whatever it holds.
    assert.equal(scanJSON('{"\\x":-' + '9'.repeat(30) + ' "', 10).tooDeep, false);
  });

  it('names duplicate keys with their path, as kjson strict errors do', () => {
    const text =
      '{"metadata":{"name":"a","name":"b"},"spec":{"items":[{"x":1},{"x":1,"x":2}]},"kind":"T","kind":"U"}';
    assert.deepEqual(scanJSON(text, 10).duplicates, ['metadata.name', 'spec.items[1].x', 'kind']);
  });

  it('compares keys by their decoded text, escapes included', () => {
    assert.deepEqual(scanJSON('{"a":1,"\\u0061":2}', 10).duplicates, ['a']);
    assert.deepEqual(scanJSON('{"a\\"":1,"a\\\\":2,"b":"x\\\\"}', 10).duplicates, []);
    // Equal values in an array are not keys.
    assert.deepEqual(scanJSON('["a","a"]', 10).duplicates, []);
  });

  it('finds integer literals beyond int64 where JSON.parse would round them', () => {
    const text =
      '{"spec":{"ok":9223372036854775807,"low":-9223372036854775808,"big":9223372036854775808,"small":-9223372036854775809,"f":9223372036854775808.5,"e":1e30},"l":[18446744073709551616]}';
    assert.deepEqual(scanJSON(text, 10).outOfRange, [
      { path: 'spec.big', literal: '9223372036854775808' },
      { path: 'spec.small', literal: '-9223372036854775809' },
      { path: 'l[0]', literal: '18446744073709551616' },
    ]);
    assert.equal(outsideInt64(2n ** 63n - 1n), false);
    assert.equal(outsideInt64(2n ** 63n), true);
    assert.equal(outsideInt64(-(2n ** 63n)), false);
  });

  it('finds integer literals within int64 that JSON.parse and JSON.stringify would change', () => {
    const text =
      '{"spec":{"safe":9007199254740991,"two53":9007199254740992,"up":9007199254740993,"down":-9007199254740995,"f":9007199254740993.5,"s":"9007199254740993"},"l":[1152921504606846977,4611686018427387904,1000000000000000000]}';
    const scan = scanJSON(text, 10);
    assert.deepEqual(scan.inexact, [
      { path: 'spec.up', literal: '9007199254740993' },
      { path: 'spec.down', literal: '-9007199254740995' },
      { path: 'l[0]', literal: '1152921504606846977' },
      // A double holds 2^62, but writes it as 4611686018427388000.
      { path: 'l[1]', literal: '4611686018427387904' },
    ]);
    assert.deepEqual(scan.outOfRange, []);
    // Without `exact`, only int64's bounds are looked at.
    assert.deepEqual(scanJSON(text, 10, false).inexact, []);
    assert.equal(changedByDouble(2n ** 53n + 1n), true);
    assert.equal(changedByDouble(2n ** 62n), true);
    assert.equal(changedByDouble(10n ** 18n), false);
  });
});
