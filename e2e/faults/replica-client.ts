// The fault suite's HTTPS client for one server replica: kept-alive connections (as
// client-go keeps them), a generous client-side timeout so that a request the server
// holds is measured rather than cut short, and one shared log of how long every
// request waited for its answer, which the suite's "no request held over 10 s"
// figure is read from.

import { Agent, request } from 'node:https';

/** What the suite allows the server to hold a request: the 10 s. */
export const HELD_LIMIT_MS = 10_000;
/** The client gives up only well past that, so a longer hold is seen and measured. */
const CLIENT_TIMEOUT_MS = 30_000;

export interface Answer {
  /** HTTP status, or 0 when no answer came (connection refused or reset, timeout). */
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** Why no answer came (status 0). */
  readonly error?: string;
  readonly ms: number;
}

/** How long requests waited, over the whole run and per phase. */
export class RequestLog {
  count = 0;
  failed = 0;
  maxMs = 0;
  /** Requests answered (or given up) after more than HELD_LIMIT_MS. */
  heldOverLimit = 0;
  /** The longest waits, with what they were, for the report. */
  readonly longest: string[] = [];

  record(what: string, a: Answer): void {
    this.count++;
    if (a.status === 0 || a.status >= 500) this.failed++;
    if (a.ms > this.maxMs) this.maxMs = a.ms;
    if (a.ms > HELD_LIMIT_MS) {
      this.heldOverLimit++;
      if (this.longest.length < 10) this.longest.push(`${what}: ${a.status || a.error} after ${a.ms} ms`);
    }
  }

  /** Starts a new window; returns the figures of the one that ended. */
  take(): { count: number; failed: number; maxMs: number; heldOverLimit: number } {
    const out = {
      count: this.count,
      failed: this.failed,
      maxMs: this.maxMs,
      heldOverLimit: this.heldOverLimit,
    };
    this.count = this.failed = this.maxMs = this.heldOverLimit = 0;
    return out;
  }
}

export interface ReplicaTarget {
  readonly name: string;
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly ca: string;
  readonly token: string;
}

export class ReplicaClient {
  private readonly agent: Agent;
  /** Requests sent and not answered yet: a kill while this is above 0 is a kill mid-request. */
  inFlight = 0;

  constructor(
    readonly target: ReplicaTarget,
    private readonly log: RequestLog,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 16, ca: target.ca });
  }

  /** One API request under `/kubernetes/management`; never throws. */
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    const started = Date.now();
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `Bearer ${this.target.token}`,
    };
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    this.inFlight++;
    return new Promise<Answer>((resolve) => {
      let done = false;
      const finish = (status: number, text: string, error?: string): void => {
        if (done) return;
        done = true;
        this.inFlight--;
        let parsed: Record<string, unknown> = {};
        try {
          if (text.startsWith('{')) parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // Not JSON: the status says enough.
        }
        const a: Answer = { status, body: parsed, ms: Date.now() - started, ...(error ? { error } : {}) };
        this.log.record(`${this.target.name} ${method} ${path}`, a);
        resolve(a);
      };
      const req = request(
        `${this.target.url}/kubernetes/management${path}`,
        { method, headers, agent: this.agent, timeout: CLIENT_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
          res.on('error', (e) => finish(0, '', e.message));
          res.on('aborted', () => finish(0, '', 'aborted'));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${CLIENT_TIMEOUT_MS} ms`)));
      req.on('error', (e) => finish(0, '', e.message));
      req.end(payload);
    });
  }

  /** Drops the kept-alive connections (after the replica behind them was killed). */
  close(): void {
    this.agent.destroy();
  }
}
