// What metering a storage call costs, before and after the resolved series (issue 17,
// the get path): A records each call as the storage metrics did through prom-client
// (a label object per call, hashed by Histogram.observe and Counter.inc), B through
// MeteredKV, which resolves the series of each (operation, group, resource) once and
// keeps it. Both wrap the same trivial backend (a get answering undefined), so what
// differs is the metering alone. Rounds alternate A, B, A, B, ...; each reports this
// process's CPU nanoseconds per call (process.cpuUsage over the round) and the medians
// count. In one process, loopback-free, bounded in time.
// Run: node dist/hack/bench/storage-metrics-ab.js [calls-per-round] [rounds]

import { Counter, Histogram, Registry } from 'prom-client';

import type { KV } from '../../pkg/storage/kv.js';
import { MeteredKV } from '../../pkg/storage/metered-kv.js';
import { LATENCY_BUCKETS } from '../../pkg/metrics/registry.js';
import { GROUP } from './objects.js';

const calls = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 9);
const KEY = `/registry/${GROUP}/users/reader`;

const backend = { get: () => Promise.resolve(undefined) } as unknown as KV;

/** The storage metrics as they were: prom-client metrics labelled per call. */
function promClientMetered(): (key: string) => Promise<unknown> {
  const registers = [new Registry()];
  const labelNames = ['operation', 'group', 'resource'];
  const duration = new Histogram({
    name: 'a_seconds',
    help: 'a',
    labelNames,
    buckets: [...LATENCY_BUCKETS],
    registers,
  });
  const total = new Counter({ name: 'a_total', help: 'a', labelNames, registers });
  const prefix = '/registry/';
  return async (key) => {
    const groupEnd = key.indexOf('/', prefix.length);
    const resourceEnd = key.indexOf('/', groupEnd + 1);
    const labels = {
      operation: 'get',
      group: key.slice(prefix.length, groupEnd),
      resource: key.slice(groupEnd + 1, resourceEnd),
    };
    const started = performance.now();
    try {
      return await backend.get(key);
    } finally {
      duration.observe(labels, (performance.now() - started) / 1000);
      total.inc(labels);
    }
  };
}

async function round(get: (key: string) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await get(KEY);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / calls;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

// One MeteredKV for every call, as the server keeps one.
const kv = new MeteredKV(backend, '/registry');
const sides: [string, (key: string) => Promise<unknown>][] = [
  ['prom-client, labels per call', promClientMetered()],
  ['MeteredKV, resolved series', (key) => kv.get(key)],
];

const results: number[][] = sides.map(() => []);
for (let r = 0; r < rounds + 1; r++) {
  const order = r % 2 === 0 ? [0, 1] : [1, 0];
  for (const which of order) {
    const side = sides[which];
    if (!side) continue;
    const ns = await round(side[1]);
    // The first round of each warms the JIT and is not counted.
    if (r > 0) results[which]?.push(ns);
  }
}
for (const [i, [name]] of sides.entries()) {
  const ns = results[i] ?? [];
  console.log(
    `${name}: CPU ns per call ${ns.map((n) => Math.round(n)).join(', ')} (median ${Math.round(median(ns))})`,
  );
}
const a = median(results[0] ?? []);
const b = median(results[1] ?? []);
console.log(`saved per storage call: ${Math.round(a - b)} ns of CPU (B/A ${(b / a).toFixed(2)})`);
