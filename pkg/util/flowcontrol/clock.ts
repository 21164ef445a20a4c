// The clock fair queuing reads: real in the server, fake in tests, so that the
// queueing's timing (wait limits, virtual time) is tested without sleeping.

export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, ms);
    // A queued request must not keep a stopping process alive.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** A clock that moves only when told to (tests). */
export class FakeClock implements Clock {
  private time = 0;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.time + ms, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Moves time on by `ms`, firing every timer due on the way, in order. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => !t.cancelled && t.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.cancelled = true;
      this.time = due.at;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.time = until;
  }
}
