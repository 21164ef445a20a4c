// The signing keys in use: the current key signs, keys retired by a rotation keep
// verifying for a grace period and are then dropped. The key set is generated once
// and kept in a SigningKeyStore; every replica re-reads the store now and then (and
// at once when it meets a key id it does not know), so a rotation made by one
// replica reaches the others without a restart.
//
// Nothing runs on a timer: reloading and rotating happen on the next use once they
// are due, which leaves nothing to stop at shutdown and nothing to race in tests.

import {
  generateSigningKey,
  parseKeySet,
  publicJwk,
  serializeKeySet,
  type PublicJwk,
  type SigningAlgorithm,
  type SigningKey,
} from './signing-key.js';
import type { SigningKeyStore } from './key-store.js';
import type { Logger } from '../util/log/index.js';

export interface KeyManagerOptions {
  readonly store: SigningKeyStore;
  /** Algorithm of keys this manager generates (default RS256). Loaded keys keep theirs. */
  readonly algorithm?: SigningAlgorithm;
  /** Age at which the current key is replaced on its next use; 0 = only by rotate(). */
  readonly rotationPeriodMs: number;
  /**
   * How long a retired key keeps verifying. To keep every token valid until its own
   * expiry this must be at least the longest token lifetime (--max-token-ttl).
   */
  readonly gracePeriodMs: number;
  /** How often the store is re-read for other replicas' rotations (default 60 s). */
  readonly refreshIntervalMs?: number;
  /** Least time between two re-reads caused by unknown key ids (default 10 s). */
  readonly unknownKidRefreshMs?: number;
  readonly now?: () => Date;
  readonly logger?: Logger;
}

export interface JsonWebKeySet {
  readonly keys: readonly PublicJwk[];
}

const SAVE_ATTEMPTS = 5;

export class SigningKeyManager {
  private keys: SigningKey[] = [];
  private version = '';
  private loadedAt = 0;
  private lastUnknownKidRefresh = 0;
  private pending: Promise<void> | undefined;
  private readonly now: () => Date;
  private readonly algorithm: SigningAlgorithm;
  private readonly refreshIntervalMs: number;
  private readonly unknownKidRefreshMs: number;

  constructor(private readonly options: KeyManagerOptions) {
    this.now = options.now ?? (() => new Date());
    this.algorithm = options.algorithm ?? 'RS256';
    this.refreshIntervalMs = options.refreshIntervalMs ?? 60_000;
    this.unknownKidRefreshMs = options.unknownKidRefreshMs ?? 10_000;
  }

  /** Loads the key set, generating and saving one when the store has none. Call once before use. */
  async init(): Promise<void> {
    await this.load();
    if (this.current()) return;
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      const key = await generateSigningKey(this.algorithm, this.now());
      if (await this.save([key, ...this.keys])) {
        this.options.logger?.info('generated a token signing key', {
          kid: key.kid,
          alg: key.alg,
          store: this.options.store.description,
        });
        return;
      }
      // Another replica generated one first: use it.
      await this.load();
      if (this.current()) return;
    }
    throw new Error(`could not save a token signing key to ${this.options.store.description}`);
  }

  /** The key that signs new tokens. */
  async signingKey(): Promise<SigningKey> {
    await this.maintain();
    const key = this.current();
    if (!key) throw new Error('no token signing key: init() was not called or failed');
    return key;
  }

  /** Every key a token may be verified with now: the current one and retired ones in their grace period. */
  async verificationKeys(): Promise<readonly SigningKey[]> {
    await this.maintain();
    return this.live();
  }

  /** The live key with this id; an unknown id re-reads the store (rate limited) first. */
  async keyById(kid: string): Promise<SigningKey | undefined> {
    await this.maintain();
    const found = this.live().find((k) => k.kid === kid);
    if (found) return found;
    const now = this.now().getTime();
    if (now - this.lastUnknownKidRefresh < this.unknownKidRefreshMs) return undefined;
    this.lastUnknownKidRefresh = now;
    await this.singleFlight(() => this.load());
    return this.live().find((k) => k.kid === kid);
  }

  /** The public keys, as an RFC 7517 key set. */
  async jwks(): Promise<JsonWebKeySet> {
    return { keys: (await this.verificationKeys()).map(publicJwk) };
  }

  /**
   * Makes a new current key. The old one verifies for the grace period from now
   * and signs nothing more. Resolves with the new current key.
   */
  async rotate(): Promise<SigningKey> {
    await this.singleFlight(() => this.rotateNow(undefined));
    return this.signingKey();
  }

  // ---- internals ---------------------------------------------------------------

  private current(): SigningKey | undefined {
    let newest: SigningKey | undefined;
    for (const k of this.keys) {
      if (k.verifyUntil) continue;
      if (!newest || k.createdAt.getTime() > newest.createdAt.getTime()) newest = k;
    }
    return newest;
  }

  private live(): SigningKey[] {
    const now = this.now().getTime();
    return this.keys.filter((k) => !k.verifyUntil || k.verifyUntil.getTime() > now);
  }

  /** Re-reads the store and rotates when due; concurrent callers share one run. */
  private async maintain(): Promise<void> {
    const now = this.now().getTime();
    const reloadDue = now - this.loadedAt >= this.refreshIntervalMs;
    if (!reloadDue && !this.rotationDue()) {
      // Another caller's reload or rotation may be in flight: wait for it, not for a new one.
      if (this.pending) await this.pending;
      return;
    }
    await this.singleFlight(async () => {
      if (this.now().getTime() - this.loadedAt >= this.refreshIntervalMs) {
        try {
          await this.load();
        } catch (err) {
          // Keep signing and verifying with what we have; the next use tries again.
          this.options.logger?.warn('could not re-read the token signing keys', {
            store: this.options.store.description,
            error: err instanceof Error ? err.message : String(err),
          });
          this.loadedAt = this.now().getTime();
        }
      }
      if (this.rotationDue()) await this.rotateNow(this.current()?.kid);
    });
  }

  private rotationDue(): boolean {
    const period = this.options.rotationPeriodMs;
    const current = this.current();
    if (period <= 0 || !current) return false;
    return this.now().getTime() - current.createdAt.getTime() >= period;
  }

  /**
   * Rotates, unless `expectedKid` is given and another replica has already replaced
   * that key (then its rotation stands and ours is not needed).
   */
  private async rotateNow(expectedKid: string | undefined): Promise<void> {
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      const now = this.now();
      const next = await generateSigningKey(this.algorithm, now);
      const verifyUntil = new Date(now.getTime() + this.options.gracePeriodMs);
      const kept = this.keys
        // A retired key past its grace period verifies nothing: drop it from the store.
        .filter((k) => !k.verifyUntil || k.verifyUntil.getTime() > now.getTime())
        .map((k) => (k.verifyUntil ? k : { ...k, verifyUntil }));
      const retired = this.current()?.kid;
      if (await this.save([next, ...kept])) {
        this.options.logger?.info('rotated the token signing key', {
          kid: next.kid,
          retiredKid: retired,
          verifyUntil: verifyUntil.toISOString(),
          store: this.options.store.description,
        });
        return;
      }
      await this.load();
      if (expectedKid !== undefined && this.current()?.kid !== expectedKid) return;
    }
    throw new Error(`could not save the rotated token signing key to ${this.options.store.description}`);
  }

  private async load(): Promise<void> {
    const stored = await this.options.store.load();
    this.loadedAt = this.now().getTime();
    if (!stored) {
      this.keys = [];
      this.version = '';
      return;
    }
    this.keys = parseKeySet(stored.data);
    this.version = stored.version;
  }

  private async save(keys: SigningKey[]): Promise<boolean> {
    const ok = await this.options.store.save(serializeKeySet(keys), this.version);
    if (!ok) return false;
    // Read back for the new version: the store decides what it is.
    await this.load();
    return true;
  }

  private async singleFlight(work: () => Promise<void>): Promise<void> {
    while (this.pending) await this.pending.catch(() => undefined);
    const run = work().finally(() => {
      if (this.pending === run) this.pending = undefined;
    });
    this.pending = run;
    await run;
  }
}
