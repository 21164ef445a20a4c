// Fair queuing under a flood (issue 15): one user sends ten times what the server
// can serve while another reads as it always does; the other user's get p99 should
// stay within 3x of its p99 on an idle server. The server is the real handler over
// fake storage whose get holds its seat for a fixed time, with a small read limit,
// so the limit (not this shared machine's CPU) is what runs out: capacity is
// seats / service time, and the flood offers ten times that, open-loop.
// Loopback only, bounded in time.
// Run alone: node dist/hack/bench/fairness.js [seconds]

import { Agent, request } from 'node:http';

import { GROUP, startTestServer } from '../../pkg/apiserver/testing/fakes.js';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import type { RequestContext } from '../../pkg/registry/rest/interfaces.js';
import { Latencies, type LatencySummary } from './histogram.js';

export interface FairnessOptions {
  /** Read seats (--max-requests-inflight). */
  readonly seats: number;
  /** How long a get holds its seat. */
  readonly serviceMs: number;
  /** The flood, as a multiple of what the server can serve. */
  readonly overload: number;
  /** How long each phase (idle, flooded) measures. */
  readonly durationMs: number;
}

export const DEFAULT_FAIRNESS: FairnessOptions = { seats: 2, serviceMs: 100, overload: 10, durationMs: 5000 };

export interface FairnessResult {
  /** The light user's gets on an idle server. */
  readonly idle: LatencySummary;
  /** The light user's gets while the other floods. */
  readonly flooded: LatencySummary;
  /** Answers the light user got while flooded, by status code. */
  readonly lightCodes: Readonly<Record<string, number>>;
  /** Answers the flooding user got, by status code. */
  readonly floodCodes: Readonly<Record<string, number>>;
  /** Requests per second the flood offered. */
  readonly floodRate: number;
}

const PATH = `/apis/${GROUP}/v1/teams/t`;

function get(url: string, token: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${PATH}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function count(codes: Record<string, number>, code: number): void {
  codes[code] = (codes[code] ?? 0) + 1;
}

/** The light user: one get after another, for `ms`. */
async function lightUser(url: string, ms: number, codes: Record<string, number>): Promise<LatencySummary> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = new Latencies();
  const until = performance.now() + ms;
  try {
    while (performance.now() < until) {
      const started = performance.now();
      count(codes, await get(url, 'bob-token', agent));
      latencies.recordMs(performance.now() - started);
    }
  } finally {
    agent.destroy();
  }
  return latencies.summary();
}

export async function measureFairness(options: FairnessOptions = DEFAULT_FAIRNESS): Promise<FairnessResult> {
  const server = await startTestServer({
    maxRequestsInflight: options.seats,
    prepare: (teams) => {
      const original = teams.get.bind(teams);
      teams.get = async (ctx: RequestContext, name, opts): Promise<KubeObject> => {
        await new Promise((resolve) => setTimeout(resolve, options.serviceMs));
        return original(ctx, name, opts);
      };
    },
  });
  server.teams.objects.set('t', {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name: 't', resourceVersion: '1' },
  });
  const floodCodes: Record<string, number> = {};
  const lightCodes: Record<string, number> = {};
  const floodRate = ((options.seats * 1000) / options.serviceMs) * options.overload;
  try {
    const idle = await lightUser(server.url, options.durationMs, {});
    // The flood: open-loop, `floodRate` gets a second from alice, answered or not.
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    const inFlight = new Set<Promise<void>>();
    let stop = false;
    const flood = (async (): Promise<void> => {
      const tickMs = 10;
      const perTick = Math.max(1, Math.round((floodRate * tickMs) / 1000));
      while (!stop) {
        for (let i = 0; i < perTick; i++) {
          const p: Promise<void> = get(server.url, 'admin-token', agent).then(
            (code) => count(floodCodes, code),
            () => count(floodCodes, 0),
          );
          inFlight.add(p);
          void p.finally(() => inFlight.delete(p));
        }
        await new Promise((resolve) => setTimeout(resolve, tickMs));
      }
    })();
    // Let the flood fill its queues before measuring.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const flooded = await lightUser(server.url, options.durationMs, lightCodes);
    stop = true;
    await flood;
    await Promise.all([...inFlight]);
    agent.destroy();
    return { idle, flooded, lightCodes, floodCodes, floodRate };
  } finally {
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const seconds = Number(process.argv[2] ?? '') || DEFAULT_FAIRNESS.durationMs / 1000;
  const r = await measureFairness({ ...DEFAULT_FAIRNESS, durationMs: seconds * 1000 });
  const ratio = r.flooded.p99Ms / r.idle.p99Ms;
  console.log(
    JSON.stringify({ floodRate: r.floodRate, lightCodes: r.lightCodes, floodCodes: r.floodCodes }, null, 1),
  );
  console.log(
    `light user's get p99: idle ${r.idle.p99Ms} ms, under a ${DEFAULT_FAIRNESS.overload}x flood ${r.flooded.p99Ms} ms: ${ratio.toFixed(2)}x (target <= 3x)`,
  );
}
