import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Backoff } from './backoff.js';

test('Backoff doubles up to its cap and starts over on reset', () => {
  const b = new Backoff(100, 500);
  assert.deepEqual([b.step(), b.step(), b.step(), b.step(), b.step()], [100, 200, 400, 500, 500]);
  b.reset();
  assert.equal(b.step(), 100);
});

test('Backoff grows by its factor, and its jitter adds to each wait without feeding the growth', () => {
  const b = new Backoff(100, 1000, { factor: 1.6 });
  const steps = Array.from({ length: 7 }, () => b.step());
  assert.deepEqual(
    steps.map((ms) => Math.round(ms)),
    [100, 160, 256, 410, 655, 1000, 1000],
  );
  let r = 0.5;
  const jittered = new Backoff(100, 400, { jitter: 1, random: () => r });
  assert.equal(jittered.step(), 150);
  r = 0.99;
  assert.equal(Math.round(jittered.step()), 398);
  r = 0;
  assert.equal(jittered.step(), 400, 'the jitter did not make the delays grow faster');
  assert.equal(jittered.step(), 400);
  jittered.reset();
  assert.equal(jittered.step(), 100);
  // Every jittered wait lies within [delay, delay * (1 + jitter)).
  const real = new Backoff(1000, 1000, { jitter: 0.5 });
  for (let i = 0; i < 100; i++) {
    const ms = real.step();
    assert.ok(ms >= 1000 && ms < 1500, `${ms}`);
  }
});
