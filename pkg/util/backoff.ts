// How long to wait before trying again after a failure: an exponential backoff with a
// cap, back to the start once things work again (client-go's wait.Backoff and
// flowcontrol.Backoff): each step waits the current delay, and the next delay is the
// current one times the factor, up to the cap. With a jitter j > 0 each wait is the
// delay plus a random share of up to j times it, so that many clients that failed
// together do not all come back at once; as upstream's, the jitter never feeds the
// growth. One implementation for every retry loop: the reflector, the etcd client's
// HTTP/2 sessions and its watch streams, and the audit webhook's posts.

export interface BackoffOptions {
  /** What each delay is multiplied by for the next. Default 2. */
  readonly factor?: number;
  /** Adds up to this share of the delay at random to each wait (0, the default: none). */
  readonly jitter?: number;
  /** A number in [0, 1) (tests fix it). Default Math.random. */
  readonly random?: () => number;
}

export class Backoff {
  private next: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    options: BackoffOptions = {},
  ) {
    this.next = initialMs;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 0;
    this.random = options.random ?? Math.random;
  }

  /** The delay to wait now; the one after it is `factor` times as long, up to the cap. */
  step(): number {
    const delay = this.next;
    this.next = Math.min(this.next * this.factor, this.maxMs);
    return this.jitter > 0 ? delay + this.random() * this.jitter * delay : delay;
  }

  /** Things work again: the next failure waits the initial delay. */
  reset(): void {
    this.next = this.initialMs;
  }
}
