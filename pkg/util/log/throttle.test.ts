import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LogThrottle } from './throttle.js';

/** The count of lines left out about the subject itself, or undefined when this one is left out too. */
function admitted(throttle: LogThrottle, subject: string, now: number): number | undefined {
  return throttle.admit(subject, now)?.suppressed;
}

describe('LogThrottle', () => {
  it('admits one line per subject per interval, the next one with the count left out', () => {
    const throttle = new LogThrottle({ intervalMs: 60_000 });
    const lines: (number | undefined)[] = [];
    for (let t = 0; t < 60_000; t += 100) lines.push(admitted(throttle, 'k', t));
    assert.equal(lines[0], 0);
    assert.equal(lines.filter((a) => a !== undefined).length, 1, 'one line in the minute');
    assert.equal(admitted(throttle, 'k', 60_000), 599, 'the next one counts the 599 left out');
    assert.equal(admitted(throttle, 'k', 60_001), undefined);
    assert.equal(admitted(throttle, 'k', 120_000), 1);
  });

  it('judges each subject on its own', () => {
    const throttle = new LogThrottle();
    assert.equal(admitted(throttle, 'a', 0), 0);
    assert.equal(admitted(throttle, 'b', 1), 0);
    assert.equal(admitted(throttle, 'a', 2), undefined);
    assert.equal(admitted(throttle, 'b', 3), undefined);
  });

  it('opens a new window when the clock went back', () => {
    const throttle = new LogThrottle();
    assert.equal(admitted(throttle, 'k', 10_000), 0);
    assert.equal(admitted(throttle, 'k', 11_000), undefined);
    assert.equal(admitted(throttle, 'k', 5_000), 1);
  });

  it('remembers at most maxSubjects, forgetting the oldest window first', () => {
    const throttle = new LogThrottle({ maxSubjects: 100 });
    for (let i = 0; i < 10_000; i++) {
      admitted(throttle, `key-${i}`, i);
      assert.ok(throttle.size <= 100, `size ${throttle.size} after ${i + 1} subjects`);
    }
    // The newest are remembered (still left out), the oldest forgotten (written again).
    assert.equal(admitted(throttle, 'key-9999', 10_000), undefined);
    assert.equal(admitted(throttle, 'key-0', 10_000), 0);
    assert.equal(throttle.size, 100);
  });

  it('carries the counts of the windows it forgot on the line that made room, so none is lost', () => {
    const throttle = new LogThrottle({ maxSubjects: 3 });
    for (const subject of ['a', 'b', 'c']) throttle.admit(subject, 0);
    for (let i = 0; i < 5; i++) throttle.admit('a', 1);
    for (let i = 0; i < 2; i++) throttle.admit('b', 1);
    // 'd' forgets the oldest window ('a', 5 left out): its line says so.
    assert.deepEqual(throttle.admit('d', 2), { suppressed: 0, forgotten: 5 });
    // 'e' forgets 'b' (2 left out); 'c' had none.
    assert.deepEqual(throttle.admit('e', 3), { suppressed: 0, forgotten: 2 });
    assert.deepEqual(throttle.admit('f', 4), { suppressed: 0, forgotten: 0 }, 'counted once, never again');
    // A subject's own window that simply expired is not "forgotten".
    assert.deepEqual(throttle.admit('d', 60_002), { suppressed: 0, forgotten: 0 });
  });

  it('accounts for every event across many subjects cycling past the cap', () => {
    const throttle = new LogThrottle({ maxSubjects: 10 });
    let events = 0;
    let reported = 0;
    for (let t = 0; t < 5_000; t++) {
      // Bursts on a few subjects, then a new subject now and then, pushing old ones out.
      const subject = t % 7 === 0 ? `new-${t}` : `new-${t - (t % 7)}`;
      events++;
      const line = throttle.admit(subject, t);
      if (line) reported += 1 + line.suppressed + line.forgotten;
    }
    // What is still unreported sits in the remembered windows, at most 6 a window.
    assert.ok(events - reported <= 10 * 6, `${events - reported} events neither written nor counted`);
    assert.ok(events - reported >= 0);
  });
});
