// Plain access keys set aside by a write until that write's response is shaped.
// Storage only ever sees the hash; the response to the write that set a key is the
// one place the plain key may appear. prepareForCreate/prepareForUpdate put it
// here, decorate takes it out. The object cannot carry it (storage returns copies),
// so entries are found by the key's hash, and handed out only to the request that
// set them (or, when the Store does not say which request is asking, only to a
// create response). Entries a failed write leaves behind expire quickly.

import type { RequestContext } from '../../rest/interfaces.js';

interface Entry {
  readonly plain: string;
  /** Weak, so a finished request is not kept alive by a forgotten entry. */
  readonly owner: WeakRef<RequestContext>;
  readonly expiresAt: number;
}

export interface KeyRevealsOptions {
  /** How long an entry waits for its response (default one minute). */
  readonly ttlMs?: number;
  /** Most entries kept at once; the oldest go first (default 10000). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export class KeyReveals {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: KeyRevealsOptions = {}) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Remembers `plain` (whose stored form is `hash`) for the response to `ctx`'s write. */
  setAside(hash: string, plain: string, ctx: RequestContext): void {
    this.sweep();
    this.entries.delete(hash);
    this.entries.set(hash, { plain, owner: new WeakRef(ctx), expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /**
   * The plain key for `hash`, once, if the caller is the response it was set aside
   * for: the same request when `ctx` is given, else a create response.
   */
  take(hash: string, created: boolean, ctx: RequestContext | undefined): string | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    const allowed = ctx !== undefined ? entry.owner.deref() === ctx : created;
    if (!allowed) return undefined;
    this.entries.delete(hash);
    return entry.plain;
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [hash, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(hash);
  }
}
