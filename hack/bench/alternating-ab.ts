// The A/B loop of the in-process cost scripts (impersonation-cost.ts, keyfixes-ab.ts):
// each pair of variants runs `calls` calls a round, rounds alternating (A, B, B, A, ...:
// the order reversed every other round, so machine noise falls on both alike), and
// prints each variant's median CPU microseconds per call (process.cpuUsage over the
// round) beside its median calls per second, then B minus A.

/** A variant: its name and one call. */
export type Variant = readonly [string, () => void];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export function compareAlternating(
  comparisons: ReadonlyArray<readonly [Variant, Variant]>,
  calls: number,
  rounds: number,
  unit = 'call',
  width = 44,
): void {
  for (const pair of comparisons) {
    const results = new Map<string, { cpuUs: number[]; rate: number[] }>();
    for (const [name] of pair) results.set(name, { cpuUs: [], rate: [] });
    for (let round = 0; round < rounds; round++) {
      for (const [name, fn] of round % 2 === 0 ? pair : [...pair].reverse()) {
        const cpu = process.cpuUsage();
        const start = performance.now();
        for (let i = 0; i < calls; i++) fn();
        const wall = performance.now() - start;
        const used = process.cpuUsage(cpu);
        const r = results.get(name)!;
        r.cpuUs.push((used.user + used.system) / calls);
        r.rate.push(calls / (wall / 1000));
      }
    }
    const [a, b] = pair.map(([name]) => median(results.get(name)!.cpuUs)) as [number, number];
    for (const [name, r] of results) {
      console.log(
        `${name.padEnd(width)} ${median(r.cpuUs).toFixed(4)} µs CPU per ${unit}   ${Math.round(median(r.rate)).toLocaleString('en')} ${unit}s/s`,
      );
    }
    console.log(`${'  difference'.padEnd(width)} ${(b - a).toFixed(4)} µs CPU per ${unit}\n`);
  }
}
