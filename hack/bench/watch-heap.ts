// node dist/hack/bench/watch-heap.js [--watches N] [--rounds R] [--compare DIR] [--snapshot DIR]
//                                   [--path P] [--top N] [--layers Class=layer,...]
//
// Heap and RSS per idle watch (issue 17's "heap per idle watch ≤ 2× the bare server"),
// small enough for a shared machine, and where that heap goes. The API server (a forked
// server host on sqlite, as the bench's memory group runs it) and the bare server
// (hack/bench/bare-server.ts `stream` mode: node:https holding idle chunked responses,
// the same certificate) each take `--watches` idle HTTPS watches (default
// `/apis/<group>/v1/teams?watch=1&timeoutSeconds=3600`, each on its own connection,
// from one forked load generator: the bench's `open-idle-watches` job); each child
// measures its heap and RSS after a forced full GC (--expose-gc) before and after,
// then the watches close. Rounds alternate server, [compare,] bare, ...; the median
// round counts, and round 1 is reported apart: it is cold, as in the bench, where
// code compiled and caches filled for the first watch count against the 1,000.
//
// --compare DIR  also runs another build's server host (DIR: that build's
//                dist/hack/bench), as a third side: an A/B of two builds in one run.
// --snapshot DIR after the rounds, writes heap snapshots of each side with no watch
//                open (warm) and with N, into DIR, and prints the difference per watch
//                (hack/bench/heap-snapshot-summary.ts): by class, and by owning layer
//                (Node's HTTP/TLS per connection, the request's scope, the watch
//                writer, the cache watcher ...) through the dominator tree; --layers
//                replaces the owner classes (default: LAYERS below), --top the rows shown.
// --path         the watched path (default the teams watch above).

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Child } from './children.js';
import {
  compareHeapSummaries,
  formatHeapComparison,
  parseLayers,
  readHeapSnapshot,
  summariseHeapSnapshot,
} from './heap-snapshot-summary.js';
import type { MemoryUsage } from './memory.js';
import type { HostStarted } from './server-host.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH } from './objects.js';

/**
 * The owners the layer split charges objects to: the first of these classes on an
 * object's dominator chain takes it. Node's own per-connection objects (the bare server
 * holds the same), then this server's, outermost first.
 */
const LAYERS = [
  'TLSSocket=node http/tls',
  'Socket=node http/tls',
  'ServerResponse=node http/tls',
  'IncomingMessage=node http/tls',
  'HTTPParser=node http/tls',
  'TLSWrap=node http/tls',
  'RequestScope=request scope',
  'ActiveWatch=watch writer',
  'CacheWatcher=cache watcher',
  'WatchQueue=cache watcher',
].join(',');

const { values } = parseArgs({
  options: {
    watches: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    compare: { type: 'string' },
    snapshot: { type: 'string' },
    path: { type: 'string', default: `${API_PATH}/teams?watch=1&timeoutSeconds=3600` },
    top: { type: 'string', default: '30' },
    layers: { type: 'string', default: LAYERS },
  },
});
const count = Number(values.watches);
const rounds = Number(values.rounds);
const watchPath = values.path ?? '';

interface Side {
  readonly name: string;
  readonly child: Child;
  readonly target: HttpTarget;
  readonly path: string;
}

interface PerWatch {
  readonly heap: number;
  readonly rss: number;
  readonly opened: number;
}

const dir = mkdtempSync(join(tmpdir(), 'watch-heap-'));
const children: Child[] = [];

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

try {
  const load = Child.start('load', 'load', { logFile: join(dir, 'load.log') });
  children.push(load);
  const job = async (j: Job): Promise<LoadResult> => {
    const r = await load.call<LoadResult>({ job: j });
    if (r.errors > 0) console.error(`${j.kind}: ${r.errors} errors, first: ${r.firstError ?? ''}`);
    return r;
  };
  let certs: HostStarted | undefined;
  const startHost = async (name: string, fromDir?: string): Promise<Side> => {
    const child = Child.start(name, 'server-host', {
      logFile: join(dir, `${name}.log`),
      gc: true,
      maxOldSpaceMb: 4096,
      ...(fromDir ? { fromDir } : {}),
    });
    children.push(child);
    const s = await child.call<HostStarted>({
      start: {
        args: ['--secure-port', '0', '--data-dir', join(dir, `${name}-data`), '--storage-backend', 'sqlite'],
      },
    });
    certs ??= s;
    return { name, child, target: { origin: s.origin, token: s.token }, path: watchPath };
  };
  const server = await startHost('server');
  const sides: Side[] = [server];
  if (values.compare) sides.push(await startHost('compare', values.compare));
  const bareChild = Child.start('bare', 'bare-server', { gc: true });
  children.push(bareChild);
  const { origin } = await bareChild.call<{ origin: string }>({
    start: { certPem: certs?.certPem, keyPem: certs?.keyPem, behaviour: { mode: 'stream' } },
  });
  sides.push({ name: 'bare', child: bareChild, target: { origin, token: '' }, path: '/' });

  /** Opens N idle watches on a side, measures its heap and RSS per watch, closes them. */
  const measure = async (side: Side): Promise<PerWatch> => {
    const before = await side.child.call<MemoryUsage>({ memory: true });
    const opened = await job({ kind: 'open-idle-watches', target: side.target, count, path: side.path });
    await settle(500);
    const after = await side.child.call<MemoryUsage>({ memory: true });
    await job({ kind: 'close-idle-watches' });
    // Let the side see every connection close before the next one measures.
    await settle(1000);
    const n = Math.max(1, opened.operations);
    return { heap: (after.heapUsed - before.heapUsed) / n, rss: (after.rss - before.rss) / n, opened: n };
  };

  const results = new Map<string, PerWatch[]>(sides.map((s) => [s.name, []]));
  const fmt = (x: PerWatch): string => `heap ${x.heap.toFixed(0)} B, RSS ${x.rss.toFixed(0)} B (${x.opened})`;
  for (let r = 0; r < rounds; r++) {
    const line: string[] = [];
    for (const side of sides) {
      const x = await measure(side);
      results.get(side.name)?.push(x);
      line.push(`${side.name} ${fmt(x)}`);
    }
    console.log(`round ${r + 1}${r === 0 ? ' (cold)' : ''}: ${line.join('; ')}`);
  }
  const bareHeap = (pick: (xs: PerWatch[]) => number): number => pick(results.get('bare') ?? []);
  const report = (
    label: string,
    pick: (xs: PerWatch[]) => number,
    pickRss: (xs: PerWatch[]) => number,
  ): void => {
    console.log(`${label}:`);
    for (const side of sides) {
      const xs = results.get(side.name) ?? [];
      const heap = pick(xs);
      console.log(
        `  ${side.name.padEnd(8)} heap ${heap.toFixed(0).padStart(6)} B/watch` +
          `${side.name === 'bare' ? '' : ` (${(heap / bareHeap(pick)).toFixed(2)}× bare)`}` +
          `, RSS ${pickRss(xs).toFixed(0)} B/watch`,
      );
    }
  };
  report(
    `round 1, cold (as the bench measures), ${count} watches`,
    (xs) => xs[0]?.heap ?? NaN,
    (xs) => xs[0]?.rss ?? NaN,
  );
  if (rounds > 1) {
    report(
      `median of rounds 2-${rounds}, warm`,
      (xs) => median(xs.slice(1).map((x) => x.heap)),
      (xs) => median(xs.slice(1).map((x) => x.rss)),
    );
  }

  if (values.snapshot) {
    mkdirSync(values.snapshot, { recursive: true });
    const layers = parseLayers(values.layers ?? '');
    for (const side of sides) {
      const base = join(values.snapshot, `${side.name}-0.heapsnapshot`);
      const full = join(values.snapshot, `${side.name}-${count}.heapsnapshot`);
      await side.child.call({ heapSnapshot: base });
      const opened = await job({ kind: 'open-idle-watches', target: side.target, count, path: side.path });
      await settle(500);
      await side.child.call({ heapSnapshot: full });
      await job({ kind: 'close-idle-watches' });
      const n = Math.max(1, opened.operations);
      const before = summariseHeapSnapshot(readHeapSnapshot(base), layers);
      const after = summariseHeapSnapshot(readHeapSnapshot(full), layers);
      console.log(`\n== ${side.name}: heap snapshot difference per watch (${base}, ${full})`);
      console.log(formatHeapComparison(compareHeapSummaries(before, after, n), Number(values.top)));
    }
  }
} finally {
  for (const c of children.reverse()) await c.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
