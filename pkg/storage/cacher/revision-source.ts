// Storage's current revision for consistent reads, with concurrent callers sharing
// round trips. A caller may only use a read that started after it asked: a read
// already in flight may have been answered before a write the caller saw
// acknowledged. So a caller joins the next read, which starts when the one in
// flight returns. However many reads arrive, storage sees at most one revision
// request per round trip, and each caller waits at most two.

import { withoutStorageDeadline } from '../deadline.js';

export class RevisionSource {
  private running: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(private readonly fetch: () => Promise<number>) {}

  /** A revision at least as new as every write acknowledged before this call. */
  current(): Promise<number> {
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    const settled = this.running.then(
      () => undefined,
      () => undefined,
    );
    this.queued = settled.then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<number> {
    // Shared by every caller that joins it: no one request's deadline applies.
    const p = withoutStorageDeadline(() => this.fetch());
    this.running = p;
    const clear = (): void => {
      if (this.running === p) this.running = undefined;
    };
    p.then(clear, clear);
    return p;
  }
}
