// The KMS v2 plugin probe (encryptionconfig/config.go kmsv2PluginProbe): it asks
// the plugin's Status, answers the health check with it, and keeps the write state.
//
// - Status must say healthz "ok", version "v2" (or "v2beta1", never changing after the
//   first answer) and a valid key id.
// - When the key id differs from the one the current DEK was wrapped under, a new
//   seed is generated and wrapped with Encrypt (whose key id must match Status's);
//   only then does the write state change. Otherwise the state's expiry is moved
//   forward. On any failure the old state stays, and writes coast on it until it
//   expires: three minutes after the last good Status, after which writes fail.
// - Status is polled every minute while healthy and every ten seconds while not;
//   health checks reuse an answer for 20 s (3 s when it was a failure), so probes
//   never flood the plugin.

import type { Logger } from '../../../util/log/index.js';
import { randomUUID } from 'node:crypto';
import type { KMSService } from './grpc-service.js';
import type { WriteState } from './envelope.js';
import { dekCacheKey, keyIDHash, rfc3339, validateEncryptedObject, validateKeyID } from './envelope.js';
import { generateSeedTransformer } from './hkdf-gcm.js';
import { HKDF_SHA256_XNONCE_AES_GCM_SEED, type StatusResponse } from './protocol.js';
import { aggregateMessage } from '../../../apis/meta/field-errors.js';

export interface ProbeTimings {
  /** Status poll while healthy (upstream: 1 minute). */
  readonly positiveIntervalMs: number;
  /** Status poll while unhealthy (upstream: 10 s). */
  readonly negativeIntervalMs: number;
  /** How long writes may use a DEK after the last good Status (upstream: 3 minutes). */
  readonly writeDEKMaxTTLMs: number;
  /** How long a health check reuses a good answer (upstream: 20 s). */
  readonly healthzPositiveTTLMs: number;
  /** How long a health check reuses a failure (upstream: 3 s). */
  readonly healthzNegativeTTLMs: number;
}

export const UPSTREAM_TIMINGS: ProbeTimings = {
  positiveIntervalMs: 60_000,
  negativeIntervalMs: 10_000,
  writeDEKMaxTTLMs: 180_000,
  healthzPositiveTTLMs: 20_000,
  healthzNegativeTTLMs: 3_000,
};

const SUPPORTED_VERSIONS = ['v2', 'v2beta1'];

/** Where the probe reports a failed poll (the reason names the provider, never a key). */
export type ProbeLogger = Pick<Logger, 'warn'>;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class KMSv2PluginProbe {
  private state: WriteState | undefined;
  private version = '';
  private last: { error: string | undefined; at: number } | undefined;
  private ttlMs = 0;
  private inFlight: Promise<string | undefined> | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** Settles once the first Status (and, when healthy, the first DEK) is done, good or bad. */
  readonly primed: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly service: KMSService,
    private readonly timings: ProbeTimings = UPSTREAM_TIMINGS,
    private readonly logger?: ProbeLogger,
    private readonly now: () => number = Date.now,
  ) {
    this.ttlMs = timings.healthzNegativeTTLMs;
    this.primed = this.poll();
  }

  /** The state writes use; throws when the plugin never gave one (reads need it too, as upstream). */
  currentState(): WriteState {
    const state = this.state;
    if (!state) throw new Error('got unexpected nil transformer');
    return state;
  }

  /** The health check: resolves when healthy, rejects with upstream's message otherwise. */
  async check(): Promise<void> {
    const error = await this.checkOnce();
    if (error !== undefined) throw new Error(error);
  }

  private checkOnce(): Promise<string | undefined> {
    if (this.last && this.now() - this.last.at < this.ttlMs) return Promise.resolve(this.last.error);
    // One Status at a time, as upstream's mutex: concurrent checks share its answer.
    this.inFlight ??= this.runCheck().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async runCheck(): Promise<string | undefined> {
    let error: string | undefined;
    try {
      const status = await this.service.status();
      error = await this.healthyAndMaybeRotate(status);
    } catch (err) {
      error = `failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${messageOf(err)}`;
    }
    this.last = { error, at: this.now() };
    this.ttlMs = error === undefined ? this.timings.healthzPositiveTTLMs : this.timings.healthzNegativeTTLMs;
    return error;
  }

  private async healthyAndMaybeRotate(status: StatusResponse): Promise<string | undefined> {
    const errors: string[] = [];
    if (status.healthz !== 'ok') errors.push(`got unexpected healthz status: ${status.healthz}`);
    if (!SUPPORTED_VERSIONS.includes(status.version)) {
      errors.push(`expected KMSv2 API version v2, got ${status.version}`);
    } else {
      if (this.version === '') this.version = status.version;
      if (this.version !== status.version) {
        errors.push(`KMSv2 API version should not change after the initial status response version ${this.version}, got ${status.version}`);
      }
    }
    const keyProblem = validateKeyID(status.keyId);
    if (keyProblem) errors.push(`got invalid KMSv2 KeyID hash ${JSON.stringify(keyIDHash(status.keyId))}: ${keyProblem}`);
    else {
      const rotation = await this.rotateDEKOnKeyIDChange(status.keyId, randomUUID());
      if (rotation) errors.push(rotation);
    }
    return errors.length > 0 ? `kmsv2 Provider ${this.name} is not healthy, error: ${aggregateMessage(errors)}` : undefined;
  }

  /** Returns undefined when the state is current (kept or replaced), else why it could not be. */
  private async rotateDEKOnKeyIDChange(statusKeyID: string, uid: string): Promise<string | undefined> {
    const state = this.state;
    // The bound starts before the plugin is called: it is an upper bound.
    const expiresAt = this.now() + this.timings.writeDEKMaxTTLMs;
    if (state && state.keyID === statusKeyID && state.encryptedDEKSourceType === HKDF_SHA256_XNONCE_AES_GCM_SEED) {
      this.state = { ...state, expiresAt };
      return undefined;
    }
    let errGen = '';
    let encryptKeyID = '';
    try {
      const { transformer, seed } = generateSeedTransformer();
      const res = await this.service.encrypt(uid, seed);
      encryptKeyID = res.keyId;
      const next: WriteState = {
        transformer,
        keyID: res.keyId,
        encryptedDEKSource: res.ciphertext,
        annotations: res.annotations,
        encryptedDEKSourceType: HKDF_SHA256_XNONCE_AES_GCM_SEED,
        uid,
        expiresAt,
        cacheKey: dekCacheKey(HKDF_SHA256_XNONCE_AES_GCM_SEED, res.ciphertext, res.keyId, res.annotations),
      };
      const problem = validateEncryptedObject({ ...next, encryptedData: Buffer.of(0) });
      if (problem) errGen = problem;
      else if (res.keyId === statusKeyID) {
        this.state = next;
        return undefined;
      }
    } catch (err) {
      errGen = `failed to encrypt DEK, error: ${messageOf(err)}`;
    }
    const errState = state ? '<nil>' : 'got unexpected nil transformer';
    return (
      `failed to rotate DEK uid=${JSON.stringify(uid)}, useSeed=true, errState=${errState}, errGen=${errGen || '<nil>'}, ` +
      `statusKeyIDHash=${JSON.stringify(keyIDHash(statusKeyID))}, encryptKeyIDHash=${JSON.stringify(keyIDHash(encryptKeyID))}, ` +
      `stateKeyIDHash=${JSON.stringify(keyIDHash(state?.keyID ?? ''))}, expirationTimestamp=${rfc3339(state?.expiresAt ?? 0)}`
    );
  }

  /** The first check inline, then the background poll; the returned promise settles after the first. */
  private async poll(): Promise<void> {
    const first = await this.checkOnce();
    this.report(first);
    void this.loop(first === undefined);
  }

  private async loop(healthy: boolean): Promise<void> {
    while (!this.closed) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, healthy ? this.timings.positiveIntervalMs : this.timings.negativeIntervalMs);
        this.timer.unref();
      });
      if (this.closed) return;
      const error = await this.checkOnce();
      this.report(error);
      healthy = error === undefined;
    }
  }

  private report(error: string | undefined): void {
    if (error !== undefined && !this.closed) this.logger?.warn('kms plugin failed health check probe', { name: this.name, error });
  }

  /** Stops polling and closes the connection to the plugin. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    this.service.close();
  }
}
