// node dist/hack/bench/create-etcd-cost.js [--seconds S] [--rounds R] [--callers 64]
//
// What etcd itself spends per create, and what each watch stream that sees the
// create adds (issue 17, docs/performance/create-path-third-pass.md). The
// server, the load and etcd share the machine's two cores, so etcd's CPU per create
// counts against the create row as much as the server's does, and the raw-put
// baseline pays etcd for one put and nothing else.
//
// In one process, against one loopback etcd (hack/etcd.ts), at `--callers`
// concurrency, rounds alternating the variants (medians printed):
//
// - put:          a plain Put of the same ~1.2 KiB value through the `etcd3` package,
//                 as the harness's raw-put baseline makes it (its client CPU is that
//                 package's, not comparable with the others');
// - txn:          the server's create, the conditional Txn of Etcd3KV.create;
// - txn + 1 watch, txn + 2 watches: the same with one or two watches over the keys
//   written (Etcd3KV.watch without previous values, each on its own gRPC stream, as
//   the users cache's watch and the write-order watch of etcd < 3.4.31 are).
//
// Per operation: etcd's CPU (user + system from /proc/<pid>/stat over the window;
// 10 ms ticks, so windows of a few thousand operations) and this process's CPU
// (process.cpuUsage: the client's calls and the watches' decoding).

import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { startEtcd } from '../etcd.js';
import { Etcd3KV } from '../../pkg/storage/etcd3/etcd3-kv.js';
import type { KVWatch } from '../../pkg/storage/kv.js';
import { etcdPidsOfThisProcess, processCpuMicros } from './process-cpu.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    callers: { type: 'string', default: '64' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CALLERS = Number(values.callers);
/** About what the harness stores for one bench User. */
const VALUE = Buffer.from(JSON.stringify({ spec: { data: 'x'.repeat(1150) } }));
const PREFIX = '/bench/create-etcd-cost/';

interface Variant {
  readonly name: string;
  readonly watches: number;
  readonly call: (clients: Clients, key: string) => Promise<unknown>;
}

interface Clients {
  readonly kv: Etcd3KV;
  readonly raw: Etcd3;
}

const VARIANTS: readonly Variant[] = [
  { name: 'put', watches: 0, call: (c, key) => c.raw.put(key).value(VALUE).exec() },
  { name: 'txn', watches: 0, call: (c, key) => c.kv.create(key, VALUE) },
  { name: 'txn + 1 watch', watches: 1, call: (c, key) => c.kv.create(key, VALUE) },
  { name: 'txn + 2 watches', watches: 2, call: (c, key) => c.kv.create(key, VALUE) },
];

interface Figure {
  readonly perSecond: number;
  readonly etcdMicros: number;
  readonly ownMicros: number;
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function window(c: Clients, etcdPid: number, variant: Variant, round: number): Promise<Figure> {
  const watches: KVWatch[] = [];
  let delivered = 0;
  for (let i = 0; i < variant.watches; i++) {
    watches.push(
      c.kv.watch(PREFIX, 0, {
        withoutPrevious: true,
        onEvents: (events) => (delivered += events.length),
        onError: () => undefined,
      }),
    );
  }
  // Let the watches be created on etcd before the window opens.
  await new Promise((resolve) => setTimeout(resolve, 200));
  let calls = 0;
  const end = Date.now() + SECONDS * 1000;
  const etcdBefore = processCpuMicros(etcdPid);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (Date.now() < end) await variant.call(c, `${PREFIX}r${round}/${variant.name}/${calls++}`);
    }),
  );
  // Every event delivered before the window closes, so their decoding is counted.
  const until = Date.now() + 5000;
  while (delivered < calls * variant.watches && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  const etcdUsed = processCpuMicros(etcdPid) - etcdBefore;
  for (const w of watches) w.cancel();
  return {
    perSecond: calls / elapsed,
    etcdMicros: etcdUsed / calls,
    ownMicros: (used.user + used.system) / calls,
  };
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  try {
    const [etcdPid] = etcdPidsOfThisProcess();
    if (etcdPid === undefined) throw new Error('cannot find the etcd process this bench started');
    const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
    const c: Clients = { kv, raw: new Etcd3({ hosts: etcd.endpoint }) };
    const results = new Map<string, Figure[]>();
    for (const v of VARIANTS) await window(c, etcdPid, v, -1); // warm up
    for (let round = 0; round < ROUNDS; round++) {
      const order = VARIANTS.map((_, j) => VARIANTS[(round + j) % VARIANTS.length]!);
      for (const v of order) {
        const list = results.get(v.name) ?? [];
        list.push(await window(c, etcdPid, v, round));
        results.set(v.name, list);
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    await kv.close();
    c.raw.close();
    console.log(`${CALLERS} callers, ${ROUNDS} rounds of ${SECONDS} s, median (by round):`);
    console.log('variant            per second   etcd CPU µs/op              client CPU µs/op');
    for (const v of VARIANTS) {
      const fs = results.get(v.name) ?? [];
      const col = (pick: (f: Figure) => number): string =>
        `${median(fs.map(pick)).toFixed(0)} (${fs.map((f) => pick(f).toFixed(0)).join(', ')})`;
      console.log(
        `${v.name.padEnd(18)} ${median(fs.map((f) => f.perSecond))
          .toFixed(0)
          .padStart(10)}   ${col((f) => f.etcdMicros).padEnd(27)} ${col((f) => f.ownMicros)}`,
      );
    }
  } finally {
    await etcd.stop();
  }
}

await main();
