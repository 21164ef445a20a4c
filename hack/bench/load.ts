// The load generator: a separate process (forked by the harness) that drives one
// job at a time and answers with its measurements. HTTP goes over undici pools of
// keep-alive HTTPS connections carrying a bearer access key, as a real client's
// would; raw baselines talk to etcd with the etcd3 client or to the bare servers.

import { performance } from 'node:perf_hooks';
import { Etcd3 } from 'etcd3';
import { Pool } from 'undici';
import { Latencies, type LatencySummary } from './histogram.js';
import {
  API_PATH,
  SECRETS_NAMESPACE,
  accessKeyBody,
  rawValue,
  sharedSecretBody,
  userBody,
} from './objects.js';

export interface HttpTarget {
  /** https://127.0.0.1:port */
  readonly origin: string;
  readonly token?: string;
}

export interface Timing {
  readonly warmupMs: number;
  readonly durationMs: number;
}

export type Job =
  | ({ kind: 'create-users'; target: HttpTarget; namePrefix: string; concurrency: number } & Timing)
  | ({ kind: 'create-secrets'; target: HttpTarget; namePrefix: string; concurrency: number } & Timing)
  | ({
      kind: 'create-access-keys';
      target: HttpTarget;
      /** The User whose keys they are: the target's own, for a plain user's creates. */
      user: string;
      namePrefix: string;
      concurrency: number;
    } & Timing)
  | {
      kind: 'create-users-count';
      target: HttpTarget;
      namePrefix: string;
      concurrency: number;
      count: number;
      start?: number;
    }
  | ({ kind: 'get'; target: HttpTarget; paths: string[]; concurrency: number } & Timing)
  | { kind: 'list'; target: HttpTarget; path: string; warmup: number; iterations: number }
  | ({ kind: 'etcd-put'; endpoint: string; valueSize: number; concurrency: number } & Timing)
  | { kind: 'etcd-range-parse'; endpoint: string; prefix: string; warmup: number; iterations: number }
  /** Copies every key under `prefix` (its latest value) from one etcd into another. */
  | { kind: 'etcd-copy'; from: string; to: string; prefix: string }
  | {
      kind: 'watch-fanout';
      target: HttpTarget;
      watchers: number;
      /** 0: saturation, each write sent as soon as the last was answered. */
      writesPerSecond: number;
      durationMs: number;
      namePrefix: string;
    }
  | { kind: 'etcd-watch'; endpoint: string; writesPerSecond: number; durationMs: number; valueSize: number }
  | { kind: 'open-idle-watches'; target: HttpTarget; count: number; path: string }
  | { kind: 'close-idle-watches' }
  | { kind: 'request'; target: HttpTarget; method: 'GET' | 'POST' | 'PUT'; path: string; body?: unknown };

export interface LoadResult {
  /** Operations measured (after warm-up). */
  readonly operations: number;
  /**
   * Operations completed over the whole job, warm-up included, where the warm-up is the
   * same operation: what a process's CPU over the job is divided by for CPU per operation
   * (the CPU is read before and after the job, so it holds the warm-up's work too).
   */
  readonly completed?: number;
  /** Operations per second over the measured period. */
  readonly throughput: number;
  readonly latency: LatencySummary;
  readonly errors: number;
  /** The first error seen, for the report. */
  readonly firstError?: string;
  /** Job-specific facts (e.g. bytes per response). */
  readonly extra?: Record<string, unknown>;
}

const pools = new Map<string, Pool>();

function pool(target: HttpTarget, connections: number): Pool {
  const key = `${target.origin} ${connections}`;
  let p = pools.get(key);
  if (!p) {
    p = new Pool(target.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 120_000,
      keepAliveMaxTimeout: 600_000,
      bodyTimeout: 0,
      headersTimeout: 120_000,
      // A thousand TLS handshakes at once on two cores can take longer than undici's 10 s.
      connect: { rejectUnauthorized: false, timeout: 120_000 },
    });
    pools.set(key, p);
  }
  return p;
}

function headers(target: HttpTarget, json = false): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (target.token) h['authorization'] = `Bearer ${target.token}`;
  if (json) h['content-type'] = 'application/json';
  return h;
}

class Errors {
  count = 0;
  first: string | undefined;
  note(what: string): void {
    this.count++;
    this.first ??= what;
  }
}

/**
 * Runs `op` from `concurrency` loops: a warm-up (not measured), then the measured
 * period. Each loop starts its next operation when the previous one ends (closed loop).
 */
async function closedLoop(
  concurrency: number,
  timing: Timing,
  op: (n: number) => Promise<void>,
  errors: Errors,
): Promise<{ latency: Latencies; operations: number; completed: number; seconds: number }> {
  const latency = new Latencies();
  let n = 0;
  let completed = 0;
  let measuring = false;
  let operations = 0;
  const warmEnd = performance.now() + timing.warmupMs;
  const end = warmEnd + timing.durationMs;
  let measuredFrom = warmEnd;
  const loop = async (): Promise<void> => {
    while (true) {
      const t0 = performance.now();
      if (t0 >= end) return;
      if (!measuring && t0 >= warmEnd) {
        measuring = true;
        measuredFrom = t0;
      }
      const counted = measuring;
      try {
        await op(n++);
      } catch (err) {
        errors.note(err instanceof Error ? err.message : String(err));
        continue;
      }
      completed++;
      if (counted) {
        latency.recordMs(performance.now() - t0);
        operations++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { latency, operations, completed, seconds: Math.max(0.001, (performance.now() - measuredFrom) / 1000) };
}

async function expectOk(
  res: { statusCode: number; body: { text(): Promise<string> } },
  what: string,
): Promise<string> {
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${what}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  return text;
}

async function createUsers(job: Extract<Job, { kind: 'create-users' }>): Promise<LoadResult> {
  return createObjects(job, `${API_PATH}/users`, userBody);
}

async function createSecrets(job: Extract<Job, { kind: 'create-secrets' }>): Promise<LoadResult> {
  return createObjects(job, `${API_PATH}/namespaces/${SECRETS_NAMESPACE}/sharedsecrets`, sharedSecretBody);
}

async function createAccessKeys(job: Extract<Job, { kind: 'create-access-keys' }>): Promise<LoadResult> {
  return createObjects(job, `${API_PATH}/ownedaccesskeys`, (name) => accessKeyBody(name, job.user));
}

/** Creates `<namePrefix>-<n>` objects at `path` from as many clients as asked, for the job's time. */
async function createObjects(
  job: { target: HttpTarget; namePrefix: string; concurrency: number } & Timing,
  path: string,
  body: (name: string) => Record<string, unknown>,
): Promise<LoadResult> {
  const p = pool(job.target, job.concurrency);
  const errors = new Errors();
  const h = headers(job.target, true);
  const run = await closedLoop(
    job.concurrency,
    job,
    async (n) => {
      const res = await p.request({
        method: 'POST',
        path,
        headers: h,
        body: JSON.stringify(body(`${job.namePrefix}-${n}`)),
      });
      await expectOk(res, 'create');
    },
    errors,
  );
  return result(run, errors);
}

async function createUsersCount(job: Extract<Job, { kind: 'create-users-count' }>): Promise<LoadResult> {
  const p = pool(job.target, job.concurrency);
  const errors = new Errors();
  const path = `${API_PATH}/users`;
  const h = headers(job.target, true);
  const latency = new Latencies();
  let next = job.start ?? 0;
  const last = (job.start ?? 0) + job.count;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < last) {
        const n = next++;
        const s = performance.now();
        try {
          const res = await p.request({
            method: 'POST',
            path,
            headers: h,
            body: JSON.stringify(userBody(`${job.namePrefix}-${n}`)),
          });
          await expectOk(res, 'create');
          latency.recordMs(performance.now() - s);
        } catch (err) {
          errors.note(err instanceof Error ? err.message : String(err));
        }
      }
    }),
  );
  return result({ latency, operations: latency.count, seconds: (performance.now() - t0) / 1000 }, errors);
}

async function get(job: Extract<Job, { kind: 'get' }>): Promise<LoadResult> {
  const p = pool(job.target, job.concurrency);
  const errors = new Errors();
  const h = headers(job.target);
  let bytes = 0;
  const run = await closedLoop(
    job.concurrency,
    job,
    async (n) => {
      const res = await p.request({
        method: 'GET',
        path: job.paths[n % job.paths.length] as string,
        headers: h,
      });
      bytes = (await expectOk(res, 'get')).length;
    },
    errors,
  );
  return result(run, errors, { responseBytes: bytes });
}

async function list(job: Extract<Job, { kind: 'list' }>): Promise<LoadResult> {
  const p = pool(job.target, 1);
  const errors = new Errors();
  const h = headers(job.target);
  const latency = new Latencies();
  let bytes = 0;
  let items = 0;
  let completed = 0;
  const t0 = performance.now();
  for (let i = 0; i < job.warmup + job.iterations; i++) {
    const s = performance.now();
    try {
      const res = await p.request({ method: 'GET', path: job.path, headers: h });
      const text = await expectOk(res, 'list');
      const took = performance.now() - s;
      completed++;
      if (i >= job.warmup) latency.recordMs(took);
      bytes = text.length;
      if (i === 0) items = (JSON.parse(text) as { items?: unknown[] }).items?.length ?? 0;
    } catch (err) {
      errors.note(err instanceof Error ? err.message : String(err));
    }
  }
  return result({ latency, operations: latency.count, completed, seconds: (performance.now() - t0) / 1000 }, errors, {
    responseBytes: bytes,
    items,
  });
}

function etcdClient(endpoint: string, connections = 1): Etcd3 {
  return new Etcd3({
    hosts: Array.from({ length: connections }, () => endpoint),
    // As the server's client: a range of 10 000 ~1 KiB values is over gRPC's 4 MiB default.
    grpcOptions: { 'grpc.max_receive_message_length': -1 },
  });
}

async function etcdPut(job: Extract<Job, { kind: 'etcd-put' }>): Promise<LoadResult> {
  const client = etcdClient(job.endpoint);
  const errors = new Errors();
  const value = rawValue(job.valueSize);
  const run = await closedLoop(
    job.concurrency,
    job,
    async (n) => {
      await client.put(`/bench/put/${process.pid}/${n}`).value(value);
    },
    errors,
  );
  await client.delete().prefix('/bench/put/');
  client.close();
  return result(run, errors);
}

/** A range request for every key under `prefix`. */
function prefixRange(prefix: string): { key: Buffer; range_end: Buffer } {
  return {
    key: Buffer.from(prefix),
    range_end: Buffer.from(
      prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1),
    ),
  };
}

async function etcdRangeParse(job: Extract<Job, { kind: 'etcd-range-parse' }>): Promise<LoadResult> {
  const client = etcdClient(job.endpoint);
  const errors = new Errors();
  const latency = new Latencies();
  let items = 0;
  let completed = 0;
  const t0 = performance.now();
  for (let i = 0; i < job.warmup + job.iterations; i++) {
    const s = performance.now();
    try {
      const res = await client.kv.range(prefixRange(job.prefix));
      const objects = res.kvs.map((kv) => JSON.parse(kv.value.toString('utf8')) as unknown);
      items = objects.length;
      completed++;
      if (i >= job.warmup) latency.recordMs(performance.now() - s);
    } catch (err) {
      errors.note(err instanceof Error ? err.message : String(err));
    }
  }
  client.close();
  return result({ latency, operations: latency.count, completed, seconds: (performance.now() - t0) / 1000 }, errors, {
    items,
  });
}

/**
 * The raw range baseline's data on an etcd of its own (suite.ts): the same keys and
 * value bytes the server stored, put 32 at a time. Not measured.
 */
async function etcdCopy(job: Extract<Job, { kind: 'etcd-copy' }>): Promise<LoadResult> {
  const from = etcdClient(job.from);
  const to = etcdClient(job.to);
  const errors = new Errors();
  const t0 = performance.now();
  try {
    const { kvs } = await from.kv.range(prefixRange(job.prefix));
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < kvs.length) {
          const kv = kvs[next++];
          if (kv) await to.kv.put({ key: kv.key, value: kv.value });
        }
      }),
    );
    const latency = new Latencies();
    return result({ latency, operations: kvs.length, seconds: (performance.now() - t0) / 1000 }, errors);
  } finally {
    from.close();
    to.close();
  }
}

/**
 * Runs `count` openings of a stream, at most 50 at a time: a thousand at once is a
 * thousand TLS handshakes queued on the server, and the last ones time out.
 */
async function inBatches(count: number, open: () => Promise<void>, batch = 50): Promise<void> {
  for (let i = 0; i < count; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, count - i) }, () => open()));
  }
}

/** Reads newline-delimited watch events and reports each event's resourceVersion. */
function onEventLines(onRv: (rv: number) => void): (chunk: Buffer) => void {
  let rest = '';
  const rvPattern = /"resourceVersion":"(\d+)"/;
  return (chunk) => {
    const text = rest + chunk.toString('utf8');
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      // Only the first resourceVersion of a line is the event object's own.
      const m = rvPattern.exec(line);
      if (m) onRv(Number(m[1]));
    }
  };
}

async function watchFanout(job: Extract<Job, { kind: 'watch-fanout' }>): Promise<LoadResult> {
  const errors = new Errors();
  const watchPool = pool(job.target, job.watchers);
  const writePool = pool(job.target, 1);
  const h = headers(job.target);
  // Start from the current state so no watcher replays anything.
  const listRes = await writePool.request({ method: 'GET', path: `${API_PATH}/users?limit=1`, headers: h });
  const rv = (JSON.parse(await expectOk(listRes, 'list')) as { metadata: { resourceVersion: string } })
    .metadata.resourceVersion;
  const seen = new Map<number, { count: number; last: number }>();
  const streams: { destroy(): void }[] = [];
  const watchPath = `${API_PATH}/users?watch=1&resourceVersion=${rv}&timeoutSeconds=3600`;
  await inBatches(job.watchers, async () => {
    const res = await watchPool.request({ method: 'GET', path: watchPath, headers: h });
    if (res.statusCode !== 200) throw new Error(`watch: HTTP ${res.statusCode}: ${await res.body.text()}`);
    streams.push(res.body);
    const feed = onEventLines((eventRv) => {
      const now = performance.now();
      const s = seen.get(eventRv);
      if (s) {
        s.count++;
        s.last = now;
      } else seen.set(eventRv, { count: 1, last: now });
    });
    res.body.on('data', feed);
    res.body.on('error', () => undefined);
  });
  const acks = new Map<number, number>();
  const wh = headers(job.target, true);
  const saturate = job.writesPerSecond <= 0;
  const interval = saturate ? 0 : 1000 / job.writesPerSecond;
  const start = performance.now();
  let i = 0;
  const writes: Promise<void>[] = [];
  while (performance.now() - start < job.durationMs) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // At saturation the next write waits for the last one's answer (one writer).
    if (saturate && writes.length > 0) await writes[writes.length - 1];
    const n = i++;
    writes.push(
      (async () => {
        try {
          const res = await writePool.request({
            method: 'POST',
            path: `${API_PATH}/users`,
            headers: wh,
            body: JSON.stringify(userBody(`${job.namePrefix}-${n}`)),
          });
          const text = await expectOk(res, 'write');
          const written = Number(
            (JSON.parse(text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
          );
          acks.set(written, performance.now());
        } catch (err) {
          errors.note(err instanceof Error ? err.message : String(err));
        }
      })(),
    );
  }
  await Promise.all(writes);
  // Let the last events arrive (bounded), then measure.
  const deadline = performance.now() + 30_000;
  const complete = (): boolean => [...acks.keys()].every((r) => (seen.get(r)?.count ?? 0) >= job.watchers);
  while (!complete() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const latency = new Latencies();
  let incomplete = 0;
  // Events delivered per second, from the first write to the last event received.
  let delivered = 0;
  let lastEvent = start;
  for (const s of seen.values()) {
    delivered += s.count;
    if (s.last > lastEvent) lastEvent = s.last;
  }
  const eventsPerSecond = lastEvent > start ? Math.round(delivered / ((lastEvent - start) / 1000)) : 0;
  for (const [r, ack] of acks) {
    const s = seen.get(r);
    if (!s || s.count < job.watchers) {
      incomplete++;
      continue;
    }
    latency.recordMs(Math.max(0, s.last - ack));
  }
  for (const s of streams) s.destroy();
  await watchPool.close().catch(() => undefined);
  pools.delete(`${job.target.origin} ${job.watchers}`);
  if (incomplete > 0) errors.note(`${incomplete} writes did not reach every watcher within 30s`);
  return result({ latency, operations: latency.count, seconds: job.durationMs / 1000 }, errors, {
    watchers: job.watchers,
    writes: acks.size,
    incomplete,
    eventsPerSecond,
    // The writes' window in wall-clock ms (first write to last event), so a caller
    // sampling a server's CPU can leave out the watches' TLS handshakes before it.
    windowStartEpochMs: performance.timeOrigin + start,
    windowEndEpochMs: performance.timeOrigin + lastEvent,
  });
}

async function etcdWatch(job: Extract<Job, { kind: 'etcd-watch' }>): Promise<LoadResult> {
  const errors = new Errors();
  const client = etcdClient(job.endpoint);
  const prefix = `/bench/watch/${process.pid}/`;
  const seen = new Map<number, number>();
  const watcher = await client.watch().prefix(prefix).create();
  watcher.on('put', (kv) => seen.set(Number(kv.mod_revision), performance.now()));
  const value = rawValue(job.valueSize);
  const acks = new Map<number, number>();
  const interval = 1000 / job.writesPerSecond;
  const start = performance.now();
  let i = 0;
  const writes: Promise<void>[] = [];
  while (performance.now() - start < job.durationMs) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const n = i++;
    writes.push(
      client
        .put(`${prefix}${n}`)
        .value(value)
        .exec()
        .then(
          (res) => void acks.set(Number(res.header.revision), performance.now()),
          (err: unknown) => errors.note(String(err)),
        ),
    );
  }
  await Promise.all(writes);
  const deadline = performance.now() + 10_000;
  while ([...acks.keys()].some((r) => !seen.has(r)) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const latency = new Latencies();
  for (const [r, ack] of acks) {
    const at = seen.get(r);
    if (at !== undefined) latency.recordMs(Math.max(0, at - ack));
  }
  await watcher.cancel();
  await client.delete().prefix(prefix);
  client.close();
  return result({ latency, operations: latency.count, seconds: job.durationMs / 1000 }, errors);
}

let idle: { destroy(): void }[] = [];
let idlePool: Pool | undefined;

async function openIdleWatches(job: Extract<Job, { kind: 'open-idle-watches' }>): Promise<LoadResult> {
  const errors = new Errors();
  idlePool = new Pool(job.target.origin, {
    connections: job.count,
    pipelining: 1,
    bodyTimeout: 0,
    headersTimeout: 120_000,
    connect: { rejectUnauthorized: false, timeout: 120_000 },
  });
  const h = headers(job.target);
  const t0 = performance.now();
  await inBatches(job.count, async () => {
    try {
      const res = await idlePool!.request({ method: 'GET', path: job.path, headers: h });
      if (res.statusCode !== 200) throw new Error(`watch: HTTP ${res.statusCode}`);
      res.body.on('data', () => undefined);
      res.body.on('error', () => undefined);
      idle.push(res.body);
    } catch (err) {
      errors.note(err instanceof Error ? err.message : String(err));
    }
  });
  return {
    operations: idle.length,
    throughput: idle.length / ((performance.now() - t0) / 1000),
    latency: new Latencies().summary(),
    errors: errors.count,
    ...(errors.first ? { firstError: errors.first } : {}),
  };
}

async function closeIdleWatches(): Promise<LoadResult> {
  for (const s of idle) s.destroy();
  const n = idle.length;
  idle = [];
  await idlePool?.destroy().catch(() => undefined);
  idlePool = undefined;
  return { operations: n, throughput: 0, latency: new Latencies().summary(), errors: 0 };
}

async function request(job: Extract<Job, { kind: 'request' }>): Promise<LoadResult> {
  const res = await pool(job.target, 1).request({
    method: job.method,
    path: job.path,
    headers: headers(job.target, job.body !== undefined),
    ...(job.body !== undefined ? { body: JSON.stringify(job.body) } : {}),
  });
  const text = await expectOk(res, `${job.method} ${job.path}`);
  return {
    operations: 1,
    throughput: 0,
    latency: new Latencies().summary(),
    errors: 0,
    extra: { body: text },
  };
}

function result(
  run: { latency: Latencies; operations: number; completed?: number; seconds: number },
  errors: Errors,
  extra?: Record<string, unknown>,
): LoadResult {
  return {
    operations: run.operations,
    ...(run.completed !== undefined ? { completed: run.completed } : {}),
    throughput: Math.round((run.operations / run.seconds) * 10) / 10,
    latency: run.latency.summary(),
    errors: errors.count,
    ...(errors.first ? { firstError: errors.first } : {}),
    ...(extra ? { extra } : {}),
  };
}

export async function runJob(job: Job): Promise<LoadResult> {
  switch (job.kind) {
    case 'create-users':
      return createUsers(job);
    case 'create-access-keys':
      return createAccessKeys(job);
    case 'create-secrets':
      return createSecrets(job);
    case 'create-users-count':
      return createUsersCount(job);
    case 'get':
      return get(job);
    case 'list':
      return list(job);
    case 'etcd-put':
      return etcdPut(job);
    case 'etcd-range-parse':
      return etcdRangeParse(job);
    case 'etcd-copy':
      return etcdCopy(job);
    case 'watch-fanout':
      return watchFanout(job);
    case 'etcd-watch':
      return etcdWatch(job);
    case 'open-idle-watches':
      return openIdleWatches(job);
    case 'close-idle-watches':
      return closeIdleWatches();
    case 'request':
      return request(job);
  }
}

// As a forked child: one job per message, answered with { id, result } or { id, error }.
if (process.send) {
  process.on('message', (msg: { id: number; job: Job }) => {
    runJob(msg.job).then(
      (r) => process.send?.({ id: msg.id, result: r }),
      (err: unknown) =>
        process.send?.({
          id: msg.id,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
