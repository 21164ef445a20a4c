// node dist/hack/bench/limiter-ab.js [--base DIST] [--rounds R] [--ms MS]
//
// What the overload limiter costs one request it admits, in this process: the
// max-in-flight filter's admit, and the seat's release when the response closes, for
// a plain user's get (administrators are exempt) with 32 requests holding seats at a
// time (the suite's limiter-get load: never queued, the limit of 400 is never
// reached). A plain EventEmitter stands in for each response; side `none` does the
// same without the filter (the response's own cost, the floor), side `current` uses
// this build's filter, and `--base DIST` adds side `base`, the filter of another build
// (a dist/ directory, e.g. one built from the commit before a change and kept in the
// worktree: .tmp/base/dist). Rounds alternate the sides (none, current, base, then
// current, base, none, ...) and the median counts; CPU nanoseconds per request come
// from process.cpuUsage() over each round. The end-to-end A/B of the same question
// (two servers, limiter on and off, CPU per get over HTTPS) is
// `node dist/hack/bench/get-path.js --limiter-ab`.

import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import type * as MaxInflight from '../../pkg/apiserver/filters/max-inflight.js';
import type { RequestInfo } from '../../pkg/apiserver/request-info.js';
import type { AuthenticatedUser } from '../../pkg/authentication/user/user.js';


const HELD = 32;

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    ms: { type: 'string', default: '1000' },
  },
});

const info = { verb: 'get', subresource: '', isResourceRequest: true } as RequestInfo;
const user: AuthenticatedUser = { name: 'reader', groups: ['system:authenticated'] };
const signalOf = (): AbortSignal => new AbortController().signal;

/** A response: an emitter that closes when told to, as ServerResponse emits 'close'. */
class FakeResponse extends EventEmitter {
  closed = false;
  close(): void {
    this.closed = true;
    this.emit('close');
  }
}

type Admit = (res: ServerResponse) => void | Promise<void>;

async function filterOf(distDir: string): Promise<Admit> {
  const url = pathToFileURL(resolve(distDir, 'pkg/apiserver/filters/max-inflight.js')).href;
  const { MaxInflightFilter } = (await import(url)) as typeof MaxInflight;
  const filter = MaxInflightFilter.create({
    maxRequestsInflight: 400,
    maxMutatingRequestsInflight: 200,
    queueWaitLimitMs: 15_000,
  });
  if (!filter) throw new Error('the limiter was not built');
  return (res) => filter.admit(res, info, user, signalOf);
}

/** One round: requests admitted for `ms`, HELD holding seats at any time; CPU ns per request. */
function round(admit: Admit | undefined, ms: number): { perSecond: number; cpuNs: number } {
  const held: FakeResponse[] = [];
  for (let i = 0; i < HELD; i++) {
    const res = new FakeResponse();
    if (admit?.(res as unknown as ServerResponse) instanceof Promise) throw new Error('a request queued');
    held.push(res);
  }
  let n = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + ms;
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) {
      const slot = n++ % HELD;
      held[slot]!.close();
      const res = new FakeResponse();
      if (admit?.(res as unknown as ServerResponse) instanceof Promise) throw new Error('a request queued');
      held[slot] = res;
    }
  }
  const used = process.cpuUsage(cpu);
  const elapsed = performance.now() - started;
  for (const res of held) res.close();
  return { perSecond: (n / elapsed) * 1000, cpuNs: ((used.user + used.system) * 1000) / n };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const here = resolve(import.meta.dirname, '../..');
const sides: { label: string; admit: Admit | undefined }[] = [
  { label: 'none', admit: undefined },
  { label: 'current', admit: await filterOf(here) },
];
if (args.base) sides.push({ label: 'base', admit: await filterOf(args.base) });
const ms = Number(args.ms);
const rounds = Number(args.rounds);
for (const s of sides) round(s.admit, ms); // warm: JIT
const results = new Map<string, { perSecond: number; cpuNs: number }[]>(sides.map((s) => [s.label, []]));
for (let i = 0; i < rounds; i++) {
  for (let j = 0; j < sides.length; j++) {
    const s = sides[(i + j) % sides.length]!;
    results.get(s.label)!.push(round(s.admit, ms));
  }
}
console.log(`limiter admission, ${HELD} seats held, ${rounds} rounds of ${ms} ms (median):`);
const floor = median(results.get('none')!.map((r) => r.cpuNs));
for (const s of sides) {
  const rs = results.get(s.label)!;
  const cpu = median(rs.map((r) => r.cpuNs));
  console.log(
    `  ${s.label.padEnd(8)} ${median(rs.map((r) => r.perSecond)).toFixed(0)} requests/s; CPU ns/request ` +
      `${rs.map((r) => r.cpuNs.toFixed(0)).join(', ')} (median ${cpu.toFixed(0)}` +
      (s.label === 'none' ? ', the response alone)' : `, the limiter's own ${(cpu - floor).toFixed(0)})`),
  );
}
