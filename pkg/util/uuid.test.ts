import assert from 'node:assert/strict';
import { test } from 'node:test';

import { randomUUID } from './uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('randomUUID gives version 4, variant 10 UUIDs in lower case', () => {
  // Past several refills of the batch, so a refill's boundary is crossed.
  for (let i = 0; i < 1000; i++) assert.match(randomUUID(), V4);
});

test('randomUUID never repeats itself and every hex digit varies', () => {
  const seen = new Set<string>();
  const digitsAt = Array.from({ length: 36 }, () => new Set<string>());
  for (let i = 0; i < 5000; i++) {
    const id = randomUUID();
    assert.ok(!seen.has(id), `repeated ${id}`);
    seen.add(id);
    for (let c = 0; c < 36; c++) digitsAt[c]?.add(id[c] ?? '');
  }
  for (let c = 0; c < 36; c++) {
    const digits = digitsAt[c]?.size ?? 0;
    if (c === 8 || c === 13 || c === 18 || c === 23) assert.equal(digits, 1, `position ${c} is a dash`);
    else if (c === 14) assert.equal(digits, 1, 'the version digit');
    else if (c === 19) assert.equal(digits, 4, 'the variant digit: 8, 9, a or b');
    else assert.equal(digits, 16, `position ${c} takes every hex digit`);
  }
});

test('each UUID is its own flat string, not a view of the reused buffer', () => {
  const a = randomUUID();
  const copy = `${a}`;
  randomUUID();
  assert.equal(a, copy);
});
