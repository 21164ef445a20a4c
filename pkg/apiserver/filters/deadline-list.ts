// Request deadlines without a timer per request. Node's own http server checks
// every connection's requestTimeout and headersTimeout from one
// `connectionsCheckingInterval` rather than a timer each; here, in the same spirit,
// every armed request sits in a list, and one timer is armed for the earliest
// deadline of them all.
//
// Requests with the same timeout expire in the order they were armed, so each
// timeout gets a FIFO list (as Node's timers keep one list per duration): arming
// appends at the tail, the earliest deadline of a list is its head, and a request
// that ends before its deadline unlinks itself. The links live in the entry itself
// (the request's scope), so arming and disarming allocate nothing and a finished
// request is never held until its deadline passes.
//
// The one timer is armed for the earliest head. A head that finished before its
// deadline does not re-arm it: when the timer fires it expires whatever is due and
// re-arms for the earliest deadline still waiting, so under steady load it fires
// about once per timeout length, not per request. A deadline fires when it is due,
// at the latest when the timer's own callback runs (the same lateness a per-request
// timer has): there is no coarser tick to add slack. Time is the monotonic clock,
// so a wall-clock step neither fires deadlines early nor holds them back.

/** What a list holds: the links and deadline live in the entry, so arming allocates nothing. */
export interface DeadlineEntry {
  /** Monotonic ms (the clock's now()) at which the entry expires; meaningful while armed. */
  expiresAt: number;
  /** The list the entry is armed in, or undefined when not armed. */
  armedIn: DeadlineList | undefined;
  prevArmed: DeadlineEntry | undefined;
  nextArmed: DeadlineEntry | undefined;
}

/** Where the lists read the time and arm their timer; tests pass a fake. */
export interface DeadlineClock {
  /** Monotonic ms. */
  now(): number;
  /** Calls `fire` after about `ms`; the returned handle must not hold the process open. */
  setTimer(fire: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

const SYSTEM_CLOCK: DeadlineClock = {
  now: () => performance.now(),
  setTimer: (fire, ms) => setTimeout(fire, ms).unref(),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Entries armed with one timeout length, in the order armed (so in deadline order). */
export class DeadlineList {
  head: DeadlineEntry | undefined;
  tail: DeadlineEntry | undefined;
  constructor(
    readonly timeoutMs: number,
    /** Told when the list empties (its owner drops a list no longer in use). */
    readonly onEmpty: (list: DeadlineList) => void,
  ) {}
}

/**
 * Takes `entry` out of the list it is armed in (its request finished in time); a
 * no-op when it is not armed. The entry needs no reference to the lists' owner.
 */
export function disarmDeadline(entry: DeadlineEntry): void {
  const list = entry.armedIn;
  if (!list) return;
  const { prevArmed, nextArmed } = entry;
  if (prevArmed) prevArmed.nextArmed = nextArmed;
  else list.head = nextArmed;
  if (nextArmed) nextArmed.prevArmed = prevArmed;
  else list.tail = prevArmed;
  entry.armedIn = undefined;
  entry.prevArmed = undefined;
  entry.nextArmed = undefined;
  if (!list.head) list.onEmpty(list);
  // The timer stays armed: when it fires it finds nothing due and re-arms (or stops).
}

/** The common list is never dropped. */
const NOTHING = (): void => undefined;

/** Longest delay Node's timers take; a later deadline just re-arms when it fires. */
const MAX_TIMER_MS = 0x7fffffff;

export class RequestDeadlines<E extends DeadlineEntry> {
  /** One list per timeout length in use; a list leaves once empty. */
  private readonly lists = new Map<number, DeadlineList>();
  /** The list of the server's own timeout, kept apart: nearly every request is armed in it. */
  private readonly common: DeadlineList;
  private timer: unknown;
  /** When the timer fires (Infinity: not armed). */
  private timerAt = Infinity;

  constructor(
    /** The timeout most requests get (--request-timeout): its list is never dropped. */
    commonTimeoutMs: number,
    /** Called for each entry whose deadline passed, already unlinked. */
    private readonly onExpired: (entry: E) => void,
    private readonly clock: DeadlineClock = SYSTEM_CLOCK,
  ) {
    this.common = new DeadlineList(commonTimeoutMs, NOTHING);
  }

  /** Expires `entry` `timeoutMs` from now unless it is disarmed first. */
  arm(entry: E, timeoutMs: number): void {
    if (entry.armedIn) disarmDeadline(entry);
    let list = timeoutMs === this.common.timeoutMs ? this.common : this.lists.get(timeoutMs);
    if (!list) {
      list = new DeadlineList(timeoutMs, this.dropList);
      this.lists.set(timeoutMs, list);
    }
    const expiresAt = this.clock.now() + timeoutMs;
    entry.expiresAt = expiresAt;
    entry.armedIn = list;
    entry.nextArmed = undefined;
    entry.prevArmed = list.tail;
    if (list.tail) list.tail.nextArmed = entry;
    else list.head = entry;
    list.tail = entry;
    if (expiresAt < this.timerAt) this.armTimer(expiresAt);
  }

  /** Takes `entry` out of its list (it finished in time); a no-op when not armed. */
  disarm(entry: E): void {
    disarmDeadline(entry);
  }

  /** A list of a timeout no request uses any more (a client's own ?timeout=). */
  private readonly dropList = (list: DeadlineList): void => {
    if (this.lists.get(list.timeoutMs) === list) this.lists.delete(list.timeoutMs);
  };

  /** Timeout lengths with a list besides the common one (tests: an emptied list is dropped). */
  get otherLists(): number {
    return this.lists.size;
  }

  /** Entries armed now (tests). */
  get size(): number {
    let n = 0;
    for (const list of [this.common, ...this.lists.values()]) {
      for (let e = list.head; e; e = e.nextArmed) n++;
    }
    return n;
  }

  private armTimer(at: number): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timerAt = at;
    // Whole ms, at least 1: a timer that fires a fraction early re-arms for the rest.
    const ms = Math.min(Math.max(1, Math.ceil(at - this.clock.now())), MAX_TIMER_MS);
    this.timer = this.clock.setTimer(this.onTimer, ms);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    this.expireDue(this.common, now);
    for (const list of [...this.lists.values()]) this.expireDue(list, now);
    let earliest = this.common.head?.expiresAt ?? Infinity;
    for (const list of this.lists.values()) earliest = Math.min(earliest, list.head?.expiresAt ?? Infinity);
    // An expiry handler may have armed the timer already (a new request armed meanwhile).
    if (earliest !== Infinity && earliest < this.timerAt) this.armTimer(earliest);
  };

  private expireDue(list: DeadlineList, now: number): void {
    for (let entry = list.head; entry && entry.expiresAt <= now; entry = list.head) {
      disarmDeadline(entry);
      try {
        this.onExpired(entry as E);
      } catch {
        // One request's failure to answer its timeout must not keep the others waiting.
      }
    }
  }
}
