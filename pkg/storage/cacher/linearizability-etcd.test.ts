// Consistent reads through the watch cache are linearizable across replicas: two
// KVStorage + watch cache stacks on one real etcd, writers on one, consistent gets
// and lists on the other, random operations at random moments for a few seconds.
// Every operation's invocation and answer are stamped on one logical clock (one
// process: the order in which this event loop saw them), and the history is checked
// by pkg/storage/testing/linearizability.ts: every read saw every write acknowledged
// before it began, nothing not yet written, and never went back in time.
//
// What this guards: a read must wait for a storage revision read that began after
// it arrived (revision-batcher.ts). Handing a late reader the answer of a revision
// read already in flight lets it miss a write acknowledged just before it began.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd } from '../../../hack/etcd.js';
import type { EtcdInstance } from '../../../hack/etcd.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { Etcd3KV } from '../etcd3/etcd3-kv.js';
import { StorageError } from '../errors.js';
import { KVStorage } from '../store.js';
import { widget } from '../testing/index.js';
import { LinearizabilityChecker, type ReadRecord, type WriteRecord } from '../testing/linearizability.js';
import { CachedStorage, prefixAtDepth } from './index.js';

const DURATION_MS = 3000;
const WRITERS = 3;
const READERS = 8;
const DIR = '/registry/linearizable/widgets/';
const KEYS = ['a', 'b', 'c', 'd'].map((name) => `${DIR}${name}`);
/**
 * The reading replica hears etcd's answers and watch events this much later than
 * etcd sends them (in order), as a replica across a slow network does. On loopback a
 * revision read nearly always reaches its replica before a later write's
 * acknowledgement reaches the writer, which would hide a stale revision read.
 */
const READER_LAG_MS = 20;

let etcd: EtcdInstance | undefined;

before(async () => {
  etcd = await startEtcd();
});

after(async () => {
  await etcd?.stop();
});

/** A small seeded PRNG (mulberry32): the operations' mix is reproducible from the seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Delays `kv`'s revision reads' answers and its watches' callbacks by `lagMs`, keeping their order (one timer list). */
function lag(kv: Etcd3KV, lagMs: number): void {
  const later =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      setTimeout(() => fn(...args), lagMs);
    };
  const currentRevision = kv.currentRevision.bind(kv);
  kv.currentRevision = () =>
    new Promise<number>((resolve, reject) => currentRevision().then(later(resolve), later(reject)));
  const watch = kv.watch.bind(kv);
  kv.watch = (prefix, from, handlers) =>
    watch(prefix, from, {
      ...handlers,
      onEvents: later((events) => handlers.onEvents(events)),
      onError: later((err) => handlers.onError(err)),
      ...(handlers.onProgress ? { onProgress: later((rev: number) => handlers.onProgress?.(rev)) } : {}),
    });
}

async function replica(lagMs = 0): Promise<{ storage: CachedStorage; revisionReads: () => number }> {
  if (!etcd) throw new Error('etcd did not start');
  const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  if (lagMs > 0) lag(kv, lagMs);
  let revisionReads = 0;
  const currentRevision = kv.currentRevision.bind(kv);
  kv.currentRevision = () => {
    revisionReads++;
    return currentRevision();
  };
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
  });
  return { storage, revisionReads: () => revisionReads };
}

const rv = (obj: KubeObject): number => Number(obj.metadata?.resourceVersion);

/** A definite "nothing was written" (the key existed, or did not). */
const refused = (err: unknown): boolean =>
  err instanceof StorageError && (err.code === 'KeyExists' || err.code === 'KeyNotFound');

describe('watch cache over etcd3, linearizability', () => {
  it('consistent gets and lists on one replica see exactly the writes a history allows, under writes on another', async (t) => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const random = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    let clock = 0;
    const tick = (): number => ++clock;
    const writes: WriteRecord[] = [];
    const reads: ReadRecord[] = [];
    const writer = await replica();
    const reader = await replica(READER_LAG_MS);
    try {
      await writer.storage.warm([DIR]);
      await reader.storage.warm([DIR]);
      const revisionReadsBefore = reader.revisionReads();
      const end = Date.now() + DURATION_MS;
      let n = 0;

      const get = async (key: string): Promise<void> => {
        const invokedAt = tick();
        const obj = await reader.storage.get(key, { ignoreNotFound: true });
        const answeredAt = tick();
        reads.push({ scope: { key }, observed: new Map(obj ? [[key, rv(obj)]] : []), invokedAt, answeredAt });
      };

      const list = async (): Promise<void> => {
        const invokedAt = tick();
        const result = await reader.storage.getList(DIR);
        const answeredAt = tick();
        reads.push({
          scope: { prefix: DIR },
          observed: new Map(result.items.map((item) => [`${DIR}${item.metadata?.name ?? ''}`, rv(item)])),
          listRevision: Number(result.resourceVersion),
          invokedAt,
          answeredAt,
        });
      };

      const write = async (): Promise<void> => {
        const key = pick(KEYS);
        const op = random();
        const name = key.slice(DIR.length);
        const invokedAt = tick();
        try {
          let obj: KubeObject;
          let deleted = false;
          if (op < 0.3) obj = await writer.storage.create(key, widget(name, { spec: { n: ++n } }));
          else if (op < 0.8) {
            const value = ++n;
            obj = await writer.storage.guaranteedUpdate(
              key,
              (current) => ({ ...current, spec: { n: value } }) as KubeObject,
            );
          } else {
            obj = await writer.storage.delete(key);
            deleted = true;
          }
          writes.push({ key, revision: rv(obj), deleted, invokedAt, answeredAt: tick() });
        } catch (err) {
          if (!refused(err)) throw err;
        }
        // Half the time the writer then reads its write back through the other replica
        // at once: the read that a stale revision read would get wrong.
        if (random() < 0.5) await get(key);
      };

      const read = (): Promise<void> => (random() < 0.7 ? get(pick(KEYS)) : list());

      // Readers pause at random between reads, so they arrive at any moment of a
      // revision read in flight, not all just as one ends.
      const loop = async (step: () => Promise<void>, pauseMs: number): Promise<void> => {
        while (Date.now() < end) {
          await step();
          if (pauseMs > 0) await new Promise((r) => setTimeout(r, random() * pauseMs));
        }
      };
      await Promise.all([
        ...Array.from({ length: WRITERS }, () => loop(write, 0)),
        ...Array.from({ length: READERS }, () => loop(read, 2 * READER_LAG_MS)),
      ]);

      const revisionReads = reader.revisionReads() - revisionReadsBefore;
      t.diagnostic(
        `seed ${seed}: ${writes.length} writes, ${reads.length} reads, ${revisionReads} revision reads`,
      );
      const problems = new LinearizabilityChecker(writes).check(reads);
      assert.deepEqual(problems, [], `not linearizable (seed ${seed}):\n${problems.join('\n')}`);
      // The history must have had something to check, and the reads must have come
      // from the cache with shared revision reads (not one each, nor from etcd directly).
      assert.ok(writes.length >= 20, `only ${writes.length} writes`);
      assert.ok(reads.length >= 50, `only ${reads.length} reads`);
      assert.ok(
        revisionReads < reads.length,
        `${revisionReads} revision reads for ${reads.length} consistent reads: none shared`,
      );
    } finally {
      await writer.storage.close();
      await reader.storage.close();
    }
  });
});
