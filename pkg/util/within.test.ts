import assert from 'node:assert/strict';
import { test } from 'node:test';

import { settlesWithin } from './within.js';

test('true for a promise that settles in time, false for one that does not', async () => {
  assert.equal(await settlesWithin(Promise.resolve(1), 60_000), true);
  assert.equal(await settlesWithin(Promise.reject(new Error('x')), 60_000), true);
  assert.equal(await settlesWithin(new Promise(() => {}), 1), false);
});
