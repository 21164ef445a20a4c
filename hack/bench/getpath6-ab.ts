// node dist/hack/bench/getpath6-ab.js [--rounds R] [--gets N] [--requests N] [--concurrency C]
//
// The fifth get pass's two per-request changes, each measured alone in one process,
// rounds alternating (A, B, B, A, ...), CPU per operation from process.cpuUsage over
// each round; the median of the rounds counts. The whole request's cost is measured
// by get-path.ts (--base for an A/B of two builds, --alloc for the allocation); these
// isolate the changes from Node's HTTPS and TLS, which on a shared machine drown them.
//
// 1. A consistent get from the watch cache over SQLite through the server's KV stack
//    (MeteredKV over BoundedKV, as pkg/server/storage.ts builds it), C gets in flight:
//      committed  the committed revision read in process (KV.committedRevision)
//      batcher    a revision read per round through the RevisionBatcher, the wrappers
//                 and SQLite's async currentRevision, as every get did before (the
//                 same CachedStorage given the batcher as its revisionReader, which
//                 turns the in-process revision off)
// 2. A request deadline armed and disarmed, C requests in flight, each finishing in
//    turn (none reaches its deadline of 60 s, as in a get that is answered):
//      list       RequestDeadlines (pkg/apiserver/filters/deadline-list.ts) on
//                 entries like the scope's
//      timer      a setTimeout per request with a closure, cleared when it ends, as
//                 RequestScope.armDeadline did before
// Prints CPU µs per get and CPU ns per request, by round and the median, and each
// pair's ratio.

import { parseArgs } from 'node:util';

import { median } from './get-sides.js';
import { BoundedKV } from '../../pkg/storage/bounded-kv.js';
import { CachedStorage, prefixAtDepth } from '../../pkg/storage/cacher/index.js';
import { MeteredKV } from '../../pkg/storage/metered-kv.js';
import { RevisionBatcher } from '../../pkg/storage/revision-batcher.js';
import { SqliteKV } from '../../pkg/storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../../pkg/storage/store.js';
import {
  RequestDeadlines,
  type DeadlineEntry,
  type DeadlineList,
} from '../../pkg/apiserver/filters/deadline-list.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    gets: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '500000' },
    concurrency: { type: 'string', default: '32' },
  },
});
const rounds = Number(values.rounds);
const gets = Number(values.gets);
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);

/** Runs each side once a round, in alternating order; CPU per operation (ns) by side. */
async function alternate(
  sides: Record<string, () => Promise<number> | number>,
): Promise<Record<string, number[]>> {
  const names = Object.keys(sides);
  const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const start = process.cpuUsage();
      const ops = await sides[name]!();
      const used = process.cpuUsage(start);
      out[name]!.push(((used.user + used.system) * 1000) / ops);
    }
  }
  return out;
}

function report(unit: string, scale: number, results: Record<string, number[]>): void {
  const names = Object.keys(results);
  for (const name of names) {
    const list = results[name]!.map((x) => x / scale);
    console.log(
      `  ${name.padEnd(9)} CPU ${unit} ${list.map((x) => x.toFixed(scale === 1 ? 0 : 2)).join(', ')} (median ${median(list).toFixed(scale === 1 ? 0 : 2)})`,
    );
  }
  const [a, b] = names;
  if (a && b) console.log(`  ${a}/${b} ${(median(results[a]!) / median(results[b]!)).toFixed(2)}x`);
}

// ---- 1. the consistent get ------------------------------------------------------

const USERS = '/registry/management.platform.dev/users/';

async function openCache(withBatcher: boolean): Promise<CachedStorage> {
  const sqlite = SqliteKV.open(':memory:');
  const kv = new MeteredKV(new BoundedKV(sqlite), '/registry');
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    ...(withBatcher ? { revisionReader: (read: () => Promise<number>) => new RevisionBatcher(read) } : {}),
  });
  if (!(await storage.warm([USERS]))) throw new Error('the cache did not start');
  await storage.create(`${USERS}u`, {
    apiVersion: 'management.platform.dev/v1',
    kind: 'User',
    metadata: { name: 'u' },
    spec: { username: 'u', email: 'u@example.com' },
  });
  return storage;
}

async function consistentGets(storage: CachedStorage): Promise<number> {
  const key = `${USERS}u`;
  const options = { resourceVersion: '' };
  const inFlight: Promise<unknown>[] = new Array<Promise<unknown>>(concurrency);
  for (let done = 0; done < gets; done += concurrency) {
    for (let i = 0; i < concurrency; i++) inFlight[i] = storage.get(key, options);
    await Promise.all(inFlight);
  }
  return Math.ceil(gets / concurrency) * concurrency;
}

// ---- 2. the request deadline ---------------------------------------------------

class Entry implements DeadlineEntry {
  expiresAt = Infinity;
  armedIn: DeadlineList | undefined;
  prevArmed: DeadlineEntry | undefined;
  nextArmed: DeadlineEntry | undefined;
  timer: NodeJS.Timeout | undefined;
  expired = false;
}

const TIMEOUT_MS = 60_000;
const deadlines = new RequestDeadlines<Entry>(TIMEOUT_MS, (e) => (e.expired = true));

function withList(): number {
  const ring = Array.from({ length: concurrency }, () => new Entry());
  for (let i = 0; i < requests; i++) {
    const e = ring[i % concurrency]!;
    deadlines.disarm(e); // the request before it in this slot finished
    deadlines.arm(e, TIMEOUT_MS);
  }
  for (const e of ring) deadlines.disarm(e);
  return requests;
}

function withTimers(): number {
  const ring = Array.from({ length: concurrency }, () => new Entry());
  for (let i = 0; i < requests; i++) {
    const e = ring[i % concurrency]!;
    if (e.timer) clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = undefined;
      e.expired = true;
    }, TIMEOUT_MS);
  }
  for (const e of ring) if (e.timer) clearTimeout(e.timer);
  return requests;
}

const committed = await openCache(false);
const batched = await openCache(true);
console.log(`consistent get from the watch cache over SQLite, ${concurrency} in flight, ${gets} gets a round:`);
report('us/get', 1000, await alternate({ committed: () => consistentGets(committed), batcher: () => consistentGets(batched) }));
await committed.close();
await batched.close();

console.log(`request deadline armed and disarmed, ${concurrency} in flight, ${requests} requests a round:`);
report('ns/request', 1, await alternate({ list: withList, timer: withTimers }));
