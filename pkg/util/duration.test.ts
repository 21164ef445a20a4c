import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatDuration, parseDuration } from './duration.js';

test('durations are written as Go writes time.Duration (the form --help shows defaults in)', () => {
  for (const [ms, text] of [
    [0, '0s'],
    [500, '500ms'],
    [1_500, '1.5s'],
    [30_000, '30s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [24 * 3_600_000, '24h0m0s'],
    [720 * 3_600_000, '720h0m0s'],
    [-60_000, '-1m0s'],
    [0.25, '250µs'],
  ] as const) {
    assert.equal(formatDuration(ms), text, `${ms} ms`);
  }
});

test('what formatDuration writes, parseDuration reads back', () => {
  for (const ms of [1, 999, 1000, 61_500, 3_599_000, 3_600_000 + 1, 48 * 3_600_000]) {
    assert.equal(parseDuration(formatDuration(ms)), ms);
  }
});
