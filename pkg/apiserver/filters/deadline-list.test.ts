// The request deadlines under one timer, on a fake clock: each request expires at
// its own deadline (not before, and on the first timer firing at or after it), a
// request that finished is never expired and is let go at once, and the timer is
// armed only while something waits.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { RequestDeadlines, type DeadlineClock, type DeadlineEntry, type DeadlineList } from './deadline-list.js';

class Entry implements DeadlineEntry {
  expiresAt = Infinity;
  armedIn: DeadlineList | undefined;
  prevArmed: DeadlineEntry | undefined;
  nextArmed: DeadlineEntry | undefined;
  constructor(readonly name: string) {}
}

/** A clock whose time moves only when told, firing the timer when it is due. */
class FakeClock implements DeadlineClock {
  time = 0;
  private timer: { fire: () => void; at: number } | undefined;
  timersSet = 0;
  now(): number {
    return this.time;
  }
  setTimer(fire: () => void, ms: number): unknown {
    this.timersSet++;
    this.timer = { fire, at: this.time + ms };
    return this.timer;
  }
  clearTimer(handle: unknown): void {
    if (this.timer === handle) this.timer = undefined;
  }
  get armed(): boolean {
    return this.timer !== undefined;
  }
  /** Moves time on by `ms`, firing the timer whenever it comes due. */
  advance(ms: number): void {
    const end = this.time + ms;
    while (this.timer && this.timer.at <= end) {
      const { fire, at } = this.timer;
      this.timer = undefined;
      this.time = at;
      fire();
    }
    this.time = end;
  }
}

function setup(commonMs = 1000): {
  clock: FakeClock;
  deadlines: RequestDeadlines<Entry>;
  expired: [string, number][];
} {
  const clock = new FakeClock();
  const expired: [string, number][] = [];
  const deadlines = new RequestDeadlines<Entry>(commonMs, (e) => expired.push([e.name, clock.time]), clock);
  return { clock, deadlines, expired };
}

describe('request deadlines under one timer', () => {
  it('expires each request at its own deadline, in order, whatever its timeout', () => {
    const { clock, deadlines, expired } = setup();
    deadlines.arm(new Entry('a'), 1000);
    clock.advance(100);
    deadlines.arm(new Entry('b'), 1000);
    deadlines.arm(new Entry('short'), 250); // a ?timeout= shorter than the server's
    clock.advance(200);
    deadlines.arm(new Entry('c'), 1000);
    clock.advance(5000);
    assert.deepEqual(expired, [
      ['short', 350],
      ['a', 1000],
      ['b', 1100],
      ['c', 1300],
    ]);
    assert.equal(deadlines.size, 0);
    assert.equal(clock.armed, false, 'no timer once nothing waits');
  });

  it('never expires a request that finished, and lets it go at once', () => {
    const { clock, deadlines, expired } = setup();
    const entries = ['a', 'b', 'c', 'd'].map((n) => new Entry(n));
    for (const e of entries) deadlines.arm(e, 1000);
    const other = new Entry('own-timeout');
    deadlines.arm(other, 500);
    // Finished in time: the head, one in the middle, the tail, and the only one of its list.
    for (const e of [entries[0], entries[2], entries[3], other]) if (e) deadlines.disarm(e);
    assert.equal(deadlines.size, 1);
    assert.equal(deadlines.otherLists, 0, "a client's own timeout length is not kept once unused");
    assert.equal(entries[0]?.armedIn, undefined);
    assert.equal(entries[0]?.nextArmed, undefined, 'a finished request holds no other');
    clock.advance(999);
    assert.deepEqual(expired, []);
    clock.advance(1);
    assert.deepEqual(expired, [['b', 1000]]);
    deadlines.disarm(entries[1] ?? new Entry('x')); // disarming an expired one is a no-op
  });

  it('sets the timer about once per timeout length under steady load, not per request', () => {
    const { clock, deadlines, expired } = setup(1000);
    // 10,000 requests, one every ms, each finishing 5 ms after it was armed.
    const inFlight: Entry[] = [];
    for (let i = 0; i < 10_000; i++) {
      const e = new Entry(String(i));
      deadlines.arm(e, 1000);
      inFlight.push(e);
      if (inFlight.length > 5) deadlines.disarm(inFlight.shift() ?? e);
      clock.advance(1);
    }
    assert.deepEqual(expired, []);
    assert.ok(clock.timersSet <= 20, `${clock.timersSet} timers set`);
    for (const e of inFlight) deadlines.disarm(e);
    assert.equal(deadlines.size, 0);
  });

  it('re-arms when the timer fires before the earliest deadline is due', () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const deadlines = new RequestDeadlines<Entry>(1000, (e) => expired.push(e.name), {
      now: () => clock.now(),
      // A timer that fires 10 ms early, as a timer measured from a stale loop time can.
      setTimer: (fire, ms) => clock.setTimer(fire, Math.max(1, ms - 10)),
      clearTimer: (h) => clock.clearTimer(h),
    });
    deadlines.arm(new Entry('a'), 1000);
    clock.advance(995);
    assert.deepEqual(expired, [], 'not before its deadline');
    clock.advance(5);
    assert.deepEqual(expired, ['a']);
  });

  it('keeps expiring the others when one expiry throws', () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const deadlines = new RequestDeadlines<Entry>(
      100,
      (e) => {
        if (e.name === 'bad') throw new Error('cannot answer');
        expired.push(e.name);
      },
      clock,
    );
    for (const name of ['a', 'bad', 'b']) deadlines.arm(new Entry(name), 100);
    clock.advance(100);
    assert.deepEqual(expired, ['a', 'b']);
  });
});
