// node --expose-gc dist/hack/bench/watch-history.js [--objects N] [--rounds R] [--events E] [--only heap|cpu]
//
// What the watch cache's history window costs, the old way (a fixed ring of 10,000
// events per resource) against kube-apiserver's sizing (event-history.ts: 100 to
// 102,400 events, resized as events arrive to hold the last 75 s). Two parts:
//
// heap   each configuration in its own child process (--expose-gc), alternating
//        rounds: a cached SQLite store (in memory) is seeded with N User-sized
//        objects, each is then updated once, then the resource goes quiet (the
//        fake clock moves 100 s) and takes 10 writes a second apart; all of it once
//        as a burst (the fake clock moves 1 ms a write) and once slowly (1 s a write).
//        After each stage: heapUsed after a full collection, less the same process's
//        before seeding, per object; "no history" (a window of 1) is the floor, so
//        a configuration's excess over it is what its history holds.
// cpu    WatchCache.apply in this process, R rounds of E events on 500 keys per
//        configuration, alternating: CPU microseconds per applied event
//        (process.cpuUsage over the loop) and events per second; the sized window
//        once on the wall clock (a burst: it grows to 102,400) and once on a clock
//        that moves a second an event (a slow resource: it stays at 100).
//
// One child alone, writing heap snapshots before seeding, after the creates and after
// the updates (for heap-snapshot-summary.js):
//   node --expose-gc dist/hack/bench/watch-history.js --child fixed-10000 --snapshots DIR
//
// Small enough for a shared machine; rounds alternate so a noisy neighbour slows
// every configuration alike, and the median round counts.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import {
  defaultHistorySizing,
  fixedHistorySizing,
  type HistorySizing,
} from '../../pkg/storage/cacher/event-history.js';
import { CachedStorage, prefixAtDepth } from '../../pkg/storage/cacher/index.js';
import { CacheEntry, deepFreeze, WatchCache } from '../../pkg/storage/cacher/watch-cache.js';
import { SqliteKV } from '../../pkg/storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../../pkg/storage/store.js';
import { median } from './get-sides.js';
import { heapSnapshot, memory } from './memory.js';
import { userBody } from './objects.js';

const DIR = '/registry/management.platform.dev/users/';

type Mode = 'no-history' | 'fixed-10000' | 'sized';
const MODES: readonly Mode[] = ['no-history', 'fixed-10000', 'sized'];

interface HeapStages {
  readonly created: number;
  readonly updated: number;
  readonly quiet: number;
  readonly history: { created: string; updated: string; quiet: string };
}

/** The child: one configuration, heap per object after each stage. */
async function heapChild(mode: Mode, objects: number, stepMs: number, snapshots?: string): Promise<HeapStages> {
  const clock = { now: 0 };
  const now = (): number => clock.now;
  const kv = SqliteKV.open(':memory:');
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    now,
    ...(mode === 'no-history' ? { historyCapacity: 1 } : mode === 'fixed-10000' ? { historyCapacity: 10_000 } : {}),
  });
  await storage.warm([DIR]);
  const cacher = storage.cacher(DIR)!;
  const shape = (): string => `${cacher.history.length}/${cacher.history.capacity}`;
  const snapshot = (stage: string): void => {
    if (snapshots) heapSnapshot(join(snapshots, `${mode}-${stage}.heapsnapshot`));
  };
  snapshot('before');
  const before = memory().heapUsed;
  const perObject = (): number => Math.round((memory().heapUsed - before) / objects);
  const key = (i: number): string => `${DIR}user-${i}`;

  for (let i = 0; i < objects; i++) {
    clock.now += stepMs;
    await storage.create(key(i), userBody(`user-${i}`) as unknown as KubeObject);
  }
  await storage.get(key(objects - 1));
  const created = perObject();
  const createdShape = shape();
  snapshot('created');

  for (let i = 0; i < objects; i++) {
    clock.now += stepMs;
    await storage.guaranteedUpdate(key(i), (cur) => ({
      ...cur!,
      metadata: { ...cur!.metadata, labels: { ...cur!.metadata.labels, updated: 'yes' } },
    }));
  }
  await storage.get(key(objects - 1));
  const updated = perObject();
  const updatedShape = shape();
  snapshot('updated');

  clock.now += 100_000;
  for (let i = 0; i < 10; i++) {
    clock.now += 1000;
    await storage.guaranteedUpdate(key(i), (cur) => ({
      ...cur!,
      metadata: { ...cur!.metadata, labels: { ...cur!.metadata.labels, quiet: String(i) } },
    }));
  }
  await storage.get(key(9));
  const quiet = perObject();
  const quietShape = shape();
  await storage.close();
  return { created, updated, quiet, history: { created: createdShape, updated: updatedShape, quiet: quietShape } };
}

function runHeapChild(mode: Mode, objects: number, stepMs: number): HeapStages {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', fileURLToPath(import.meta.url), '--child', mode, '--objects', String(objects), '--step-ms', String(stepMs)],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as HeapStages;
}

/** CPU per applied event for one sizing: `events` puts over 500 keys, each a fresh frozen object. */
function applyRound(sizing: HistorySizing, events: number): { cpuUs: number; perSecond: number } {
  // The garbage of the round before (a burst's 102,400 events) is collected now, not charged to this one.
  (globalThis as { gc?: () => void }).gc?.();
  const cache = new WatchCache(sizing);
  cache.replace([], 1);
  const objects = Array.from({ length: 500 }, (_, i) =>
    deepFreeze({ apiVersion: 'v1', kind: 'User', metadata: { name: `u${i}` } }) as KubeObject,
  );
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let rev = 2; rev < events + 2; rev++) {
    const i = rev % 500;
    cache.apply(`k${i}`, rev, new CacheEntry(`k${i}`, rev, objects[i]));
  }
  const wallNs = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / events, perSecond: events / (wallNs / 1e9) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '3' },
      events: { type: 'string', default: '300000' },
      child: { type: 'string' },
      'step-ms': { type: 'string', default: '1' },
      snapshots: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const objects = Number(values.objects);
  if (values.child) {
    const stages = await heapChild(values.child as Mode, objects, Number(values['step-ms']), values.snapshots);
    console.log(JSON.stringify(stages));
    return;
  }
  const rounds = Number(values.rounds);
  const events = Number(values.events);

  // A burst (a write a millisecond: all within 75 s) and a slow resource (a write a second).
  for (const [pace, stepMs] of values.only === 'cpu' ? [] : [
    ['burst', 1],
    ['slow', 1000],
  ] as const) {
    const heap = new Map<Mode, HeapStages[]>(MODES.map((m) => [m, []]));
    for (let r = 0; r < rounds; r++) {
      for (const mode of MODES) heap.get(mode)!.push(runHeapChild(mode, objects, stepMs));
    }
    console.log(
      `heap per object, ${objects} objects written ${pace === 'burst' ? 'a write a millisecond' : 'a write a second'} ` +
        `(median of ${rounds}; history length/capacity after each stage)`,
    );
    console.log('configuration   after creates         after updates         quiet (+100 s, 10 writes)');
    for (const mode of MODES) {
      const runs = heap.get(mode)!;
      const last = runs[runs.length - 1]!.history;
      const cell = (stage: 'created' | 'updated' | 'quiet'): string =>
        `${median(runs.map((x) => x[stage]))} B (${last[stage]})`.padEnd(22);
      console.log(`${mode.padEnd(16)}${cell('created')}${cell('updated')}${cell('quiet')}`);
    }
    console.log('');
  }

  // The wall clock: this loop applies far more than 102,400 events within 75 s, a burst.
  // The slow side's clock moves a second each time it is read (once per event).
  const slowClock = (): (() => number) => {
    let t = 0;
    return () => (t += 1000);
  };
  const sizings: [string, () => HistorySizing][] = [
    ['fixed-10000', () => fixedHistorySizing(10_000)],
    ['sized, burst', () => defaultHistorySizing()],
    ['sized, slow', () => defaultHistorySizing(undefined, slowClock())],
  ];
  if (values.only === 'heap') return;
  if (!(globalThis as { gc?: unknown }).gc) console.log('(without --expose-gc a round pays for the garbage of the one before)');
  const cpu = new Map<string, { cpuUs: number; perSecond: number }[]>(sizings.map(([n]) => [n, []]));
  for (const [, sizing] of sizings) applyRound(sizing(), events); // warm-up, each path compiled
  for (let r = 0; r < rounds * 2; r++) for (const [name, sizing] of sizings) cpu.get(name)!.push(applyRound(sizing(), events));
  console.log(`\nWatchCache.apply, ${events} events on 500 keys (median of ${rounds * 2})`);
  for (const [name] of sizings) {
    const runs = cpu.get(name)!;
    console.log(
      `${name.padEnd(14)}${median(runs.map((x) => x.cpuUs)).toFixed(3)} CPU us/event   ${Math.round(median(runs.map((x) => x.perSecond)))} events/s`,
    );
  }
}

await main();
