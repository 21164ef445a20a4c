// /healthz, /livez and /readyz as k8s.io/apiserver pkg/server/healthz serves them:
// plain `ok`; `?verbose` lists every check; a failure is a 500 whose body says which
// check failed but not why (the endpoints are unauthenticated, the reason is logged);
// `/readyz/<check>` runs one check and does say why; `?exclude=<check>` skips one.
// Readiness also fails once shutdown has begun, so load balancers drain us first.

import type { ServerResponse } from 'node:http';

import type { HealthCheck } from './config.js';
import type { Logger } from '../util/log/index.js';
import { writeNotFoundPage } from './responses.js';

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

/** A check that does not answer in this long has failed (health endpoints must never hang). */
const CHECK_TIMEOUT_MS = 10_000;

const ping: HealthCheck = { name: 'ping', check: () => undefined };

export class HealthChecks {
  private shuttingDown = false;
  private readonly checks: Record<HealthEndpoint, readonly HealthCheck[]>;

  constructor(
    liveChecks: readonly HealthCheck[],
    readyChecks: readonly HealthCheck[],
    private readonly logger: Logger,
  ) {
    const shutdown: HealthCheck = {
      name: 'shutdown',
      check: () => {
        if (this.shuttingDown) throw new Error('process is shutting down');
      },
    };
    this.checks = {
      livez: [ping, ...liveChecks],
      healthz: [ping, ...liveChecks, ...readyChecks],
      readyz: [ping, ...liveChecks, ...readyChecks, shutdown],
    };
  }

  /** From now on readyz fails. */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  /** Serves `/<endpoint>` (checkName undefined) or `/<endpoint>/<checkName>`. */
  async serve(
    res: ServerResponse,
    endpoint: HealthEndpoint,
    checkName: string | undefined,
    query: URLSearchParams | undefined,
  ): Promise<void> {
    const checks = this.checks[endpoint];
    if (checkName !== undefined) {
      const check = checks.find((c) => c.name === checkName);
      if (!check) {
        writeNotFoundPage(res);
        return;
      }
      const err = await run(check);
      if (err) {
        this.writeText(res, 500, `internal server error: ${err}\n`);
      } else {
        this.writeText(res, 200, 'ok');
      }
      return;
    }

    const excluded = new Set(query?.getAll('exclude') ?? []);
    const results = await Promise.all(
      checks.map(async (check) => {
        if (excluded.has(check.name)) return { check, excluded: true, err: undefined };
        return { check, excluded: false, err: await run(check) };
      }),
    );
    let output = '';
    const failed: string[] = [];
    for (const { check, excluded: skipped, err } of results) {
      if (skipped) {
        excluded.delete(check.name);
        output += `[+]${check.name} excluded: ok\n`;
      } else if (err) {
        output += `[-]${check.name} failed: reason withheld\n`;
        failed.push(check.name);
        this.logger.warn('health check failed', { endpoint, check: check.name, reason: err });
      } else {
        output += `[+]${check.name} ok\n`;
      }
    }
    if (excluded.size > 0) {
      const names = [...excluded].sort().map((n) => JSON.stringify(n));
      output += `warn: some health checks cannot be excluded: no matches for ${names.join(',')}\n`;
    }
    if (failed.length > 0) {
      this.writeText(res, 500, `${output}${endpoint} check failed\n`);
      return;
    }
    this.writeText(res, 200, query?.has('verbose') ? `${output}${endpoint} check passed\n` : 'ok');
  }

  private writeText(res: ServerResponse, code: number, body: string): void {
    res.writeHead(code, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  }
}

/** Runs a check; resolves to the failure reason, or undefined when healthy. */
async function run(check: HealthCheck): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS / 1000}s`)),
        CHECK_TIMEOUT_MS,
      );
    });
    await Promise.race([Promise.resolve().then(() => check.check()), timeout]);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
