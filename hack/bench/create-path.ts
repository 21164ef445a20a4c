// node dist/hack/bench/create-path.js [--backends etcd3,sqlite] [--creates N] [--rounds R]
//                                     [--baseline <other dist dir>] [--profile <dir>]
//
// What a create costs the server below HTTP: the real server assembly (the same
// ServerOptions, buildServerConfig and startServer as cmd/apiserver, so the watch
// cache, the write-order watch, encryption config, managedFields and admission all
// run) in a forked child, creating ~1 KiB Users through the registry's create (the
// handler's call, without the HTTP and TLS that are the same on both sides of an A/B)
// at 1 and at 64 concurrent callers. Reports creates/s, p50 and the child's CPU µs
// per create (`process.cpuUsage()` over the timed window: far steadier than
// throughput on a shared machine), and a raw etcd put of the same value size at the
// same concurrency as the reference (the harness's etcd-put job).
//
// A/B: `--baseline /tmp/x/dist` runs the same children against the server code of
// another build (e.g. `git worktree add /tmp/x main && cd /tmp/x && ln -s
// $PWD/node_modules . && npx tsc -p tsconfig.build.json`): the child imports the
// server modules from the dist directory it is given, so both variants run the same
// driver. Rounds alternate A, B, then B, A, and the median round counts.
// `--profile <dir>` writes a .cpuprofile of each child's 64-caller window.
// `--micro` instead times, in this process, the steps of a create this topic changed
// (storage's encode and returned object, the copy of the body, the creation
// timestamp, the managedFields) and, for their size, the watch event's decode and the
// response's JSON,
// each as every build does it, alternating builds: what one such change moves is
// below the noise of whole-server windows on a shared machine.

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { startEtcd } from '../etcd.js';
import { SERVER_NODE_FLAGS } from '../../pkg/server/node-flags.js';
import type * as ServerModule from '../../pkg/server/index.js';
import type * as OptionsModule from '../../pkg/apiserver/options/index.js';
import type * as CodecModule from '../../pkg/storage/codec.js';
import type * as WatchCacheModule from '../../pkg/storage/cacher/watch-cache.js';
import type { KeyValue } from '../../pkg/storage/kv.js';
import type * as ObjectModule from '../../pkg/registry/generic/object.js';
import type * as FieldManagerModule from '../../pkg/registry/fieldmanager/field-manager.js';
import type * as UserModule from '../../pkg/apis/management/v1/user.js';
import { GROUP, rawValue, userBody } from './objects.js';
import { profile } from './profiler.js';

const OWN_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Stored size of one bench User with uid, timestamps and managedFields (objects.ts aims at ~1 KiB). */
const VALUE_SIZE = 1024;

interface ChildJob {
  readonly dist: string;
  readonly backend: 'etcd3' | 'sqlite';
  readonly etcd?: string;
  readonly creates: number;
  readonly concurrencies: readonly number[];
  readonly profileFile?: string;
}

interface Window {
  readonly concurrency: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly cpuUsPerOp: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** Runs `count` calls of `op` from `concurrency` callers; latency, throughput and this process's CPU per call. */
async function timed(
  count: number,
  concurrency: number,
  op: (n: number) => Promise<unknown>,
): Promise<Window> {
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const n = next++;
        const s = performance.now();
        await op(n);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    perSecond: count / seconds,
    p50Ms: percentile(latencies, 0.5),
    cpuUsPerOp: (cpu.user + cpu.system) / count,
  };
}

// ---- the child: one server, its creates ------------------------------------------

async function child(job: ChildJob): Promise<Window[]> {
  const server = (await import(
    pathToFileURL(join(job.dist, 'pkg/server/index.js')).href
  )) as typeof ServerModule;
  const options = (await import(
    pathToFileURL(join(job.dist, 'pkg/apiserver/options/index.js')).href
  )) as typeof OptionsModule;
  const dataDir = mkdtempSync(join(tmpdir(), 'create-path-'));
  const args = ['--secure-port', '0', '--data-dir', dataDir, '--storage-backend', job.backend];
  if (job.etcd) args.push('--etcd-servers', job.etcd, '--etcd-prefix', `/bench-create-path-${process.pid}`);
  const flags = options.parseFlags(args);
  const serverOptions = new options.ServerOptions(flags.values, flags.problems);
  const problems = serverOptions.validate();
  if (problems.length > 0) throw new Error(problems.join('; '));
  const config = await server.buildServerConfig(serverOptions);
  const running = await server.startServer(config);
  try {
    const users = config.resources.find((r) => r.info.resource === 'users');
    if (!users?.create) throw new Error('no users resource');
    const create = users.create.bind(users);
    const ctx = { user: { name: 'admin', groups: ['system:masters'] }, namespace: '' };
    const createOptions = { dryRun: false, fieldManager: 'bench', fieldValidation: 'Strict' } as const;
    let serial = 0;
    const op = (): Promise<unknown> =>
      create({ ...ctx, warnings: [] }, userBody(`u${serial++}`), createOptions);
    // Warm: the users cache starts, the JIT sees the path.
    await timed(300, 8, op);
    const windows: Window[] = [];
    for (const concurrency of job.concurrencies) {
      const profiled = job.profileFile !== undefined && concurrency === Math.max(...job.concurrencies);
      if (profiled) await profile({ start: true });
      windows.push(await timed(job.creates, concurrency, op));
      if (profiled) await profile({ stop: job.profileFile as string });
    }
    return windows;
  } finally {
    await running.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function runChild(job: ChildJob): Promise<Window[]> {
  return new Promise((resolvePromise, reject) => {
    // The child runs the server in process: with the server's node flags.
    const proc = fork(fileURLToPath(import.meta.url), ['--child'], {
      execArgv: [...SERVER_NODE_FLAGS],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    proc.once('message', (msg: { result?: Window[]; error?: string }) => {
      proc.disconnect();
      if (msg.error !== undefined) reject(new Error(msg.error));
      else resolvePromise(msg.result ?? []);
    });
    proc.once('exit', (code) => reject(new Error(`child exited (${code ?? 'signal'})`)));
    proc.send(job);
  });
}

// ---- the reference: raw etcd puts of the same size --------------------------------

async function rawPuts(endpoint: string, count: number, concurrencies: readonly number[]): Promise<Window[]> {
  const client = new Etcd3({ hosts: endpoint });
  const value = rawValue(VALUE_SIZE);
  try {
    await timed(300, 8, async (n) => {
      await client.put(`/bench/put/warm/${n}`).value(value);
    });
    const windows: Window[] = [];
    for (const c of concurrencies) {
      windows.push(
        await timed(count, c, async (n) => {
          await client.put(`/bench/put/${process.pid}/${c}/${n}`).value(value);
        }),
      );
    }
    await client.delete().prefix('/bench/put/');
    return windows;
  } finally {
    client.close();
  }
}

// ---- single steps, in process ----------------------------------------------------------

type Codec = typeof CodecModule;

/** A User as the registry hands it to storage: uid, timestamps and one managedFields entry. */
function storedUser(n: number): Parameters<Codec['encodeObject']>[0] {
  const body = userBody(`u${n}`) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  return {
    ...body,
    metadata: {
      ...body.metadata,
      uid: `6c1b7f0e-0000-4000-8000-${String(n).padStart(12, '0')}`,
      creationTimestamp: '2026-11-25T23:00:00Z',
      generation: 1,
      managedFields: [
        {
          manager: 'bench',
          operation: 'Update',
          apiVersion: 'management.platform.dev/v1',
          time: '2026-11-25T23:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:bench.platform.dev/set': {} } },
            'f:spec': { '.': {}, 'f:description': {}, 'f:displayName': {}, 'f:email': {}, 'f:username': {} },
          },
        },
      ],
    },
  } as Parameters<Codec['encodeObject']>[0];
}

type Stored = ReturnType<typeof storedUser>;
/** One step of a create, as one build does it: `run(o)` does it once for `o`. */
type Step = (o: Stored) => unknown;
type Probe = (dist: string) => Promise<Step>;

const load = async <T>(dist: string, module: string): Promise<T> =>
  (await import(pathToFileURL(join(dist, module)).href)) as T;

/** The steps of a create that this topic changed, each as any build does it (older builds lack the newer exports). */
const PROBES: Record<string, Probe> = {
  'encode + returned object': async (dist) => {
    const codec = await load<Codec>(dist, 'pkg/storage/codec.js');
    let rev = 1;
    return codec.encodeWithObject
      ? (o) => codec.writtenObject('/k', codec.encodeWithObject(o), rev++)
      : (o) => codec.decodeObject('/k', codec.encodeObject(o), rev++);
  },
  'clone of the body': async (dist) => {
    const object = await load<typeof ObjectModule>(dist, 'pkg/registry/generic/object.js');
    return (o) => object.clone(o);
  },
  'creation timestamp': async (dist) => {
    const object = await load<typeof ObjectModule>(dist, 'pkg/registry/generic/object.js');
    return () => object.nowTimestamp(new Date());
  },
  // Sizes only (no build changed them): what a create's watch event costs the cache when
  // its object is decoded from the event's bytes, and the response body's JSON.
  'watch event decode': async (dist) => {
    const codec = await load<Codec>(dist, 'pkg/storage/codec.js');
    const cache = await load<typeof WatchCacheModule>(dist, 'pkg/storage/cacher/watch-cache.js');
    const bytes = new Map<Stored, Buffer>();
    let rev = 1;
    return (o) => {
      let value = bytes.get(o);
      if (value === undefined) bytes.set(o, (value = codec.encodeObject(o)));
      const kv: KeyValue = { key: '/k', value, createRevision: rev, modRevision: rev++ };
      return cache.deepFreeze(codec.decodeKeyValue(kv));
    };
  },
  'response JSON': async () => (o) => Buffer.from(JSON.stringify(o)),
  managedFields: async (dist) => {
    const fm = await load<typeof FieldManagerModule>(dist, 'pkg/registry/fieldmanager/field-manager.js');
    const user = await load<typeof UserModule>(dist, 'pkg/apis/management/v1/user.js');
    const manager = new fm.FieldManager({
      schema: user.userSchema(),
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
    });
    const empty = { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: {} };
    return (o) =>
      manager.updateNoErrors(empty, { ...o, metadata: { ...o.metadata, managedFields: undefined } }, 'bench');
  },
};

/** µs of CPU per call of `step` over `objects`, `repeat` times each. */
function stepCost(step: Step, objects: readonly Stored[], repeat: number): number {
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < repeat; r++) for (const o of objects) step(o);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (repeat * objects.length);
}

async function micro(variants: readonly [string, string][], rounds: number): Promise<void> {
  const objects = Array.from({ length: 1000 }, (_, i) => storedUser(i));
  const codec = await load<Codec>(OWN_DIST, 'pkg/storage/codec.js');
  console.log(`stored size ${codec.encodeObject(objects[0] as Stored).length} bytes`);
  console.log(`CPU µs per create for each step, median of ${rounds} rounds alternating the builds`);
  console.log(`${'step'.padEnd(26)} ${variants.map(([name]) => name.padStart(16)).join(' ')}`);
  for (const [label, probe] of Object.entries(PROBES)) {
    const steps = await Promise.all(variants.map(([, dist]) => probe(dist)));
    const samples = steps.map((): number[] => []);
    for (const step of steps) stepCost(step, objects, 3);
    for (let round = 0; round < rounds; round++) {
      steps.forEach((step, i) => samples[i]?.push(stepCost(step, objects, 10)));
    }
    console.log(`${label.padEnd(26)} ${samples.map((x) => median(x).toFixed(1).padStart(16)).join(' ')}`);
  }
}

// ---- the parent ------------------------------------------------------------------

function median(xs: readonly number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      backends: { type: 'string', default: 'etcd3,sqlite' },
      creates: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '3' },
      baseline: { type: 'string' },
      profile: { type: 'string' },
      child: { type: 'boolean', default: false },
      micro: { type: 'boolean', default: false },
    },
  });
  const backends = values.backends.split(',') as ('etcd3' | 'sqlite')[];
  const creates = Number(values.creates);
  const rounds = Number(values.rounds);
  const concurrencies = [1, 64];
  const variants: [string, string][] = values.baseline
    ? [
        ['A (baseline)', resolve(values.baseline)],
        ['B (this build)', OWN_DIST],
      ]
    : [['this build', OWN_DIST]];
  if (values.micro) return micro(variants, Math.max(rounds, 9));
  const etcd = backends.includes('etcd3') ? await startEtcd() : undefined;
  const results = new Map<string, Window[][]>();
  const note = (label: string, w: Window[]): void => {
    const list = results.get(label) ?? [];
    list.push(w);
    results.set(label, list);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      if (etcd) note('raw etcd put', await rawPuts(etcd.endpoint, creates, concurrencies));
      for (const backend of backends) {
        // A, B in even rounds and B, A in odd ones: the one measured second in a round
        // (a warmer etcd, a fuller store) is not always the same build.
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const [name, dist] of order) {
          const label = `${name}, ${backend}`;
          const profileFile = values.profile
            ? join(values.profile, `create-${backend}-${name.split(' ')[0] ?? 'x'}-r${round}.cpuprofile`)
            : undefined;
          const job: ChildJob = {
            dist,
            backend,
            creates,
            concurrencies,
            ...(etcd && backend === 'etcd3' ? { etcd: etcd.endpoint } : {}),
            ...(profileFile ? { profileFile } : {}),
          };
          note(label, await runChild(job));
          process.stderr.write(`round ${round + 1}/${rounds}: ${label} done\n`);
        }
      }
    }
  } finally {
    await etcd?.stop();
  }
  console.log(
    `Creates of ~1 KiB Users through the registry (no HTTP), ${creates} per window, median of ${rounds} rounds`,
  );
  console.log('variant                       callers  creates/s   p50 ms   CPU µs/create');
  for (const [label, runs] of results) {
    concurrencies.forEach((c, i) => {
      const at = runs.map((r) => r[i]).filter((w): w is Window => w !== undefined);
      const rate = median(at.map((w) => w.perSecond));
      const p50 = median(at.map((w) => w.p50Ms));
      const cpu = median(at.map((w) => w.cpuUsPerOp));
      console.log(
        `${label.padEnd(30)} ${String(c).padStart(6)} ${rate.toFixed(0).padStart(10)} ${p50.toFixed(2).padStart(8)} ${cpu.toFixed(0).padStart(15)}`,
      );
    });
  }
  console.log("(raw etcd put: CPU is the client's, not a server's)");
}

if (process.argv.includes('--child')) {
  process.once('message', (job: ChildJob) => {
    child(job).then(
      (result) => process.send?.({ result }, () => process.exit(0)),
      (err: unknown) =>
        process.send?.({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () =>
          process.exit(1),
        ),
    );
  });
} else {
  await main();
}
