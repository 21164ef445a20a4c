// node dist/hack/bench/etcd-client.js [--seconds S] [--rounds R] [--events N] [--profile DIR]
//
// What the etcd client costs per call (issue 17,
// docs/performance/etcd-client.md): the `etcd3` package, configured and called as
// pkg/storage/etcd3 used it until the lean client replaced it (one attempt per
// call, a deadline per request, responses converted to the KV contract's
// KeyValues), against the lean client (pkg/storage/etcd3/grpc-client.ts and
// codecs.ts) through Etcd3KV, for the three calls the server makes: its unary calls
// (Range, Txn) written directly on node:http2 (http2-unary.ts), its watches on
// grpc-js. The package sends its unary calls through grpc-js too, so this is also
// the A/B of docs/performance/unary-calls-on-node-http2.md. (The lean client's
// own switch to send its unary calls through grpc-js, which that section's table
// measured, was removed from the server's code: only this script used it.)
//
// - create: a conditional Txn (create_revision == 0 → put, else range), 1 KiB value;
// - get: a Range of one key (what a consistent read's revision read and a get cost);
// - watch: replaying N stored creates to one watch with prev_kv, as the watch
//   cache's watches receive every created object (CPU per event delivered).
//
// Against a real etcd on loopback (hack/etcd.ts), 1 and 64 concurrent callers, in
// one process, rounds alternating the two clients so a noisy neighbour slows both
// alike; medians of the rounds. CPU µs per call (process.cpuUsage over the timed
// window: this process only, not etcd's) is the figure to trust on a busy machine;
// calls per second move with the load of the machine.
//
// --profile DIR writes one .cpuprofile per client (one 64-caller create window each).

import { Session } from 'node:inspector/promises';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import type { IKeyValue, IOptions } from 'etcd3';
import { startEtcd } from '../etcd.js';
import type { KeyValue } from '../../pkg/storage/kv.js';
import { Etcd3KV } from '../../pkg/storage/etcd3/etcd3-kv.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    events: { type: 'string', default: '2000' },
    profile: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const EVENTS = Number(values.events);
const CALLERS = [1, 64] as const;
const VALUE = Buffer.from(JSON.stringify({ spec: { data: 'x'.repeat(1000) } }));
const WATCHED = '/bench/watched/';

/** The calls under test, as each client makes them. */
interface Side {
  readonly name: string;
  create(key: string): Promise<unknown>;
  get(key: string): Promise<unknown>;
  /** Resolves once `count` events from `fromRevision` under WATCHED were delivered. */
  replay(fromRevision: number, count: number): Promise<void>;
  close(): Promise<void>;
}

// ---- the etcd3 package, as pkg/storage/etcd3/etcd3-kv.ts used it ----

const NEVER_ABORTED = new AbortController().signal;
type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
const SINGLE_ATTEMPT = {
  execute: <T>(fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve().then(() => fn({ signal: NEVER_ABORTED, attempt: 0 })),
} as unknown as GlobalPolicy;

function fromPackage(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value ?? Buffer.alloc(0),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

function packageSide(endpoint: string): Side {
  const client = new Etcd3({
    hosts: [endpoint],
    faultHandling: { global: SINGLE_ATTEMPT },
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + 60_000 }),
    grpcOptions: {
      'grpc.max_receive_message_length': -1,
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
    },
  });
  return {
    name: 'etcd3 package',
    async create(key) {
      const k = Buffer.from(key);
      const res = await client.kv.txn({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value: VALUE } }],
        failure: [{ request_range: { key: k } }],
      });
      const current = res.responses[0]?.response_range?.kvs[0];
      return {
        ok: res.succeeded,
        revision: Number(res.header.revision),
        current: current && fromPackage(current),
      };
    },
    async get(key) {
      const res = await client.kv.range({ key: Buffer.from(key) });
      const first = res.kvs[0];
      return { kv: first ? fromPackage(first) : undefined, revision: Number(res.header.revision) };
    },
    async replay(fromRevision, count) {
      const stream = await client.watchClient.watch();
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        stream.on('data', (res) => {
          for (const ev of res.events) {
            const event = {
              type: ev.type,
              kv: fromPackage(ev.kv),
              prevKv: ev.prev_kv ? fromPackage(ev.prev_kv) : undefined,
            };
            if (event.kv.modRevision > 0) seen++;
          }
          if (seen >= count) resolve();
        });
        stream.on('error', reject);
        stream.write({
          create_request: {
            key: Buffer.from(WATCHED),
            range_end: Buffer.from(WATCHED.slice(0, -1) + '0'),
            start_revision: fromRevision,
            prev_kv: true,
            progress_notify: true,
          },
        });
      });
      stream.on('error', () => undefined);
      stream.end();
      stream.cancel();
    },
    async close() {
      client.close();
    },
  };
}

// ---- the lean client, through the KV the server uses ----

async function leanSide(endpoint: string): Promise<Side> {
  const kv = await Etcd3KV.connect({ endpoints: [endpoint] });
  return {
    name: 'lean, h2 unary',
    create: (key) => kv.create(key, VALUE),
    get: (key) => kv.get(key),
    replay: (fromRevision, count) =>
      new Promise<void>((resolve, reject) => {
        let seen = 0;
        const watch = kv.watch(WATCHED, fromRevision, {
          onEvents(events) {
            seen += events.length;
            if (seen >= count) {
              watch.cancel();
              resolve();
            }
          },
          onError: reject,
        });
      }),
    close: () => kv.close(),
  };
}

// ---- measuring ----

interface Figure {
  readonly perSecond: number;
  readonly cpuMicros: number;
}

async function timed(
  callers: number,
  seconds: number,
  call: (i: number) => Promise<unknown>,
): Promise<Figure> {
  let calls = 0;
  const end = Date.now() + seconds * 1000;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < end) await call(calls++);
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { perSecond: calls / elapsed, cpuMicros: (used.user + used.system) / calls };
}

async function timedReplay(side: Side, fromRevision: number): Promise<Figure> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await side.replay(fromRevision, EVENTS);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { perSecond: EVENTS / elapsed, cpuMicros: (used.user + used.system) / EVENTS };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function profiled<T>(dir: string | undefined, name: string, work: () => Promise<T>): Promise<T> {
  if (dir === undefined) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name.replace(/\W+/g, '-')}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

// etcd's data on tmpfs where there is one: fsync then costs nothing, so etcd answers
// as fast as it can and the client's CPU, not the disk, is what the windows measure.
const shm = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/etcd-client-bench-') : undefined;
const etcd = await startEtcd(shm !== undefined ? { dataDir: shm } : {});
try {
  const sides = [packageSide(etcd.endpoint), await leanSide(etcd.endpoint)];
  // The watched history: EVENTS creates, written once, replayed by every round.
  const writer = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
  const fromRevision = (await writer.currentRevision()) + 1;
  for (let i = 0; i < EVENTS; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, EVENTS - i) }, (_, j) => writer.create(`${WATCHED}${i + j}`, VALUE)),
    );
  }
  await writer.create('/bench/get', VALUE);
  await writer.close();

  const results = new Map<string, Figure[]>();
  const record = (row: string, figure: Figure): void => {
    const list = results.get(row) ?? [];
    list.push(figure);
    results.set(row, list);
  };
  for (const side of sides) {
    // Warm up the connection and the JIT.
    await timed(8, 0.5, (i) => side.create(`/bench/warm/${side.name}/${i}`));
    await timed(8, 0.5, () => side.get('/bench/get'));
  }
  for (const side of sides) {
    await profiled(values.profile, side.name, () =>
      timed(64, SECONDS, (i) => side.create(`/bench/profile/${side.name}/${i}`)),
    );
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      for (const callers of CALLERS) {
        record(
          `${side.name}|create|${callers}`,
          await timed(callers, SECONDS, (i) => side.create(`/bench/${side.name}/${round}/${callers}/${i}`)),
        );
        record(`${side.name}|get|${callers}`, await timed(callers, SECONDS, () => side.get('/bench/get')));
      }
      record(`${side.name}|watch event|1`, await timedReplay(side, fromRevision));
    }
  }
  for (const side of sides) await side.close();

  console.log(
    `etcd client per call, loopback etcd, ${SECONDS} s windows, median of ${ROUNDS} rounds (alternating)`,
  );
  console.log(
    'call          callers  client          calls/s   CPU µs/call   vs first row CPU  rounds (CPU µs/call)',
  );
  for (const call of ['create', 'get', 'watch event']) {
    for (const callers of call === 'watch event' ? [1] : CALLERS) {
      const cpuOf: number[] = [];
      for (const side of sides) {
        const figures = results.get(`${side.name}|${call}|${callers}`) ?? [];
        const cpu = median(figures.map((f) => f.cpuMicros));
        cpuOf.push(cpu);
        const ratio = cpuOf.length > 1 ? `${(cpu / (cpuOf[0] as number)).toFixed(2)}x` : '';
        console.log(
          `${call.padEnd(13)} ${String(callers).padStart(7)}  ${side.name.padEnd(14)} ${median(
            figures.map((f) => f.perSecond),
          )
            .toFixed(0)
            .padStart(8)}   ${cpu.toFixed(1).padStart(11)}   ${ratio.padEnd(16)}   ${figures
            .map((f) => f.cpuMicros.toFixed(0))
            .join(', ')}`,
        );
      }
    }
  }
} finally {
  await etcd.stop();
  if (shm !== undefined) rmSync(shm, { recursive: true, force: true });
}
