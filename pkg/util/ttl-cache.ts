// A small bounded cache with a time to live per entry. Concurrent look-ups of one
// key share one call. Used for the host's review answers (TokenReview,
// SubjectAccessReview: kube-apiserver's delegating authenticator and authorizer
// cache theirs for 10 s, so a burst of requests from one caller costs the host one
// review) and for KMS v2 data keys unwrapped by the plugin (a day, as upstream).

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly pending = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries = 4096,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    // Map keeps insertion order: the first key is the oldest write.
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs });
  }

  /**
   * The cached value, or the result of `load` (shared by concurrent callers of the
   * same key), kept for `ttlFor(value)` ms. A failed load is not cached.
   */
  async getOrLoad(key: string, load: () => Promise<V>, ttlFor: (value: V) => number): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const promise = load().then(
      (value) => {
        this.pending.delete(key);
        this.set(key, value, ttlFor(value));
        return value;
      },
      (err: unknown) => {
        this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, promise);
    return promise;
  }
}
