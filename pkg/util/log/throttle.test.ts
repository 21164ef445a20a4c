import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LogThrottle } from './throttle.js';

describe('LogThrottle', () => {
  it('admits one line per subject per interval, the next one with the count left out', () => {
    const throttle = new LogThrottle({ intervalMs: 60_000 });
    const admitted: (number | undefined)[] = [];
    for (let t = 0; t < 60_000; t += 100) admitted.push(throttle.admit('k', t));
    assert.equal(admitted[0], 0);
    assert.equal(admitted.filter((a) => a !== undefined).length, 1, 'one line in the minute');
    assert.equal(throttle.admit('k', 60_000), 599, 'the next one counts the 599 left out');
    assert.equal(throttle.admit('k', 60_001), undefined);
    assert.equal(throttle.admit('k', 120_000), 1);
  });

  it('judges each subject on its own', () => {
    const throttle = new LogThrottle();
    assert.equal(throttle.admit('a', 0), 0);
    assert.equal(throttle.admit('b', 1), 0);
    assert.equal(throttle.admit('a', 2), undefined);
    assert.equal(throttle.admit('b', 3), undefined);
  });

  it('opens a new window when the clock went back', () => {
    const throttle = new LogThrottle();
    assert.equal(throttle.admit('k', 10_000), 0);
    assert.equal(throttle.admit('k', 11_000), undefined);
    assert.equal(throttle.admit('k', 5_000), 1);
  });

  it('remembers at most maxSubjects, forgetting the oldest window first', () => {
    const throttle = new LogThrottle({ maxSubjects: 100 });
    for (let i = 0; i < 10_000; i++) {
      throttle.admit(`key-${i}`, i);
      assert.ok(throttle.size <= 100, `size ${throttle.size} after ${i + 1} subjects`);
    }
    // The newest are remembered (still left out), the oldest forgotten (written again).
    assert.equal(throttle.admit('key-9999', 10_000), undefined);
    assert.equal(throttle.admit('key-0', 10_000), 0);
    assert.equal(throttle.size, 100);
  });
});
