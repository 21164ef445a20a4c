// At most one log line per subject (an access key's name, say) per interval, the next
// one carrying how many were left out meanwhile. For lines a client can cause at will,
// such as one per refused request: kube-apiserver's authentication filter logs every
// failed request ("Unable to authenticate the request") and klog limits nothing, so a
// client retrying a refused credential in a loop writes a line per retry; here the
// same facts reach the log once a minute, with the count.
//
// The memory is capped (maxSubjects): a client cycling through many subjects makes the
// oldest windows be forgotten, never the map grow. A forgotten subject's next line is
// written at once and counts from zero. The lines left out in a forgotten window are
// not lost: the line whose subject made room for itself carries their sum (`forgotten`,
// the refusals of subjects no longer remembered), so the log's counts still add up to
// every event, without a line more and without naming the forgotten subjects (a
// client cycling through subjects would otherwise turn each eviction into a line).

export interface LogThrottleOptions {
  /** How long after a written line the lines about the same subject are left out (default a minute). */
  readonly intervalMs?: number;
  /** How many subjects are remembered at most (default 1024). */
  readonly maxSubjects?: number;
}

export const LOG_THROTTLE_INTERVAL_MS = 60_000;
export const LOG_THROTTLE_MAX_SUBJECTS = 1024;

/** What a line admitted by LogThrottle.admit is to say about the lines left out. */
export interface LogAdmission {
  /** Lines about this subject left out since the last one written (0 for the first). */
  readonly suppressed: number;
  /**
   * Lines about other subjects left out in windows forgotten to make room for this
   * one (the cap), not reported by any line before: 0 unless the cap was reached.
   */
  readonly forgotten: number;
}

interface Window {
  /** When the last written line about the subject was (ms). */
  readonly since: number;
  /** Lines about it left out since then. */
  suppressed: number;
}

export class LogThrottle {
  private readonly intervalMs: number;
  private readonly maxSubjects: number;
  /** By subject, in the order their windows opened (Map keeps insertion order): the first is the oldest. */
  private readonly windows = new Map<string, Window>();

  constructor(options: LogThrottleOptions = {}) {
    this.intervalMs = options.intervalMs ?? LOG_THROTTLE_INTERVAL_MS;
    this.maxSubjects = Math.max(1, options.maxSubjects ?? LOG_THROTTLE_MAX_SUBJECTS);
  }

  /** How many subjects are remembered now. */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Whether a line about `subject` may be written at `now` (ms): undefined when it is
   * to be left out, otherwise the counts the line is to carry (LogAdmission). A clock
   * that went back opens a new window.
   */
  admit(subject: string, now: number): LogAdmission | undefined {
    const open = this.windows.get(subject);
    if (open && now >= open.since && now - open.since < this.intervalMs) {
      open.suppressed++;
      return undefined;
    }
    let forgotten = 0;
    if (open) this.windows.delete(subject);
    else {
      while (this.windows.size >= this.maxSubjects) {
        const oldest = this.windows.entries().next();
        if (oldest.done) break;
        forgotten += oldest.value[1].suppressed;
        this.windows.delete(oldest.value[0]);
      }
    }
    this.windows.set(subject, { since: now, suppressed: 0 });
    return { suppressed: open?.suppressed ?? 0, forgotten };
  }
}
