// The readiness check of storage: /readyz must answer within a second whatever
// storage does (kubelet and load balancers time out their probes), and must not
// cost storage a call per probe. So one probe (a read of the current revision) runs
// at a time; its success is remembered for a second; a check waits for the probe
// under way at most 900 ms, and a storage that has not answered by then is not
// ready. The probe left running is reused by the next check rather than piled on.

import type { Storage } from '../storage/interfaces.js';

const WAIT_MS = 900;
const FRESH_MS = 1000;

export class StorageProbe {
  private lastSuccess = -Infinity;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly storage: Pick<Storage, 'currentResourceVersion'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves when storage answered within the last second, or answers now within 900 ms; throws otherwise. */
  async check(): Promise<void> {
    if (this.now() - this.lastSuccess < FRESH_MS) return;
    this.inFlight ??= this.storage.currentResourceVersion().then(
      () => {
        this.lastSuccess = this.now();
        this.inFlight = undefined;
      },
      (err: unknown) => {
        this.inFlight = undefined;
        throw err;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`storage did not answer within ${WAIT_MS}ms`)), WAIT_MS);
    });
    try {
      await Promise.race([this.inFlight, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
