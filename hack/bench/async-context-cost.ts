// node dist/hack/bench/async-context-cost.js [--ops N] [--rounds R] [--depth D]
//
// What an AsyncLocalStorage costs every promise on this Node (issue 17,
// docs/performance/storage-deadline-without-asynclocalstorage.md). Until that change the
// storage deadline travelled in one (pkg/storage/deadline.ts ran each request under
// als.run), and once a store is in use Node 20 turns on promise hooks for every promise
// in the process, the request's or not. One process, one promise-heavy loop: each op is
// a chain of `--depth` nested async calls, each awaiting a resolved promise, about what
// a get's storage path awaits. Three sides, alternated round by round (A, B, C, B, C,
// A, ...) so a noisy neighbour slows them alike; the median of the rounds counts:
//   none      no AsyncLocalStorage in use (hooks off): the server after the change
//   run       each op inside als.run(store, ...), as the server ran each request before
//   enabled   a store in use elsewhere (hooks on), the op itself outside any store
// Between sides the storage is disabled (als.disable()), which turns the hooks off again.
// Prints ops/s and CPU microseconds per op and per promise (process.cpuUsage over the
// timed window; the figure the shared machine disturbs least).

import { AsyncLocalStorage } from 'node:async_hooks';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    ops: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '7' },
    depth: { type: 'string', default: '8' },
  },
});
const OPS = Number(args.ops);
const ROUNDS = Number(args.rounds);
const DEPTH = Number(args.depth);

type Side = 'none' | 'run' | 'enabled';
const SIDES: readonly Side[] = ['none', 'run', 'enabled'];

interface Figures {
  readonly opsPerSecond: number;
  readonly cpuMicrosPerOp: number;
}

/** A store like the deadline the server carried: an object per request. */
class Store {
  constructor(readonly deadlineAt: number) {}
}

const als = new AsyncLocalStorage<Store>();

/** `depth` nested async calls, each awaiting once more: 2 promises a level (the call's and the await's). */
async function chain(depth: number): Promise<number> {
  if (depth === 0) return await Promise.resolve(1);
  return (await chain(depth - 1)) + 1;
}

async function op(side: Side): Promise<number> {
  if (side === 'run') return als.run(new Store(Date.now() + 60_000), () => chain(DEPTH));
  return chain(DEPTH);
}

async function measure(side: Side): Promise<Figures> {
  // Hooks on for 'enabled': a store entered in another async context, left there.
  if (side === 'enabled')
    await new Promise<void>((resolve) => als.run(new Store(0), () => setImmediate(resolve)));
  // Sixteen ops in flight at once, as concurrent requests interleave.
  const lanes = 16;
  const perLane = Math.ceil(OPS / lanes);
  let sum = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = 0; i < perLane; i++) {
        const value = await op(side);
        sum += value;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  als.disable();
  if (sum !== perLane * lanes * (DEPTH + 1)) throw new Error('the loop did not run every op');
  const ops = perLane * lanes;
  return { opsPerSecond: ops / elapsed, cpuMicrosPerOp: (used.user + used.system) / ops };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  const results = new Map<Side, Figures[]>(SIDES.map((s) => [s, []]));
  // A warm-up of each side first, not counted.
  for (const side of SIDES) await measure(side);
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate which side goes first, so none is always after the same one.
    const order = SIDES.map((_, i) => SIDES[(i + round) % SIDES.length] as Side);
    for (const side of order) results.get(side)?.push(await measure(side));
  }
  const promisesPerOp = 2 * (DEPTH + 1) + 1;
  console.log(
    `node ${process.version}, ${OPS} ops a round, ${ROUNDS} rounds, ~${promisesPerOp} promises an op`,
  );
  const base = median((results.get('none') ?? []).map((r) => r.cpuMicrosPerOp));
  for (const side of SIDES) {
    const rounds = results.get(side) ?? [];
    const cpu = median(rounds.map((r) => r.cpuMicrosPerOp));
    const rate = median(rounds.map((r) => r.opsPerSecond));
    console.log(
      `${side.padEnd(8)} ${Math.round(rate).toString().padStart(9)} ops/s  ${cpu.toFixed(3)} us CPU/op  ` +
        `${((cpu * 1000) / promisesPerOp).toFixed(1)} ns CPU/promise  ${(cpu / base).toFixed(2)}x none`,
    );
  }
}

await main();
