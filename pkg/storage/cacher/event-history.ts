// The watch cache's window of recent changes, sized as kube-apiserver sizes it
// (k8s.io/apiserver storage/cacher watch_cache.go: updateCache, resizeCacheLocked,
// doCacheResizeLocked). A ring that starts at the lower bound (100 events) and, each
// time an event arrives while it is full:
//
//   - doubles (up to the upper bound) when even its oldest event is younger than the
//     fresh duration: a burst keeps everything it wrote within that time;
//   - halves (down to the lower bound) when the newest quarter of it reaches back past
//     the fresh duration: a resource written slowly keeps no more than it needs;
//
// then, if still full, drops its oldest event. Resizing happens only as events
// arrive, as upstream's does: a cache that goes quiet keeps what it holds until its
// next writes, and a resource that is never busy never holds more than the lower bound.
//
// The fresh duration is upstream's eventFreshDuration: 75 s (the bookmark interval
// plus 15 s), or --request-timeout + 15 s when that is longer (kube-apiserver 1.33's
// EventsHistoryWindow, so that a list taking up to the request timeout can still be
// followed by a watch from its revision), with the upper bound raised in proportion.

/** Upstream's defaultLowerBoundCapacity. */
export const DEFAULT_LOWER_BOUND = 100;
/** Upstream's defaultUpperBoundCapacity: enough for the fresh duration at a high write rate. */
export const DEFAULT_UPPER_BOUND = 100 * 1024;
/** Upstream's DefaultEventFreshDuration: the bookmark interval (1 min) plus 15 s. */
export const DEFAULT_EVENT_FRESH_MS = 75_000;

/** How the window sizes itself. */
export interface HistorySizing {
  /** The capacity it starts at and never shrinks below. */
  readonly lowerBound: number;
  /** The capacity it never grows past. */
  readonly upperBound: number;
  /** How long an event is "fresh": a full window of fresh events grows. */
  readonly freshMs: number;
  /** The clock events are stamped with (ms); tests pass a fake one. */
  readonly now: () => number;
}

/**
 * kube-apiserver's history window for a request timeout: at least 75 s, and long
 * enough that a list as slow as the request timeout allows can be followed by a watch
 * from its revision (cmd/kube-apiserver options completion, 1.33: RequestTimeout + 15 s).
 */
export function eventFreshMs(requestTimeoutMs: number | undefined): number {
  if (requestTimeoutMs === undefined) return DEFAULT_EVENT_FRESH_MS;
  return Math.max(DEFAULT_EVENT_FRESH_MS, requestTimeoutMs + 15_000);
}

/**
 * The upper bound for a fresh duration (upstream's capacityUpperBound): the default
 * for up to 75 s, else scaled by their ratio rounded up to a power of two (the window
 * only ever doubles), and kept within a 32-bit integer as upstream keeps it.
 */
export function capacityUpperBound(freshMs: number): number {
  if (freshMs <= DEFAULT_EVENT_FRESH_MS) return DEFAULT_UPPER_BOUND;
  const maxExponent = Math.floor(Math.log2(0x7fffffff / DEFAULT_UPPER_BOUND));
  const exponent = Math.min(Math.ceil(Math.log2(freshMs / DEFAULT_EVENT_FRESH_MS)), maxExponent);
  return DEFAULT_UPPER_BOUND * 2 ** exponent;
}

/**
 * The clock events are stamped with: monotonic, as Go's time.Time readings are in
 * upstream's Sub. A wall clock stepped forward by NTP would otherwise make a burst's
 * events seem old and shrink the window to its lower bound (410 for watches that
 * kube-apiserver serves); stepped back, it would hold the window at its upper bound.
 */
export function monotonicNow(): number {
  return performance.now();
}

/** The sizing kube-apiserver uses for a fresh duration, on the wall clock. */
export function defaultHistorySizing(freshMs = DEFAULT_EVENT_FRESH_MS, now: () => number = monotonicNow): HistorySizing {
  return { lowerBound: DEFAULT_LOWER_BOUND, upperBound: capacityUpperBound(freshMs), freshMs, now };
}

/** A window of exactly `capacity` events that never resizes (tests that need its edge within a few writes). */
export function fixedHistorySizing(capacity: number, now: () => number = monotonicNow): HistorySizing {
  const bound = Math.max(1, Math.floor(capacity));
  return { lowerBound: bound, upperBound: bound, freshMs: DEFAULT_EVENT_FRESH_MS, now };
}

/** A ring of events in revision order, each with the time it was recorded, resized as above. */
export class EventHistory<E extends { readonly rev: number }> {
  private events: (E | undefined)[];
  /** When each event was recorded, at the same ring index as the event. */
  private times: Float64Array;
  private cap: number;
  private head = 0;
  private len = 0;
  private evicted = false;
  private evictedRevision = 0;
  private grown = 0;
  private shrunk = 0;
  private readonly lowerBound: number;
  private readonly upperBound: number;

  constructor(private readonly sizing: HistorySizing) {
    this.lowerBound = Math.max(1, Math.floor(sizing.lowerBound));
    this.upperBound = Math.max(this.lowerBound, Math.floor(sizing.upperBound));
    this.cap = this.lowerBound;
    this.events = new Array<E | undefined>(this.cap);
    this.times = new Float64Array(this.cap);
  }

  /** How many events the ring holds before it must resize or drop one. */
  get capacity(): number {
    return this.cap;
  }

  get length(): number {
    return this.len;
  }

  /**
   * Whether an event left the ring to make room since the last clear (upstream's
   * removedEventSinceRelist): until one has, the window reaches back to the list.
   */
  get evictedSinceClear(): boolean {
    return this.evicted;
  }

  /** How many times the ring doubled, and halved (upstream's capacity_increase/decrease_total). */
  get resizes(): { readonly increases: number; readonly decreases: number } {
    return { increases: this.grown, decreases: this.shrunk };
  }

  /** The newest revision an event left the ring at since the last clear (0 when none). */
  get lastEvictedRevision(): number {
    return this.evictedRevision;
  }

  /** The i-th event, oldest first. */
  at(i: number): E {
    return this.events[(this.head + i) % this.cap] as E;
  }

  /** Records `event` now, resizing first if the ring is full, then dropping the oldest if still full. */
  push(event: E): void {
    const now = this.sizing.now();
    if (this.len === this.cap) this.resize(now);
    if (this.len === this.cap) {
      this.noteEvicted(this.at(0));
      this.events[this.head] = undefined;
      this.head = (this.head + 1) % this.cap;
      this.len--;
    }
    const i = (this.head + this.len) % this.cap;
    this.events[i] = event;
    this.times[i] = now;
    this.len++;
  }

  /** The index of the first event with a revision above `revision` (length when none). */
  firstAfter(revision: number): number {
    let lo = 0;
    let hi = this.len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rev <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops the events at or below `revision` (storage compacted them). */
  dropThrough(revision: number): void {
    const n = this.firstAfter(revision);
    for (let i = 0; i < n; i++) {
      this.events[this.head] = undefined;
      this.head = (this.head + 1) % this.cap;
    }
    this.len -= n;
  }

  /** Empties the ring for a relist; its capacity stays, as upstream's Replace keeps it. */
  clear(): void {
    this.events = new Array<E | undefined>(this.cap);
    this.head = 0;
    this.len = 0;
    this.evicted = false;
    this.evictedRevision = 0;
  }

  /** upstream's resizeCacheLocked, for a full ring and an event recorded at `now`. */
  private resize(now: number): void {
    if (this.lowerBound === this.upperBound) return;
    const fresh = this.sizing.freshMs;
    if (now - this.timeAt(0) < fresh) {
      const grown = Math.min(this.cap * 2, this.upperBound);
      if (grown > this.cap) this.reallocate(grown);
      return;
    }
    // The oldest of the newest quarter (upstream: index endIndex - capacity/4).
    if (now - this.timeAt(this.len - Math.floor(this.cap / 4)) > fresh) {
      const shrunk = Math.max(Math.floor(this.cap / 2), this.lowerBound);
      if (shrunk < this.cap) this.reallocate(shrunk);
    }
  }

  private noteEvicted(event: E): void {
    this.evicted = true;
    if (event.rev > this.evictedRevision) this.evictedRevision = event.rev;
  }

  private timeAt(i: number): number {
    return this.times[(this.head + i) % this.cap] as number;
  }

  /** Moves the newest `capacity` events (all of them when growing) into a ring of that size. */
  private reallocate(capacity: number): void {
    if (capacity > this.cap) this.grown++;
    else this.shrunk++;
    const keep = Math.min(this.len, capacity);
    const skip = this.len - keep;
    if (skip > 0) this.noteEvicted(this.at(skip - 1));
    const events = new Array<E | undefined>(capacity);
    const times = new Float64Array(capacity);
    for (let i = 0; i < keep; i++) {
      const from = (this.head + skip + i) % this.cap;
      events[i] = this.events[from];
      times[i] = this.times[from] as number;
    }
    this.events = events;
    this.times = times;
    this.cap = capacity;
    this.head = 0;
    this.len = keep;
  }
}
