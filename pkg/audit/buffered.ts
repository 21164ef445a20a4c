// Batch mode (k8s.io/apiserver plugin/pkg/audit/buffered): events wait in a bounded
// queue and go to the delegate in batches of up to maxBatchSize, at least every
// maxBatchWait, at most throttleQPS batches a second (with bursts of throttleBurst).
// A request never waits for its events: when the queue is full the events are
// dropped and counted (apiserver_audit_error_total{plugin="buffered"}).

import type { AuditBackend, PluginErrorReporter } from './backend.js';
import type { Event } from './types.js';

export const BUFFERED_PLUGIN = 'buffered';

export interface BatchConfig {
  readonly bufferSize: number;
  readonly maxBatchSize: number;
  readonly maxBatchWaitMs: number;
  readonly throttleEnable: boolean;
  readonly throttleQPS: number;
  readonly throttleBurst: number;
  /** Send a batch without waiting for the previous one (upstream's AsyncDelegate: the webhook). */
  readonly asyncDelegate: boolean;
}

/** A token bucket: `burst` batches at once, then `qps` a second. */
class Throttle {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Ms to wait before the next batch may go (0: now, and the token is taken). */
  take(): number {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.qps) * 1000);
  }
}

export class BufferedBackend implements AuditBackend {
  private readonly queue: Event[] = [];
  private readonly throttle: Throttle | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private pumping: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly delegate: AuditBackend,
    private readonly config: BatchConfig,
    private readonly reportError: PluginErrorReporter,
  ) {
    this.throttle = config.throttleEnable
      ? new Throttle(config.throttleQPS, config.throttleBurst)
      : undefined;
  }

  processEvents(events: readonly Event[]): Promise<boolean> {
    if (this.stopped) {
      this.reportError(BUFFERED_PLUGIN, new Error('audit backend shut down'), events);
      return Promise.resolve(true);
    }
    for (let i = 0; i < events.length; i++) {
      if (this.queue.length >= this.config.bufferSize) {
        this.reportError(BUFFERED_PLUGIN, new Error('audit buffer queue blocked'), events.slice(i));
        break;
      }
      this.queue.push(events[i] as Event);
    }
    if (this.queue.length >= this.config.maxBatchSize) this.wake?.();
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
    });
    // Never a failure: the request must not wait for, or fail on, its audit.
    return Promise.resolve(true);
  }

  /** Resolves when the batch is full, maxBatchWait has passed, or the backend stops. */
  private waitForBatch(): Promise<void> {
    if (this.queue.length >= this.config.maxBatchSize || this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.config.maxBatchWaitMs);
      timer.unref();
      this.wake = done;
    });
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      await this.waitForBatch();
      if (this.throttle && !this.stopped) {
        for (let wait = this.throttle.take(); wait > 0; wait = this.throttle.take()) {
          await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
        }
      }
      const batch = this.queue.splice(0, this.config.maxBatchSize);
      if (batch.length === 0) continue;
      const sent = this.delegate.processEvents(batch).catch(() => false);
      if (this.config.asyncDelegate) {
        this.inFlight.add(sent);
        void sent.finally(() => this.inFlight.delete(sent));
      } else {
        await sent;
      }
    }
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    while (this.pumping) await this.pumping;
    await Promise.all([...this.inFlight]);
    await this.delegate.shutdown();
  }
}
