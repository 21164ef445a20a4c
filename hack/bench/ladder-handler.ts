// The cost ladder's handler (get-ladder.ts): the bare server's 'bytes' handler with the
// mandatory steps of an authenticated, authorized, audited, logged, metered get added
// one at a time. Rung k does steps 1..k, each as the API server does it (the project's
// own request-info parser, logger and request metrics filter), and answers the same
// bytes with the same headers; nothing is stored or authorized for real. Bench only.

import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { RequestMetricsFilter } from '../../pkg/apiserver/filters/metrics.js';
import { newRequestInfo } from '../../pkg/apiserver/request-info.js';
import { JsonLogger } from '../../pkg/util/log/json-logger.js';
import { GROUP } from './objects.js';

export interface LadderMode {
  readonly mode: 'ladder';
  readonly body: string;
  /** 0 is the bare handler; see LADDER_STEPS for what each further rung adds. */
  readonly rung: number;
  /** The API server's response headers for this get (Date, Content-Length and the connection's left to Node). */
  readonly headers: Readonly<Record<string, string>>;
  /** The one bearer token the look-up knows. */
  readonly token: string;
}

/** What each rung adds to the one below it, in order (rung 1 is the first). */
export const LADDER_STEPS = [
  'our response headers',
  'SHA-256 of the bearer token and a Map look-up',
  'request-info parsing (the project parser)',
  'a pino log line like ours',
  'the request metrics (route and finish)',
  'an audit ID (randomUUID)',
  'a promise and an await per filter of our chain',
] as const;

/**
 * An upper bound on the awaits of our chain for a get: it awaits fewer (the request's
 * serve(), the audit's begin, the handler, the store's get, the watch cache's read;
 * authentication, admission to the limiter and authorization answer synchronously
 * when cached), but async filters are the common shape and the bound is cheap.
 */
const FILTER_AWAITS = 8;

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export function ladderHandler(b: LadderMode): (req: IncomingMessage, res: ServerResponse) => void {
  const body = Buffer.from(b.body);
  const rung = b.rung;
  const users = new Map([[sha256(b.token), { name: 'admin', groups: ['system:masters'] }]]);
  const logger = new JsonLogger('info');
  const metrics = new RequestMetricsFilter();
  const headers = Object.entries(b.headers);

  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    if (rung >= 1) for (const [name, value] of headers) res.setHeader(name, value);
    let user: { name: string } | undefined;
    if (rung >= 2) {
      const auth = req.headers.authorization ?? '';
      user = users.get(sha256(auth.startsWith('Bearer ') ? auth.slice(7) : auth));
      if (!user) {
        res.writeHead(401).end();
        return;
      }
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const info =
      rung >= 3 ? newRequestInfo(req.method ?? 'GET', path, () => new URLSearchParams(rawQuery)) : undefined;
    const auditID = rung >= 6 ? randomUUID() : '';
    if (rung >= 6) res.setHeader('Audit-Id', auditID);
    if (rung >= 5 && info) metrics.route(req, res, info, rawQuery);
    if (rung >= 4) {
      res.once('close', () => {
        if (rung >= 5) metrics.finish(res, (performance.now() - started) / 1000);
        if (rung >= 4) {
          const fields: Record<string, unknown> = { method: req.method, path };
          if (auditID) fields.auditID = auditID;
          if (info) {
            fields.verb = info.verb;
            fields.resource = info.resource;
            fields.name = info.name;
          }
          if (user) fields.user = user.name;
          fields.code = res.statusCode;
          fields.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
          logger.info('request', fields);
        }
      });
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  };

  if (rung < 7) return answer;
  // Each filter an async function awaiting the next, as a chain of async filters does.
  const chain = async (depth: number, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (depth === FILTER_AWAITS) return answer(req, res);
    await chain(depth + 1, req, res);
  };
  return (req, res) => void chain(0, req, res);
}

/**
 * Each step's own CPU in this process, without HTTP around it: nanoseconds per call,
 * the median of `rounds` alternating rounds of `calls`. Through HTTPS a step of a few
 * µs drowns in the machine's noise; here it does not.
 */
export async function stepCostsInProcess(calls: number, rounds: number): Promise<Map<string, number>> {
  const token = 'k'.repeat(64);
  const users = new Map([[sha256(token), { name: 'admin' }]]);
  const path = `/apis/${GROUP}/v1/users/getpath`;
  // The log line to a destination that keeps nothing: pino's own work, not the write's.
  const logger = new JsonLogger('info', { write: () => true });
  const metrics = new RequestMetricsFilter();
  const info = newRequestInfo('GET', path, () => new URLSearchParams(''));
  const req = { method: 'GET', headers: {} } as unknown as IncomingMessage;
  const res = { statusCode: 200, getHeader: () => '1182' } as unknown as ServerResponse;
  const chain = async (depth: number): Promise<void> => {
    if (depth < FILTER_AWAITS) await chain(depth + 1);
  };
  const steps: [string, () => unknown][] = [
    [LADDER_STEPS[1], () => users.get(sha256(token))],
    [LADDER_STEPS[2], () => newRequestInfo('GET', path, () => new URLSearchParams(''))],
    [
      LADDER_STEPS[3],
      () =>
        logger.info('request', {
          method: 'GET',
          path,
          auditID: '0b7c1f0e-6a55-4e38-9d8e-2f1a3b4c5d6e',
          verb: 'get',
          resource: 'users',
          name: 'getpath',
          user: 'admin',
          code: 200,
          durationMs: 0.412,
        }),
    ],
    [
      LADDER_STEPS[4],
      () => {
        metrics.route(req, res, info, '');
        metrics.finish(res, 0.0004);
      },
    ],
    [LADDER_STEPS[5], () => randomUUID()],
  ];
  const samples = new Map<string, number[]>(steps.map(([name]) => [name, []]));
  const awaits: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    for (const [name, step] of steps) {
      const before = process.cpuUsage();
      for (let i = 0; i < calls; i++) step();
      const used = process.cpuUsage(before);
      // Round 0 warms the JIT and is not counted.
      if (round > 0) samples.get(name)?.push(((used.user + used.system) * 1000) / calls);
    }
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) await chain(0);
    const used = process.cpuUsage(before);
    if (round > 0) awaits.push(((used.user + used.system) * 1000) / calls);
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const out = new Map<string, number>();
  for (const [name, xs] of samples) out.set(name, median(xs));
  out.set(LADDER_STEPS[6], median(awaits));
  return out;
}
