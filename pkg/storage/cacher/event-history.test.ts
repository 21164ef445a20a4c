// The window's sizing rules, on a fake clock: it grows through a burst, shrinks back
// once writes slow down, stays within its bounds, and says when an event has left it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  capacityUpperBound,
  DEFAULT_LOWER_BOUND,
  DEFAULT_UPPER_BOUND,
  defaultHistorySizing,
  EventHistory,
  eventFreshMs,
  fixedHistorySizing,
} from './event-history.js';

interface Ev {
  readonly rev: number;
}

/** A ring on a clock the test moves, with events numbered 1, 2, 3, ... */
function ring(lowerBound: number, upperBound: number, freshMs = 1000) {
  let t = 0;
  let rev = 0;
  const history = new EventHistory<Ev>({ lowerBound, upperBound, freshMs, now: () => t });
  return {
    history,
    /** Pushes `n` events, the clock moving `stepMs` before each. */
    push(n: number, stepMs = 0): void {
      for (let i = 0; i < n; i++) {
        t += stepMs;
        history.push({ rev: ++rev });
      }
    },
    advance(ms: number): void {
      t += ms;
    },
    revs: (): number[] => Array.from({ length: history.length }, (_, i) => history.at(i).rev),
  };
}

describe('event history', () => {
  it('starts at the lower bound and doubles while a full window is all fresh, keeping every event', () => {
    const r = ring(4, 64);
    assert.equal(r.history.capacity, 4);
    r.push(4, 1);
    assert.equal(r.history.capacity, 4);
    r.push(1, 1); // full, oldest 4 ms old: grows instead of dropping
    assert.equal(r.history.capacity, 8);
    r.push(27, 1);
    assert.equal(r.history.capacity, 32);
    assert.deepEqual(r.revs(), Array.from({ length: 32 }, (_, i) => i + 1));
    assert.equal(r.history.evictedSinceClear, false);
  });

  it('stops at the upper bound and then drops its oldest event', () => {
    const r = ring(4, 16);
    r.push(16);
    assert.equal(r.history.capacity, 16);
    assert.equal(r.history.evictedSinceClear, false);
    r.push(1);
    assert.equal(r.history.capacity, 16);
    assert.equal(r.history.evictedSinceClear, true);
    assert.deepEqual(r.revs(), Array.from({ length: 16 }, (_, i) => i + 2));
  });

  it('does not grow when its oldest event is no longer fresh: a slow resource keeps the lower bound', () => {
    const r = ring(4, 64, 1000);
    r.push(40, 400); // 4 events span 1.2 s > 1 s
    assert.equal(r.history.capacity, 4);
    assert.deepEqual(r.revs(), [37, 38, 39, 40]);
    assert.equal(r.history.evictedSinceClear, true);
  });

  it('halves, once writes slow down, each time its newest quarter reaches past the fresh duration', () => {
    const r = ring(4, 64, 1000);
    r.push(16); // a burst at t=0
    assert.equal(r.history.capacity, 16);
    r.advance(5000);
    r.push(1); // newest quarter 5 s old: keep the newest 8, drop one more for the new event
    assert.equal(r.history.capacity, 8);
    assert.deepEqual(r.revs(), [10, 11, 12, 13, 14, 15, 16, 17]);
    r.push(1, 1);
    assert.equal(r.history.capacity, 4);
    assert.deepEqual(r.revs(), [15, 16, 17, 18]);
    r.push(1, 1); // the newest quarter (event 18) is fresh now: no further change
    assert.equal(r.history.capacity, 4);
    r.advance(10_000);
    r.push(8, 5000);
    assert.equal(r.history.capacity, 4, 'never below the lower bound');
  });

  it('does not shrink while only older events are stale (no flapping)', () => {
    const r = ring(4, 64, 1000);
    r.push(16); // t=0
    r.advance(900);
    r.push(1); // the window is full of events 0.9 s old at most: still fresh, grows
    assert.equal(r.history.capacity, 32);
    r.push(15);
    r.advance(600);
    r.push(1); // full; the oldest is 1.5 s old, but the newest quarter is 0.6 s old
    assert.equal(r.history.capacity, 32);
  });

  it('a fixed window never resizes', () => {
    let t = 0;
    const history = new EventHistory<Ev>(fixedHistorySizing(5, () => t));
    for (let rev = 1; rev <= 50; rev++) history.push({ rev });
    assert.equal(history.capacity, 5);
    t = 1e9;
    for (let rev = 51; rev <= 60; rev++) history.push({ rev });
    assert.equal(history.capacity, 5);
    assert.equal(history.at(0).rev, 56);
  });

  it('a relist empties it but keeps its size, and clears the evicted mark', () => {
    const r = ring(2, 8);
    r.push(9);
    assert.equal(r.history.capacity, 8);
    assert.equal(r.history.evictedSinceClear, true);
    r.history.clear();
    assert.equal(r.history.length, 0);
    assert.equal(r.history.capacity, 8);
    assert.equal(r.history.evictedSinceClear, false);
    r.push(3);
    assert.deepEqual(r.revs(), [10, 11, 12]);
  });

  it('finds and drops by revision across the ring boundary', () => {
    const r = ring(8, 8);
    r.push(13); // events 6..13, wrapped
    assert.equal(r.history.firstAfter(0), 0);
    assert.equal(r.history.firstAfter(9), 4);
    assert.equal(r.history.firstAfter(13), 8);
    r.history.dropThrough(9);
    assert.deepEqual(r.revs(), [10, 11, 12, 13]);
  });

  it("sizes the window as kube-apiserver does for its request timeout", () => {
    assert.equal(DEFAULT_LOWER_BOUND, 100);
    assert.equal(DEFAULT_UPPER_BOUND, 102_400);
    assert.equal(eventFreshMs(undefined), 75_000);
    assert.equal(eventFreshMs(60_000), 75_000, 'the default --request-timeout keeps 75 s');
    assert.equal(eventFreshMs(120_000), 135_000);
    assert.equal(capacityUpperBound(75_000), 102_400);
    assert.equal(capacityUpperBound(10_000), 102_400);
    assert.equal(capacityUpperBound(90_000), 204_800);
    assert.equal(capacityUpperBound(150_000), 204_800);
    assert.equal(capacityUpperBound(151_000), 409_600);
    assert.equal(capacityUpperBound(1e12), 102_400 * 2 ** 14, 'within a 32-bit integer');
    const sizing = defaultHistorySizing(eventFreshMs(120_000));
    assert.deepEqual([sizing.lowerBound, sizing.upperBound, sizing.freshMs], [100, 204_800, 135_000]);
  });
});
