// What recording request metrics costs a get, measured A/B in one process: the
// same handler over the fake storage (a get that costs almost nothing, so the
// metrics' share is as large as it can be) with and without metrics, in
// alternating rounds so machine noise falls on both alike. Besides throughput it
// reports this process's CPU time per request (client and server both live here),
// which other processes on a shared machine disturb far less than throughput.
// Loopback only, bounded in time.
// Run: node dist/hack/bench/metrics-ab.js [seconds-per-round] [rounds]

import { Agent, request } from 'node:http';

import { GROUP, startTestServer, type TestServer } from '../../pkg/apiserver/testing/fakes.js';

const CONCURRENCY = 16;

async function seed(s: TestServer): Promise<void> {
  s.teams.objects.set('bench', {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name: 'bench', resourceVersion: '1' },
  });
}

interface Round {
  /** Requests per second. */
  readonly rate: number;
  /** CPU microseconds of this process per request. */
  readonly cpuUs: number;
}

/** GET one team, with CONCURRENCY keep-alive connections, for `ms`. */
async function throughput(url: string, ms: number): Promise<Round> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const path = `/apis/${GROUP}/v1/teams/bench`;
  const until = performance.now() + ms;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          `${url}${path}`,
          { agent, headers: { authorization: 'Bearer admin-token' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
      done++;
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(cpu);
  const elapsed = performance.now() - started;
  agent.destroy();
  return { rate: (done * 1000) / elapsed, cpuUs: (used.user + used.system) / done };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 3);
  const rounds = Number(process.argv[3] ?? 4);
  const withMetrics = await startTestServer({ metrics: true });
  const without = await startTestServer({ metrics: false });
  await seed(withMetrics);
  await seed(without);
  // Warm both (JIT) before measuring.
  await throughput(withMetrics.url, 1000);
  await throughput(without.url, 1000);
  const on: Round[] = [];
  const off: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which goes first, so a drift in machine load does not favour one.
    if (i % 2 === 0) {
      on.push(await throughput(withMetrics.url, seconds * 1000));
      off.push(await throughput(without.url, seconds * 1000));
    } else {
      off.push(await throughput(without.url, seconds * 1000));
      on.push(await throughput(withMetrics.url, seconds * 1000));
    }
  }
  await withMetrics.close();
  await without.close();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const report = (label: string, rounds: Round[]): { rate: number; cpu: number } => {
    const rate = median(rounds.map((r) => r.rate));
    const cpu = median(rounds.map((r) => r.cpuUs));
    console.log(
      `${label}: get/s ${rounds.map((r) => r.rate.toFixed(0)).join(', ')} (median ${rate.toFixed(0)}); ` +
        `CPU us/get ${rounds.map((r) => r.cpuUs.toFixed(1)).join(', ')} (median ${cpu.toFixed(1)})`,
    );
    return { rate, cpu };
  };
  const a = report('with metrics   ', on);
  const b = report('without metrics', off);
  console.log(
    `cost of metrics: ${(((b.rate - a.rate) / b.rate) * 100).toFixed(1)}% of get throughput, ${(((a.cpu - b.cpu) / b.cpu) * 100).toFixed(1)}% more CPU per get`,
  );
}

await main();
