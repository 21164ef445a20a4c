// The fair-queuing bench row, short: while one user floods a server with a small
// read limit at ten times what it can serve, another user is still served, every
// time, and the flood is the one refused. Outcomes only: no timing is asserted.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFAULT_FAIRNESS, measureFairness } from './fairness.js';

test("a flooding user is refused 429s while another user's gets are all served", { timeout: 120_000 }, async () => {
  const r = await measureFairness({ ...DEFAULT_FAIRNESS, durationMs: 1000 });
  const light = Object.entries(r.lightCodes);
  assert.ok(light.length > 0, 'the light user got answers');
  assert.deepEqual(
    light.map(([code]) => code),
    ['200'],
    `the light user was answered ${JSON.stringify(r.lightCodes)}`,
  );
  assert.ok((r.floodCodes['429'] ?? 0) > 0, `the flood was answered ${JSON.stringify(r.floodCodes)}`);
});
