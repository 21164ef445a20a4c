// node dist/hack/bench/console-detail-watch.js [--pages N] [--writes W] [--rounds R]
//
// What the console's live detail pages cost the server, A/B in one process. A detail
// page watches its one object (`fieldSelector=metadata.name=<name>`, as `kubectl get
// <name> -w`); the alternative it was chosen over is watching the whole collection
// and picking the object out in the browser. The whole server (startWithAdmin: SQLite,
// watch cache) runs here, with `--pages` HTTPS watches open in one of three ways while
// one client merge-patches a team `--writes` times, one write at a time:
//   none        no watch open (the console before: detail pages did not follow);
//   detail      one watch per open page, each of another team, by field selector (now);
//   collection  one watch per open page of all teams (the alternative).
// Rounds alternate none, detail, collection, ... and the median round counts. Reports
// writes per second and this process's CPU µs per write (`process.cpuUsage()` from the
// first write until the last write is answered and, for `collection`, every watcher
// has its event). Client and server share the process: in `collection` the watchers'
// TLS decryption is counted too (a browser would pay it, the server its encryption).
// Loopback only, bounded in time; small enough for a shared machine.

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { startWithAdmin } from '../../pkg/server/testing.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '100' },
    writes: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
  },
});
const PAGES = Number(values.pages);
const WRITES = Number(values.writes);
const ROUNDS = Number(values.rounds);
const MODES = ['none', 'detail', 'collection'] as const;
type Mode = (typeof MODES)[number];

interface Round {
  readonly writesPerSecond: number;
  readonly cpuUsPerWrite: number;
}

interface Client {
  readonly base: string;
  readonly options: RequestOptions;
}

function send(
  client: Client,
  method: string,
  path: string,
  body?: unknown,
  type = 'application/json',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${client.base}${path}`,
      { ...client.options, method, headers: { ...client.options.headers, 'content-type': type } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          (res.statusCode ?? 0) < 300
            ? resolve(text)
            : reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** An open watch that counts the events it receives. */
interface OpenWatch {
  events: number;
  close(): void;
}

function openWatch(client: Client, path: string): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const watch: OpenWatch = { events: 0, close: () => req.destroy() };
    const req = request(`${client.base}${path}`, { ...client.options, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch ${path}: ${res.statusCode}`));
      res.on('data', (c: Buffer) => {
        for (const byte of c) if (byte === 0x0a) watch.events++;
      });
      res.on('error', () => undefined);
      resolve(watch);
    });
    req.on('error', () => undefined);
    req.end();
  });
}

async function until(done: () => boolean, withinMs: number): Promise<void> {
  const end = Date.now() + withinMs;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'console-detail-watch-'));
  const started = await startWithAdmin(dir);
  const client: Client = {
    base: `${started.server.url}/kubernetes/management/apis/management.platform.dev/v1`,
    options: {
      ca: started.ca,
      agent: new Agent({ keepAlive: true, maxSockets: 1, ca: started.ca }),
      headers: { authorization: `Bearer ${started.token}`, accept: 'application/json' },
    },
  };
  try {
    for (let i = 0; i < PAGES; i++)
      await send(client, 'POST', '/teams', {
        metadata: { name: `page-${i}` },
        spec: { displayName: `Page ${i}` },
      });
    await send(client, 'POST', '/teams', { metadata: { name: 'busy' }, spec: { description: '0' } });
    let n = 0;
    const round = async (mode: Mode): Promise<Round> => {
      const rv = (
        JSON.parse(await send(client, 'GET', '/teams?limit=1')) as { metadata: { resourceVersion: string } }
      ).metadata.resourceVersion;
      const watches: OpenWatch[] = [];
      if (mode !== 'none') {
        for (let i = 0; i < PAGES; i++) {
          const selector =
            mode === 'detail' ? `fieldSelector=${encodeURIComponent(`metadata.name=page-${i}`)}&` : '';
          watches.push(await openWatch(client, `/teams?${selector}watch=1&resourceVersion=${rv}`));
        }
      }
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      for (let w = 0; w < WRITES; w++) {
        await send(
          client,
          'PATCH',
          '/teams/busy',
          { spec: { description: String(++n) } },
          'application/merge-patch+json',
        );
      }
      if (mode === 'collection') await until(() => watches.every((x) => x.events >= WRITES), 30_000);
      const elapsed = performance.now() - t0;
      const used = process.cpuUsage(cpu);
      for (const w of watches) w.close();
      if (mode === 'detail' && watches.some((x) => x.events > 0))
        throw new Error('a detail watch saw another team');
      return {
        writesPerSecond: (WRITES * 1000) / elapsed,
        cpuUsPerWrite: (used.user + used.system) / WRITES,
      };
    };
    // Warm up (JIT, the watch cache) with one round of each, not counted.
    for (const mode of MODES) await round(mode);
    const results = new Map<Mode, Round[]>(MODES.map((m) => [m, []]));
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order so a drift in machine load falls on every mode alike.
      const order = MODES.map((_, i) => MODES[(i + r) % MODES.length] as Mode);
      for (const mode of order) results.get(mode)?.push(await round(mode));
    }
    console.log(`${PAGES} open pages, ${WRITES} writes per round, ${ROUNDS} rounds (median)`);
    const base = median(results.get('none')?.map((x) => x.cpuUsPerWrite) ?? []);
    for (const mode of MODES) {
      const rs = results.get(mode) ?? [];
      const cpu = median(rs.map((x) => x.cpuUsPerWrite));
      console.log(
        `${mode.padEnd(10)} ${median(rs.map((x) => x.writesPerSecond))
          .toFixed(0)
          .padStart(6)} writes/s` +
          `  ${cpu.toFixed(0).padStart(7)} CPU µs/write  (${(cpu / base).toFixed(2)}× none)` +
          `  rounds: ${rs.map((x) => x.cpuUsPerWrite.toFixed(0)).join(' ')}`,
      );
    }
  } finally {
    (client.options.agent as Agent).destroy();
    await started.server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
