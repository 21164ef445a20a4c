import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OrderedMap } from './ordered-map.js';

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

test('ranges and counts agree with a sorted reference through thousands of inserts and deletes', () => {
  const map = new OrderedMap<number>();
  const reference = new Map<string, number>();
  const next = random(42);
  const key = (): string => `/k/${String(Math.floor(next() * 3000)).padStart(5, '0')}`;
  for (let i = 0; i < 6000; i++) {
    const k = key();
    if (next() < 0.3) {
      assert.equal(map.delete(k), reference.delete(k));
    } else {
      map.set(k, i);
      reference.set(k, i);
    }
  }
  const sorted = [...reference.keys()].sort();
  assert.equal(map.size, sorted.length);
  assert.deepEqual(
    [...map.range('', '')].map(([k]) => k),
    sorted,
  );
  for (let i = 0; i < 200; i++) {
    const [a, b] = [key(), key()].sort() as [string, string];
    const expected = sorted.filter((k) => k >= a && k < b);
    assert.deepEqual(
      [...map.range(a, b)].map(([k, v]) => [k, v]),
      expected.map((k) => [k, reference.get(k)]),
    );
    assert.equal(map.count(a, b), expected.length);
    assert.equal(map.count(a, ''), sorted.filter((k) => k >= a).length);
  }
});
