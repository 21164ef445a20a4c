import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { age, humanDuration } from './duration.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration', () => {
  const cases: [number, string][] = [
    [-2500, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 20 * s, '3m20s'],
    [10 * m, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [5 * h + 4 * m, '5h4m'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d + 4 * h, '2d4h'],
    [3 * d, '3d'],
    [8 * d, '8d'],
    [729 * d, '729d'],
    [3 * 365 * d + 12 * d, '3y12d'],
    [9 * 365 * d, '9y'],
  ];
  for (const [ms, want] of cases) {
    it(`prints ${ms}ms as ${want}`, () => assert.equal(humanDuration(ms), want));
  }
});

describe('age', () => {
  it('measures from a creation timestamp', () => {
    const now = Date.parse('2026-07-03T04:00:00Z');
    assert.equal(age('2026-07-01T00:00:00Z', now), '2d4h');
    assert.equal(age(undefined, now), '<unknown>');
  });
});
