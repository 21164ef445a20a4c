// node dist/hack/bench/revision-batching.js [--clients N] [--seconds S] [--rounds R]
//
// What sharing revision reads saves (issue 17): consistent gets by name through the
// watch cache over a real etcd (started on loopback), `--clients` at once, with the
// revision reads batched (pkg/storage/revision-batcher.ts, the server's default),
// with one revision read per get, and batched with an AbortSignal.timeout per get for
// its deadline (how the cache waited before; each get runs under a 60 s request
// deadline, as the server runs them). In process, without HTTP: the figure is what the
// storage layer allows, the same for both sides, and a request through the server
// adds the same fixed HTTP cost to both. Reports gets per second, the revision reads
// etcd served per get (each is one etcd Range) and this process's CPU per get.
// Rounds alternate the two so a noisy neighbour slows them alike; the median counts.

import { parseArgs } from 'node:util';
import { startEtcd } from '../etcd.js';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import { CachedStorage, prefixAtDepth } from '../../pkg/storage/cacher/index.js';
import { Etcd3KV } from '../../pkg/storage/etcd3/etcd3-kv.js';
import { RevisionBatcher, type RevisionReader } from '../../pkg/storage/revision-batcher.js';
import { StorageDeadline } from '../../pkg/storage/deadline.js';
import { KVStorage } from '../../pkg/storage/store.js';

const DIR = '/registry/management.platform.dev/users/';
const KEY = `${DIR}bench`;

const VARIANTS: Record<string, ((read: () => Promise<number>) => RevisionReader) | undefined> = {
  batched: undefined,
  'one per get': (read) => ({ current: () => read() }),
  // Batched, but each reader's deadline an AbortSignal.timeout of its own with an abort
  // listener, as before the batcher took deadlines as times
  // (docs/performance/get-on-etcd3.md); the batcher no longer takes a signal, so the wait
  // is raced against it here.
  'signal per get': (read) => {
    const batcher = new RevisionBatcher(read);
    return {
      current: (deadlineAt) => {
        if (deadlineAt === undefined) return batcher.current();
        const signal = AbortSignal.timeout(deadlineAt - Date.now());
        return new Promise<number>((resolve, reject) => {
          const onAbort = (): void => reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
          batcher.current().then(
            (revision) => {
              signal.removeEventListener('abort', onAbort);
              resolve(revision);
            },
            (err: unknown) => {
              signal.removeEventListener('abort', onAbort);
              reject(err);
            },
          );
        });
      },
    };
  },
};

interface Figures {
  readonly getsPerSecond: number;
  readonly revisionReadsPerGet: number;
  readonly cpuMicrosPerGet: number;
}

function user(): KubeObject {
  return {
    apiVersion: 'management.platform.dev/v1',
    kind: 'User',
    metadata: { name: 'bench', uid: 'uid-bench', creationTimestamp: new Date().toISOString() },
    spec: { username: 'bench', email: 'bench@example.com', displayName: 'Bench', groups: ['a', 'b'] },
  };
}

async function measure(
  endpoint: string,
  variant: string,
  clients: number,
  seconds: number,
): Promise<Figures> {
  const kv = await Etcd3KV.connect({ endpoints: [endpoint] });
  let revisionReads = 0;
  const currentRevision = kv.currentRevision.bind(kv);
  kv.currentRevision = () => {
    revisionReads++;
    return currentRevision();
  };
  const reader = VARIANTS[variant];
  const storage = new CachedStorage({
    storage: new KVStorage(kv),
    kv,
    resourcePrefix: prefixAtDepth('/registry', 2),
    ...(reader ? { revisionReader: reader } : {}),
  });
  try {
    await storage.warm([DIR]);
    // Warm up the connection and the JIT, then count from zero.
    for (let i = 0; i < 200; i++) await storage.get(KEY);
    revisionReads = 0;
    let gets = 0;
    const end = Date.now() + seconds * 1000;
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < end) {
          // Under a request's deadline, as the server runs every etcd3 request.
          await storage.get(KEY, undefined, new StorageDeadline(Date.now() + 60_000));
          gets++;
        }
      }),
    );
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpu);
    return {
      getsPerSecond: gets / elapsed,
      revisionReadsPerGet: revisionReads / gets,
      cpuMicrosPerGet: (used.user + used.system) / gets,
    };
  } finally {
    await storage.close();
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const etcd = await startEtcd();
try {
  const kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  await new KVStorage(kv).create(KEY, user());
  await kv.close();
  const results: Record<string, Figures[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const variant of Object.keys(VARIANTS)) {
      (results[variant] ??= []).push(await measure(etcd.endpoint, variant, clients, seconds));
    }
  }
  console.log(
    `consistent get by name through the watch cache over etcd, ${clients} clients, ${seconds} s, median of ${rounds} rounds`,
  );
  console.log('revision reads   gets/s  revision reads per get  CPU µs per get   rounds (gets/s)');
  const base = median((results['one per get'] ?? []).map((f) => f.getsPerSecond));
  for (const [variant, figures] of Object.entries(results)) {
    const gets = median(figures.map((f) => f.getsPerSecond));
    const each = figures.map((f) => f.getsPerSecond.toFixed(0)).join(', ');
    console.log(
      `${variant.padEnd(14)} ${gets.toFixed(0).padStart(8)}  ${median(
        figures.map((f) => f.revisionReadsPerGet),
      )
        .toFixed(3)
        .padStart(22)}  ${median(figures.map((f) => f.cpuMicrosPerGet))
        .toFixed(0)
        .padStart(14)}   ${each}  (${(gets / base).toFixed(2)}x)`,
    );
  }
} finally {
  await etcd.stop();
}
