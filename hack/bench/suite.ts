// The benchmark: every workload of issue 4 against its raw baseline, in one run on
// one machine, so that machine noise mostly cancels out of the ratios. Processes:
// this one only orchestrates; a forked load generator drives all load (HTTPS with
// keep-alive and a bearer access key, or the etcd3 client for etcd baselines);
// each API server and each bare baseline server runs in its own child process.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd, type EtcdInstance } from '../etcd.js';
import type { BareMode } from './bare-server.js';
import { chartAuditArgs } from './chart-audit.js';
import { Child } from './children.js';
import { DEFAULT_FAIRNESS, measureFairness } from './fairness.js';
import type { HostStarted } from './server-host.js';
import type { HttpTarget, Job, LoadResult } from './load.js';
import { API_PATH, GROUP, SECRETS_NAMESPACE, accessKeyBody, userBody } from './objects.js';
import { Row, type Figure } from './report.js';
import { roundOrder, roundRatios, sideOverRounds } from './rounds.js';

export interface Sizes {
  readonly warmupMs: number;
  readonly durationMs: number;
  /**
   * The create workloads' own warm-up and window (and their raw puts'): 64 clients
   * creating on a server that has just started or just been filled need longer than a
   * get to reach their pace, and a quick run on a busy machine counted 3 creates in a
   * 300 ms + 1.2 s window. In the full run they are warmupMs and durationMs.
   */
  readonly createWarmupMs: number;
  readonly createDurationMs: number;
  readonly listObjects: number;
  readonly listIterations: number;
  readonly watchers: number;
  readonly writesPerSecond: number;
  readonly watchDurationMs: number;
  /**
   * The authz-scale row's seeded store, and how many rounds its sides take turns for
   * (default AUTHZ_ROUNDS; BENCH_SIZES='{"authz":{"users":0,"keys":0,"teams":1}}' is a
   * null run, nothing seeded on either side).
   */
  readonly authz: {
    readonly users: number;
    readonly keys: number;
    readonly teams: number;
    readonly rounds?: number;
  };
  readonly scalePoints: readonly number[];
  readonly idleWatches: number;
  /** Rounds of the limiter rows (default LIMITER_ROUNDS; BENCH_SIZES='{"limiterRounds":10}'). */
  readonly limiterRounds?: number;
}

/**
 * Rounds of the authz-scale row: enough that the median drops a round or two a burst
 * fell on, and twice its three sides, so that roundOrder() balances positions and order.
 */
export const AUTHZ_ROUNDS = 6;

/**
 * Rounds of the limiter rows (gets, then creates): as the authz-scale row's, a median
 * that drops a round or two a burst fell on, and a multiple of twice their two sides,
 * so that roundOrder() puts each side first as often as the other.
 */
export const LIMITER_ROUNDS = 6;

export const FULL: Sizes = {
  warmupMs: 2000,
  durationMs: 10_000,
  createWarmupMs: 2000,
  createDurationMs: 10_000,
  listObjects: 10_000,
  listIterations: 20,
  watchers: 1000,
  writesPerSecond: 100,
  watchDurationMs: 20_000,
  authz: { users: 1000, keys: 10_000, teams: 100 },
  scalePoints: [1000, 10_000, 100_000],
  idleWatches: 1000,
};

export const QUICK: Sizes = {
  warmupMs: 300,
  durationMs: 1200,
  createWarmupMs: 1500,
  createDurationMs: 2000,
  listObjects: 500,
  listIterations: 4,
  watchers: 20,
  writesPerSecond: 20,
  watchDurationMs: 1500,
  authz: { users: 20, keys: 60, teams: 4 },
  scalePoints: [100, 1000],
  idleWatches: 20,
};

interface Memory {
  readonly heapUsed: number;
  readonly rss: number;
}

/** The groups of workloads run() runs, in its order; `--only` picks some of them. */
export const WORKLOAD_GROUPS = ['etcd', 'sqlite', 'memory', 'encryption', 'fairness', 'limiter'] as const;
export type WorkloadGroup = (typeof WORKLOAD_GROUPS)[number];

export interface SuiteEnv {
  readonly log: (line: string) => void;
  /** The groups to run (default: all). */
  readonly only?: ReadonlySet<WorkloadGroup>;
}

export class Suite {
  readonly rows: Row[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'platform-bench-'));
  private readonly children: Child[] = [];
  private etcd: EtcdInstance | undefined;
  /** The raw etcd rows' own etcd (see rawEtcd()). */
  private plainEtcd: EtcdInstance | undefined;
  private load!: Child;
  private serverCount = 0;

  constructor(
    private readonly sizes: Sizes,
    private readonly env: SuiteEnv,
  ) {}

  async run(): Promise<Row[]> {
    try {
      this.env.log(`bench: working in ${this.dir}`);
      this.etcd = await startEtcd();
      this.load = this.child(Child.start('load', 'load', { logFile: join(this.dir, 'load.log') }));
      const groups: Record<WorkloadGroup, () => Promise<void>> = {
        etcd: () => this.etcdServerWorkloads(),
        sqlite: () => this.sqliteServerWorkloads(),
        memory: () => this.memoryAndScaleWorkloads(),
        encryption: () => this.encryptionWorkloads(),
        fairness: () => this.fairQueuingWorkload(),
        limiter: () => this.limiterWorkloads(),
      };
      for (const group of WORKLOAD_GROUPS) {
        if (!this.env.only || this.env.only.has(group)) await groups[group]();
      }
      return this.rows;
    } finally {
      await this.cleanup();
    }
  }

  get workDir(): string {
    return this.dir;
  }

  // ---- the etcd3 server -----------------------------------------------------------

  private async etcdServerWorkloads(): Promise<void> {
    const s = this.sizes;
    const etcd = this.etcd!;
    const { target, host } = await this.startServer([
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      etcd.endpoint,
    ]);
    const createTiming = this.createTiming();
    const raw = await this.rawEtcd();

    // The list first, while the store holds just the objects filled for it: the create
    // workloads below leave thousands more, and the row is about listing 10,000.
    this.env.log(`bench: list ${s.listObjects} objects (etcd3)`);
    const total = await this.countUsers(target);
    if (total < s.listObjects) {
      await this.job({
        kind: 'create-users-count',
        target,
        namePrefix: 'fill',
        concurrency: 32,
        count: s.listObjects - total,
      });
    }
    const listPath = `${API_PATH}/users`;
    const list = await this.measured(host, {
      kind: 'list',
      target,
      path: listPath,
      warmup: 2,
      iterations: s.listIterations,
    });
    const listed = await this.request<{
      kind: string;
      apiVersion: string;
      metadata: unknown;
      items: unknown[];
    }>(target, listPath);
    const bareList = await this.bare({ mode: 'list', list: listed });
    const bareListResult = await this.measured(bareList.child, {
      kind: 'list',
      target: bareList.target,
      path: '/',
      warmup: 2,
      iterations: s.listIterations,
    });
    await bareList.child.stop();
    // The raw range reads the same keys and bytes, copied to the plain etcd.
    const prefix = `/registry/${GROUP}/users/`;
    await this.job({ kind: 'etcd-copy', from: etcd.endpoint, to: raw.endpoint, prefix });
    await this.settle(host);
    const rangeParse = await this.job({
      kind: 'etcd-range-parse',
      endpoint: raw.endpoint,
      prefix,
      warmup: 2,
      iterations: s.listIterations,
    });
    const items = listed.items.length;
    this.add(
      new Row('list', `list ${items} objects, p50 (etcd3)`, latencyFigure(list, 'p50'))
        .against(
          latencyFigure(bareListResult, 'p50'),
          'bare node:https serializing the same objects per request',
        )
        .target('<=', 1.5),
    );
    this.add(
      new Row(
        'list-vs-etcd',
        `list ${items} objects vs etcd3 range + JSON.parse, p50`,
        latencyFigure(list, 'p50'),
      )
        .against(latencyFigure(rangeParse, 'p50'), 'raw etcd3 range of the prefix + JSON.parse of each value')
        .target('<=', 0.5),
    );

    this.env.log('bench: create throughput, 64 clients (etcd3)');
    const creates = await this.measured(host, {
      kind: 'create-users',
      target,
      namePrefix: 'ct',
      concurrency: 64,
      ...createTiming,
    });
    const valueSize = await this.storedUserSize(target, 'ct-0');
    await this.settle(host);
    const puts = await this.job({
      kind: 'etcd-put',
      endpoint: raw.endpoint,
      valueSize,
      concurrency: 64,
      ...createTiming,
    });
    this.add(
      new Row(
        'create-throughput',
        'create throughput, 64 clients, etcd3',
        throughputFigure(creates, 'creates/s'),
      )
        .against(throughputFigure(puts, 'puts/s'), 'etcd3 puts, same value size and concurrency')
        .target('>=', 0.5),
    );
    this.add(
      new Row('create-p99', 'create p99, 64 clients, etcd3', latencyFigure(creates, 'p99'))
        .against(latencyFigure(puts, 'p99'), 'etcd3 put p99, 64 clients')
        .target('<=', 2),
    );

    this.env.log('bench: create latency, 1 client (etcd3)');
    const one = await this.measured(host, {
      kind: 'create-users',
      target,
      namePrefix: 'cl',
      concurrency: 1,
      ...createTiming,
    });
    await this.settle(host);
    const onePut = await this.job({
      kind: 'etcd-put',
      endpoint: raw.endpoint,
      valueSize,
      concurrency: 1,
      ...createTiming,
    });
    this.add(
      new Row('create-latency', 'create latency p50, 1 client, etcd3', latencyFigure(one, 'p50'))
        .against(latencyFigure(onePut, 'p50'), 'etcd3 put p50, 1 client')
        .target('<=', 1.5),
    );

    this.env.log('bench: get by name, 32 clients (etcd3)');
    await this.getByName('get-etcd3', 'etcd3', target, host);

    this.env.log(`bench: watch fan-out, ${s.watchers} watchers, ${s.writesPerSecond} writes/s (etcd3)`);
    const fanoutJob = {
      kind: 'watch-fanout',
      watchers: s.watchers,
      writesPerSecond: s.writesPerSecond,
      durationMs: s.watchDurationMs,
    } as const;
    const fanout = await this.measured(host, { ...fanoutJob, target, namePrefix: 'fan' });
    this.env.log(`bench: watch fan-out at saturation, ${s.watchers} watchers (etcd3)`);
    const saturated = await this.measured(host, {
      ...fanoutJob,
      target,
      writesPerSecond: 0,
      namePrefix: 'fansat',
    });
    // The fair baseline: a bare server writing the same event bytes to as many TLS streams.
    const created = await this.request<{ metadata: { resourceVersion: string } }>(
      target,
      `${API_PATH}/users/fan-0`,
    );
    const event = JSON.stringify({ type: 'ADDED', object: created }).replace(
      `"resourceVersion":"${created.metadata.resourceVersion}"`,
      '"resourceVersion":"@RV@"',
    );
    const bare = await this.bare({ mode: 'broadcast', event });
    const bareFanout = await this.measured(bare.child, {
      ...fanoutJob,
      target: bare.target,
      namePrefix: 'fan',
    });
    const bareSaturated = await this.measured(bare.child, {
      ...fanoutJob,
      target: bare.target,
      writesPerSecond: 0,
      namePrefix: 'fansat',
    });
    await bare.child.stop();
    await this.settle(host);
    const rawWatch = await this.job({
      kind: 'etcd-watch',
      endpoint: raw.endpoint,
      writesPerSecond: s.writesPerSecond,
      durationMs: s.watchDurationMs,
      valueSize,
    });
    const fanoutName = `watch fan-out p99: ${s.watchers} watchers, ${s.writesPerSecond} writes/s (etcd3)`;
    this.add(
      new Row('watch-fanout', fanoutName, latencyFigure(fanout, 'p99'))
        .against(
          latencyFigure(bareFanout, 'p99'),
          'bare node:https writing the same event bytes to as many TLS streams, same write rate',
        )
        .target('<=', 2),
    );
    this.add(
      new Row(
        'watch-fanout-etcd',
        `${fanoutName}, vs one raw etcd watcher`,
        latencyFigure(fanout, 'p99'),
      ).against(
        latencyFigure(rawWatch, 'p99'),
        'one raw etcd3 watcher, same write rate (information: no target)',
      ),
    );
    this.add(
      new Row(
        'watch-fanout-saturation',
        `watch events delivered per second at saturation, ${s.watchers} watchers (etcd3)`,
        eventsFigure(saturated),
      ).against(
        eventsFigure(bareSaturated),
        'the bare broadcast server, one writer as fast as answered (no target)',
      ),
    );
    await host.stop();
  }

  // ---- the sqlite server: authorization at scale, and sqlite vs etcd3 creates -------------

  private async sqliteServerWorkloads(): Promise<void> {
    const { target, host } = await this.startServer(['--storage-backend', 'sqlite']);
    await this.authorizationAtScale(target, host);

    this.env.log('bench: get by name, 32 clients (sqlite)');
    await this.getByName('get-sqlite', 'sqlite', target, host);
    await this.auditedGets();

    this.env.log('bench: create throughput, 64 clients (sqlite)');
    const creates = await this.measured(host, {
      kind: 'create-users',
      target,
      namePrefix: 'sq',
      concurrency: 64,
      ...this.createTiming(),
    });
    const etcdCreates = this.rows.find((r) => r.id === 'create-throughput')?.server;
    const row = new Row(
      'create-sqlite',
      'create throughput, 64 clients, sqlite',
      throughputFigure(creates, 'creates/s'),
    );
    this.add(etcdCreates ? row.against(etcdCreates, 'the etcd3 server, same workload (no target)') : row);
    await host.stop();
  }

  /**
   * The authz-scale row: what the store's size costs a plain user's get, and beside it
   * the noise floor of the method it is measured by. `target` (the server the sqlite
   * rows after it use) is seeded with s.authz's Users, access keys and Teams; two
   * more servers started alike are not: the unseeded side and its twin.
   *
   * Every side answers the same bytes through the same path: the reader (a plain
   * User with one access key, reading their own User) is in one Team, `team-0`, on
   * all three, and that Team is the same object everywhere (its member list names
   * Users that exist only on the seeded server). The seeded reader was in team-0 and
   * the unseeded one in none, so the two sides read different objects (status.teams:
   * 1,430 bytes against 1,155) and resolved a different caller; the row is about the
   * cost of the store's size on a get, not of a different response. Membership stays
   * part of what is measured (the caller's teams are found among 100 on the seeded
   * side), with the same small number of Teams on both. The reader's User is written
   * in the same order on every side, before any seeding, so even its resourceVersion
   * is the same; sameResponses() checks it before measuring.
   *
   * The sides take turns in rotated rounds (rotatedRounds()) and the row's ratio is
   * the median of the rounds' ratios; the twins, measured in the same rounds, give the
   * floor row (authz-scale-floor): what two like servers differ by with this method.
   */
  private async authorizationAtScale(target: HttpTarget, host: Child): Promise<void> {
    const s = this.sizes;
    this.env.log('bench: authorization at scale (sqlite)');
    // Both unseeded servers run with the server's node flags (children.ts: as every
    // launcher starts the server), whose fixed young generation keeps a side's cost
    // from following its history (docs/performance/young-generation.md).
    const unseeded = await this.startServer(['--storage-backend', 'sqlite']);
    const twin = await this.startServer(['--storage-backend', 'sqlite']);
    const { users, keys, teams } = s.authz;
    const sides = [
      { label: 'seeded', admin: target, host },
      { label: 'unseeded', admin: unseeded.target, host: unseeded.host },
      { label: 'unseeded twin', admin: twin.target, host: twin.host },
    ];
    const readers: HttpTarget[] = [];
    for (const side of sides) {
      readers.push(await this.plainUser(side.admin));
      // The reader's key activity and the admin's are written asynchronously: let them
      // land before the Team, so every side writes the reader's status at the same revision.
      await this.settle(side.host);
      if (teams > 0) await this.readerInTeam(side.admin, team('team-0', users, teams, 0));
    }
    const readerPath = `${API_PATH}/users/reader`;
    await this.sameResponses(readers, readerPath);
    await this.job({
      kind: 'create-users-count',
      target,
      namePrefix: 'member',
      concurrency: 16,
      count: users,
    });
    await this.createMany(target, 'teams', Math.max(0, teams - 1), (i) =>
      team(`team-${i + 1}`, users, teams, i + 1),
    );
    await this.createMany(target, 'ownedaccesskeys', keys, (i) =>
      accessKeyBody(`key-${i}`, `member-${i % users}`, `k${String(i).padStart(8, '0')}`.padEnd(64, 'x')),
    );
    await this.sameResponses(readers, readerPath);
    // Half windows: 6 rounds of three servers are 18 windows (the best of two rounds
    // of two was 4), and the CPU per get of a round is the figure that resolves, not
    // the window's length. A round's job is the same on every side.
    const getOwn = (which: number): Job => ({
      kind: 'get',
      target: readers[which] ?? target,
      paths: [readerPath],
      concurrency: 32,
      warmupMs: Math.round(s.warmupMs / 2),
      durationMs: Math.round(s.durationMs / 2),
    });
    const hosts = sides.map((side) => side.host);
    // One unmeasured window each first: the seeded server has served the seeding, the
    // others almost nothing, and a cold JIT would count against the unseeded side (in
    // two quick runs without it, the seeded server read 2.7-2.9x the unseeded one).
    for (const [which, side] of hosts.entries()) {
      await this.settle(side);
      await this.job(getOwn(which));
    }
    const rounds = s.authz.rounds ?? AUTHZ_ROUNDS;
    const results = await this.rotatedRounds(
      hosts,
      sides.map((side) => side.label),
      getOwn,
      rounds,
    );
    await unseeded.host.stop();
    await twin.host.stop();
    const [large, small, second] = results as [LoadResult[], LoadResult[], LoadResult[]];
    const label =
      'the same on an unseeded server: the admin and the reader, one key each, the reader in one Team';
    this.add(
      new Row(
        'authz-scale',
        `get throughput with ${keys} keys, ${users} users, ${teams} teams stored (sqlite)`,
        throughputFigure(sideOverRounds(large), 'gets/s'),
      )
        .against(throughputFigure(sideOverRounds(small), 'gets/s'), label)
        .byRounds(roundRatios(large, small))
        .target('>=', 0.95),
    );
    this.add(
      new Row(
        'authz-scale-floor',
        "the noise floor of authz-scale's method: a second unseeded server against the first, same rounds (sqlite)",
        throughputFigure(sideOverRounds(second), 'gets/s'),
      )
        .against(throughputFigure(sideOverRounds(small), 'gets/s'), `${label} (information: no target)`)
        .byRounds(roundRatios(second, small)),
    );
  }

  /**
   * Puts the reader in `body` (a Team naming them) and waits until their status.teams
   * says so. managedFields are ordered by time in whole seconds, then by manager, as
   * upstream orders them: a status written in the second the User was created would
   * come first on one side and second on another, so the Team waits for the next second.
   */
  private async readerInTeam(admin: HttpTarget, body: Record<string, unknown>): Promise<void> {
    const created = await this.request<{ metadata: { creationTimestamp: string } }>(
      admin,
      `${API_PATH}/users/reader`,
    );
    const nextSecond = Date.parse(created.metadata.creationTimestamp) + 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, nextSecond - Date.now() + 50)));
    await this.post(admin, 'teams', body);
    const name = (body['metadata'] as { name: string }).name;
    for (let i = 0; i < 200; i++) {
      const reader = await this.request<{ status?: { teams?: string[] } }>(admin, `${API_PATH}/users/reader`);
      if (reader.status?.teams?.includes(name)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`authorization at scale: the reader never showed Team ${name} in status.teams`);
  }

  /**
   * Every side must answer the reader's get with the same bytes (but for the uid and the
   * times of day, which differ in value, not length): otherwise the row would compare
   * responses, not stores.
   */
  private async sameResponses(readers: readonly HttpTarget[], path: string): Promise<void> {
    const bodies: string[] = [];
    for (const reader of readers) {
      const r = await this.job({ kind: 'request', target: reader, method: 'GET', path });
      bodies.push(String(r.extra?.['body']));
    }
    const shape = (body: string): string =>
      body.replace(/"uid":"[^"]*"/g, '"uid":"-"').replace(/"(creationTimestamp|time)":"[^"]*"/g, '"$1":"-"');
    const [first, ...others] = bodies;
    for (const [i, other] of others.entries()) {
      if (other.length !== first?.length || shape(other) !== shape(first)) {
        throw new Error(
          `authorization at scale: side ${i + 1} answers the reader's get with ${other.length} bytes unlike side 0's ${first?.length ?? 0}: ${shape(other)} against ${shape(first ?? '')}`,
        );
      }
    }
    this.env.log(
      `bench:   the reader's get answers ${first?.length ?? 0} bytes alike on ${bodies.length} servers`,
    );
  }

  /**
   * What the chart's default audit costs a get (information, no target: the get rows
   * above run without audit, as the issue defines them). Two servers started alike,
   * one with the chart's default policy and log settings (chart-audit.ts: a get is
   * audited at Metadata, its event written to a file in the run's directory), taking
   * turns at the same gets as the limiter and authz-scale rows do.
   */
  private async auditedGets(): Promise<void> {
    const s = this.sizes;
    this.env.log("bench: get by name with the chart's default audit policy, vs without (sqlite)");
    const auditArgs = chartAuditArgs(this.dir, join(this.dir, 'audit.log'));
    const sides = [
      await this.startServer(['--storage-backend', 'sqlite', ...auditArgs]),
      await this.startServer(['--storage-backend', 'sqlite']),
    ];
    // The same ~1 KiB Users on both, created through the registry (not audited: not a request).
    const count = 100;
    for (const side of sides) {
      await side.host.call({ seedUsers: { prefix: 'audited', from: 0, count, concurrency: 8 } });
    }
    const paths = Array.from({ length: count }, (_, i) => `${API_PATH}/users/audited-${i}`);
    const hosts = sides.map((side) => side.host);
    const gets = (which: number): Job => ({
      kind: 'get',
      target: sides[which]?.target ?? { origin: '' },
      paths,
      concurrency: 32,
      warmupMs: s.warmupMs,
      durationMs: s.durationMs,
    });
    // An unmeasured window each first, so neither side's JIT warms up in a measured one.
    for (const [which, host] of hosts.entries()) {
      await this.settle(host);
      await this.job(gets(which));
    }
    const [audited, plain] = await this.alternating(hosts, ['audited', 'not audited'], gets);
    for (const host of hosts) await host.stop();
    if (!audited || !plain) throw new Error('audited gets: a side was never measured');
    this.add(
      new Row(
        'get-audited',
        "get by name, 32 clients, with the chart's default audit policy (sqlite)",
        throughputFigure(audited, 'gets/s'),
      ).against(
        throughputFigure(plain, 'gets/s'),
        'the same server without audit, same run (information: no target)',
      ),
    );
  }

  // ---- memory, and reads as the store grows ----------------------------------------------

  private async memoryAndScaleWorkloads(): Promise<void> {
    const s = this.sizes;
    const { target, host } = await this.startServer(['--storage-backend', 'sqlite']);

    this.env.log(`bench: memory per idle watch, ${s.idleWatches} watches`);
    const idlePath = `${API_PATH}/teams?watch=1&timeoutSeconds=3600`;
    const watchDelta = await this.idleWatchMemory(host, target, idlePath);
    const bare = await this.bare({ mode: 'stream' });
    const bareDelta = await this.idleWatchMemory(bare.child, bare.target, '/');
    await bare.child.stop();
    this.add(
      new Row(
        'idle-watch-heap',
        `heap per idle watch, ${s.idleWatches} watches`,
        bytesFigure(watchDelta.heap),
      )
        .against(bytesFigure(bareDelta.heap), 'bare node:https holding idle streaming responses')
        .target('<=', 2),
    );
    this.add(
      new Row('idle-watch-rss', `RSS per idle watch, ${s.idleWatches} watches`, bytesFigure(watchDelta.rss))
        .against(bytesFigure(bareDelta.rss), 'bare node:https holding idle streaming responses')
        .target('<=', 2),
    );

    const before = await host.call<Memory>({ memory: true });
    let seeded = 0;
    let template = '';
    for (const point of s.scalePoints) {
      this.env.log(`bench: reads at ${point} stored objects`);
      await host.call({
        seedUsers: { prefix: 'scale', from: seeded, count: point - seeded, concurrency: 8 },
      });
      seeded = point;
      const name = `scale-${Math.floor(point / 2)}`;
      const one = { warmupMs: this.sizes.warmupMs / 2, durationMs: this.sizes.durationMs / 2 };
      const get = await this.job({
        kind: 'get',
        target,
        paths: [`${API_PATH}/users/${name}`],
        concurrency: 1,
        ...one,
      });
      const page = await this.job({
        kind: 'list',
        target,
        path: `${API_PATH}/users?limit=500`,
        warmup: 2,
        iterations: this.sizes.listIterations,
      });
      this.add(
        new Row(`scale-get-${point}`, `get p50 at ${point} stored objects`, latencyFigure(get, 'p50')),
      );
      this.add(
        new Row(
          `scale-page-${point}`,
          `list page of 500, p50, at ${point} stored objects`,
          latencyFigure(page, 'p50'),
        ),
      );
      if (point <= 10_000) {
        const full = await this.job({
          kind: 'list',
          target,
          path: `${API_PATH}/users`,
          warmup: 1,
          iterations: 3,
        });
        this.add(
          new Row(
            `scale-list-${point}`,
            `full list p50 at ${point} stored objects`,
            latencyFigure(full, 'p50'),
          ),
        );
      }
      template = JSON.stringify(await this.request(target, `${API_PATH}/users/${name}`));
    }
    const after = await host.call<Memory>({ memory: true });
    const perObject = (after.heapUsed - before.heapUsed) / seeded;
    const parser = this.child(Child.start('bare-parse', 'bare-server', { gc: true }));
    const plain = await parser.call<{ before: Memory; after: Memory; count: number }>({
      parse: { template: template.replace(/scale-\d+/g, 'scale-@N@'), count: seeded },
    });
    await parser.stop();
    this.add(
      new Row(
        'cached-object-heap',
        `heap per cached object, ${seeded} objects cached`,
        bytesFigure(perObject),
      )
        .against(
          bytesFigure((plain.after.heapUsed - plain.before.heapUsed) / plain.count),
          'the same objects as plain JSON.parse output',
        )
        .target('<=', 2),
    );
    await host.stop();
  }

  // ---- pieces -----------------------------------------------------------------------

  /** The warm-up and window of a create workload and of its raw puts (Sizes.createWarmupMs). */
  private createTiming(): { warmupMs: number; durationMs: number } {
    return { warmupMs: this.sizes.createWarmupMs, durationMs: this.sizes.createDurationMs };
  }

  /**
   * The etcd the raw etcd rows (puts, the range + JSON.parse, the raw watcher) run
   * against: a second one, started alike, that no server ever watches. On the server's
   * etcd each raw put also went down the server's whole-keyspace watch (global-progress.ts,
   * which feeds the caches): etcd sent an event per put and the server decoded it on
   * the same two cores, so the baseline paid for our server and flattered our ratio.
   * A second etcd keeps the baseline a plain etcd with no watcher, and needs nothing
   * from the server; pausing the server's watch instead would have meant a hook into
   * the server only the bench uses, and a resumed watch replaying every put afterwards.
   */
  private async rawEtcd(): Promise<EtcdInstance> {
    this.plainEtcd ??= await startEtcd();
    return this.plainEtcd;
  }

  private async getByName(id: string, backend: string, target: HttpTarget, host: Child): Promise<void> {
    const timing = { warmupMs: this.sizes.warmupMs, durationMs: this.sizes.durationMs };
    // Only the benchmark's ~1 KiB Users (the set label), not the small admin User: the
    // bare baseline serves one of them, and both sides must move the same bytes.
    const names = (
      await this.request<{ items: { metadata: { name: string } }[] }>(
        target,
        `${API_PATH}/users?limit=100&labelSelector=${encodeURIComponent('bench.platform.dev/set=load')}`,
      )
    ).items.map((u) => u.metadata.name);
    if (names.length === 0) throw new Error('get by name: no benchmark users stored');
    const get = await this.measured(host, {
      kind: 'get',
      target,
      paths: names.map((n) => `${API_PATH}/users/${n}`),
      concurrency: 32,
      ...timing,
    });
    const body = JSON.stringify(await this.request(target, `${API_PATH}/users/${names[0]}`)) + '\n';
    const bare = await this.bare({ mode: 'bytes', body });
    const bareGet = await this.measured(bare.child, {
      kind: 'get',
      target: bare.target,
      paths: ['/'],
      concurrency: 32,
      ...timing,
    });
    await bare.child.stop();
    this.add(
      new Row(id, `get by name, 32 clients (${backend})`, throughputFigure(get, 'gets/s'))
        .against(throughputFigure(bareGet, 'gets/s'), 'bare node:https returning the same JSON bytes')
        .target('>=', 0.5),
    );
  }

  private async idleWatchMemory(
    process: Child,
    target: HttpTarget,
    path: string,
  ): Promise<{ heap: number; rss: number }> {
    const before = await process.call<Memory>({ memory: true });
    const opened = await this.job({ kind: 'open-idle-watches', target, count: this.sizes.idleWatches, path });
    await new Promise((r) => setTimeout(r, 500));
    const after = await process.call<Memory>({ memory: true });
    await this.job({ kind: 'close-idle-watches' });
    const n = Math.max(1, opened.operations);
    return { heap: (after.heapUsed - before.heapUsed) / n, rss: (after.rss - before.rss) / n };
  }

  private async startServer(
    args: string[],
  ): Promise<{ target: HttpTarget; host: Child; server: HostStarted }> {
    const n = ++this.serverCount;
    const dataDir = join(this.dir, `server-${n}`);
    const host = this.child(
      Child.start(`server-${n}`, 'server-host', {
        logFile: join(this.dir, `server-${n}.log`),
        gc: true,
        maxOldSpaceMb: 4096,
      }),
    );
    const server = await host.call<HostStarted>({
      start: { args: ['--secure-port', '0', '--data-dir', dataDir, ...args] },
    });
    this.lastCerts = server;
    return { target: { origin: server.origin, token: server.token }, host, server };
  }

  /** A bare server with the same certificate as the last API server started. */
  private async bare(behaviour: BareMode): Promise<{ child: Child; target: HttpTarget }> {
    const certs = this.lastCerts;
    if (!certs) throw new Error('no server has started yet');
    const child = this.child(Child.start('bare', 'bare-server', { gc: true }));
    const { origin } = await child.call<{ origin: string }>({
      start: { certPem: certs.certPem, keyPem: certs.keyPem, behaviour },
    });
    return { child, target: { origin } };
  }

  private lastCerts: HostStarted | undefined;
  private profiles = 0;

  /**
   * Waits (up to 20 s) until `process` has been nearly idle for a moment, so a measurement
   * that follows a burst of writes does not also pay for the work those writes set off
   * (controllers, informers, garbage collection).
   */
  private async settle(process: Child): Promise<void> {
    const cpu = async (): Promise<number> => {
      const u = await process.call<{ user: number; system: number }>({ cpu: true });
      return u.user + u.system;
    };
    const windowMs = 500;
    const deadline = Date.now() + 20_000;
    let last = await cpu();
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, windowMs));
      const now = await cpu();
      // Under 10% of a core over the window counts as idle.
      if (now - last < windowMs * 100) return;
      last = now;
    }
    this.env.log(`bench:   ${process.name} did not settle within 20 s`);
  }

  /** Runs `job` and notes the CPU time `process` spent per operation (what bounds most figures). */
  private async measured(process: Child, job: Job): Promise<LoadResult> {
    const cpu = async (): Promise<number> => {
      const u = await process.call<{ user: number; system: number }>({ cpu: true });
      return u.user + u.system;
    };
    // BENCH_PROFILE=<dir>: a CPU profile of the measured process for each measured job.
    const profileDir = globalThis.process.env['BENCH_PROFILE'];
    if (profileDir) await process.call({ profile: { start: true } });
    const before = await cpu();
    const r = await this.job(job);
    const used = (await cpu()) - before;
    if (profileDir) {
      const file = join(profileDir, `${process.name}-${job.kind}-${++this.profiles}.cpuprofile`);
      await process.call({ profile: { stop: file } });
      this.env.log(`bench:   profile ${file}`);
    }
    // The CPU was read around the whole job, warm-up included, so it is divided by every
    // operation the job completed where the job counts them (a closed loop's warm-up is the
    // same operation), not by the measured window's alone.
    const ops = r.completed ?? r.operations;
    const cpuUsPerOp = ops > 0 ? Math.round(used / ops) : 0;
    return { ...r, extra: { ...r.extra, cpuUsPerOp, cpuProcess: process.name } };
  }

  private async job(job: Job): Promise<LoadResult> {
    const r = await this.load.call<LoadResult>({ job });
    if (r.errors > 0) this.env.log(`bench:   ${job.kind}: ${r.errors} errors, first: ${r.firstError ?? ''}`);
    return r;
  }

  private async request<T>(target: HttpTarget, path: string): Promise<T> {
    const r = await this.job({ kind: 'request', target, method: 'GET', path });
    return JSON.parse(String(r.extra?.['body'])) as T;
  }

  private async post(target: HttpTarget, resource: string, body: unknown): Promise<void> {
    await this.job({ kind: 'request', target, method: 'POST', path: `${API_PATH}/${resource}`, body });
  }

  private async createMany(
    target: HttpTarget,
    resource: string,
    count: number,
    body: (i: number) => unknown,
  ): Promise<void> {
    const batch = 16;
    for (let i = 0; i < count; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
          this.post(target, resource, body(i + j)),
        ),
      );
    }
  }

  /** The size of a User as returned (about what storage holds), for same-size raw puts. */
  private async storedUserSize(target: HttpTarget, name: string): Promise<number> {
    return JSON.stringify(await this.request(target, `${API_PATH}/users/${name}`)).length;
  }

  private async countUsers(target: HttpTarget): Promise<number> {
    const page = await this.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
      target,
      `${API_PATH}/users?limit=1`,
    );
    return page.items.length + (page.metadata.remainingItemCount ?? 0);
  }

  /** A new key works once the authenticator has seen it: wait for the first 200. */
  private async waitForKey(target: HttpTarget): Promise<void> {
    for (let i = 0; i < 100; i++) {
      try {
        await this.request(target, `${API_PATH}/users/reader`);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('the reader key never started to work');
  }

  private child(c: Child): Child {
    this.children.push(c);
    return c;
  }

  // ---- overload protection ---------------------------------------------------------

  /**
   * One user floods at ten times what the server can serve; another user's get p99
   * stays within 3x of its p99 on an idle server (issue 15). In this process, over
   * fake storage with a small read limit: see fairness.ts.
   */
  // ---- encryption at rest ----------------------------------------------------------

  /**
   * What encryption at rest costs a request: Global Secrets created and read through
   * an embedded server with its default (secretbox, the key it generates) against the
   * same server told to store them in the clear (an EncryptionConfiguration with only
   * `identity`), in the same run. Reads are served by the watch cache, which holds
   * objects decrypted, so the get row should show no cost; creates pay the encryption.
   */
  private async encryptionWorkloads(): Promise<void> {
    const s = this.sizes;
    const timing = { warmupMs: s.warmupMs, durationMs: s.durationMs };
    const plainConfig = join(this.dir, 'identity-encryption.yaml');
    writeFileSync(
      plainConfig,
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: EncryptionConfiguration',
        'resources:',
        `  - resources: [sharedsecrets.${GROUP}]`,
        '    providers:',
        '      - identity: {}',
        '',
      ].join('\n'),
    );
    const measure = async (
      label: string,
      args: string[],
    ): Promise<{ creates: LoadResult; gets: LoadResult }> => {
      const { target, host } = await this.startServer(['--storage-backend', 'sqlite', ...args]);
      this.env.log(`bench: Global Secret creates and gets, ${label} (sqlite)`);
      const creates = await this.measured(host, {
        kind: 'create-secrets',
        target,
        namePrefix: 'enc',
        concurrency: 64,
        ...this.createTiming(),
      });
      const paths = Array.from(
        { length: Math.min(100, creates.operations) },
        (_, i) => `${API_PATH}/namespaces/${SECRETS_NAMESPACE}/sharedsecrets/enc-${i}`,
      );
      const gets = await this.measured(host, { kind: 'get', target, paths, concurrency: 32, ...timing });
      await host.stop();
      return { creates, gets };
    };
    const encrypted = await measure('encrypted (the default)', []);
    const plain = await measure('stored in the clear', ['--encryption-provider-config', plainConfig]);
    this.add(
      new Row(
        'encryption-create',
        'Global Secret creates, 64 clients, encrypted at rest (secretbox; sqlite)',
        throughputFigure(encrypted.creates, 'creates/s'),
      ).against(throughputFigure(plain.creates, 'creates/s'), 'the same stored in the clear (identity)'),
    );
    this.add(
      new Row(
        'encryption-get',
        'Global Secret gets by name, 32 clients, encrypted at rest (secretbox; sqlite)',
        throughputFigure(encrypted.gets, 'gets/s'),
      ).against(throughputFigure(plain.gets, 'gets/s'), 'the same stored in the clear (identity)'),
    );
  }

  // ---- the overload limiter's cost -----------------------------------------------------

  /**
   * Gets and creates by a plain user (administrators are exempt from the limiter, and
   * the harness's other workloads run as the admin), with the limiter at its defaults
   * (400 reads, 200 writes at once: never reached here, so what is measured is its
   * bookkeeping: the flow's queue, the seat, the metrics) against the same server
   * build with both limits 0, which upstream and this server read as "no limit".
   */
  private async limiterWorkloads(): Promise<void> {
    const s = this.sizes;
    // Half windows, as the authz-scale row's: 6 rounds of two servers are 12 windows
    // (best of two was 4), and it is the rounds' ratios that resolve, not a window's length.
    const half = (t: { warmupMs: number; durationMs: number }): { warmupMs: number; durationMs: number } => ({
      warmupMs: Math.round(t.warmupMs / 2),
      durationMs: Math.round(t.durationMs / 2),
    });
    const start = async (args: string[]): Promise<{ host: Child; reader: HttpTarget }> => {
      const { target, host } = await this.startServer(['--storage-backend', 'sqlite', ...args]);
      return { host, reader: await this.plainUser(target) };
    };
    const sides = [
      await start([]),
      await start(['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0']),
    ];
    const labels = ['overload limiter on (the default)', 'no limiter'];
    // Both servers take turns in rotated rounds (rotatedRounds(), as the authz-scale
    // row), the gets first on both, then the creates, and each row's ratio is the median
    // of its rounds' ratios. One after the other, a ratio of 0.9 drowned in the
    // machine's noise (0.19-0.77x for the same build in three quick runs); best of two
    // alternating rounds still read the creates 0.89x with the same build on both sides
    // of the question. The limiter itself costs a get ~0.2 us of CPU
    // (hack/bench/limiter-ab.ts), well under 1%.
    const hosts = sides.map((side) => side.host);
    const reader = (which: number): HttpTarget => {
      const side = sides[which];
      if (!side) throw new Error(`limiter workload: no side ${which}`);
      return side.reader;
    };
    const rounds = s.limiterRounds ?? LIMITER_ROUNDS;
    const gets = await this.rotatedRounds(
      hosts,
      labels,
      (which) => ({
        kind: 'get',
        target: reader(which),
        paths: [`${API_PATH}/users/reader`],
        concurrency: 32,
        ...half(s),
      }),
      rounds,
    );
    const creates = await this.rotatedRounds(
      hosts,
      labels,
      (which, round) => ({
        kind: 'create-access-keys',
        target: reader(which),
        user: 'reader',
        namePrefix: `lim-${round}`,
        concurrency: 64,
        ...half(this.createTiming()),
      }),
      rounds,
    );
    for (const side of sides) await side.host.stop();
    const on = { gets: gets[0] ?? [], creates: creates[0] ?? [] };
    const off = { gets: gets[1] ?? [], creates: creates[1] ?? [] };
    const rows = [
      ['limiter-get', "a plain user's gets of their own User, 32 clients", 'gets', 'gets/s'],
      [
        'limiter-create',
        "a plain user's creates of their own access keys, 64 clients",
        'creates',
        'creates/s',
      ],
    ] as const;
    for (const [id, what, op, unit] of rows) {
      // The verdict is the median of the rounds' ratios (rounds.ts); a round with no
      // figure on a side is left out of it, and a row with none in any round is missed.
      this.add(
        new Row(id, `${what}, overload limiter on (sqlite)`, throughputFigure(sideOverRounds(on[op]), unit))
          .against(
            throughputFigure(sideOverRounds(off[op]), unit),
            'the same with both inflight limits 0 (no limiter)',
          )
          .byRounds(roundRatios(on[op], off[op]))
          .target('>=', 0.9),
      );
    }
  }

  /**
   * Servers side by side taking turns at the job `job(which, round)` builds: two rounds,
   * the second in the other order, each server keeping its best round (a neighbour's
   * burst can only slow a round down, and with turns it falls on both alike). Before
   * every turn all of them settle, so a turn never shares the two cores with what
   * another server has left to do (its start, its seeding, its last turn's writes).
   * Returns each server's best result, in the order of `hosts`.
   */
  private async alternating(
    hosts: readonly Child[],
    labels: readonly string[],
    job: (which: number, round: number) => Job,
  ): Promise<(LoadResult | undefined)[]> {
    const best: (LoadResult | undefined)[] = hosts.map(() => undefined);
    for (let round = 0; round < 2; round++) {
      const order = hosts.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const which of order) {
        const host = hosts[which];
        if (!host) continue;
        const built = job(which, round);
        this.env.log(`bench:   ${built.kind}, ${labels[which] ?? which}, round ${round + 1}`);
        for (const each of hosts) await this.settle(each);
        const result = await this.measured(host, built);
        const kept = best[which];
        best[which] = kept && kept.throughput >= result.throughput ? kept : result;
      }
    }
    return best;
  }

  /**
   * Servers side by side taking turns at the job `job(which, round)` builds, for
   * `rounds` rounds in rotated orders (roundOrder(): every side in every position alike,
   * each of two sides first as often as the other). Before every turn all of them
   * settle, at once, as in alternating(). Returns each server's results by round, in
   * the order of `hosts`: every round's figures count, for a median of round ratios.
   */
  private async rotatedRounds(
    hosts: readonly Child[],
    labels: readonly string[],
    job: (which: number, round: number) => Job,
    rounds: number,
  ): Promise<LoadResult[][]> {
    const results: LoadResult[][] = hosts.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const which of roundOrder(hosts.length, round)) {
        const host = hosts[which] as Child;
        const built = job(which, round);
        this.env.log(`bench:   ${built.kind}, ${labels[which] ?? which}, round ${round + 1} of ${rounds}`);
        await Promise.all(hosts.map((each) => this.settle(each)));
        results[which]?.push(await this.measured(host, built));
      }
    }
    return results;
  }

  /** The plain User `reader` with an access key, once that key works: a target for its requests. */
  private async plainUser(admin: HttpTarget): Promise<HttpTarget> {
    const readerKey = 'r'.repeat(40) + 'benchreaderkey0000000000';
    await this.post(admin, 'users', userBody('reader'));
    await this.post(admin, 'ownedaccesskeys', accessKeyBody('reader-key', 'reader', readerKey));
    const reader: HttpTarget = { origin: admin.origin, token: readerKey };
    await this.waitForKey(reader);
    return reader;
  }

  private async fairQueuingWorkload(): Promise<void> {
    this.env.log(`bench: fair queuing, another user's gets under a ${DEFAULT_FAIRNESS.overload}x flood`);
    const r = await measureFairness({ ...DEFAULT_FAIRNESS, durationMs: this.sizes.durationMs });
    this.add(
      new Row(
        'fair-queuing',
        `another user's get p99 while one user sends ${DEFAULT_FAIRNESS.overload}x capacity`,
        { value: r.flooded.p99Ms, unit: 'ms p99' },
      )
        .against({ value: r.idle.p99Ms, unit: 'ms p99' }, "the same user's get p99 on an idle server")
        .target('<=', 3),
    );
  }

  private add(row: Row): void {
    this.rows.push(row);
    this.env.log(`bench:   ${row.line()}`);
  }

  private async cleanup(): Promise<void> {
    for (const c of this.children.reverse()) await c.stop().catch(() => undefined);
    await this.etcd?.stop().catch(() => undefined);
    await this.plainEtcd?.stop().catch(() => undefined);
    if (!process.env['BENCH_KEEP']) rmSync(this.dir, { recursive: true, force: true });
  }
}

function team(name: string, users: number, teams: number, i: number): Record<string, unknown> {
  const members: string[] = [];
  for (let u = i; u < users; u += teams) members.push(`member-${u}`);
  if (i === 0) members.push('reader');
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name },
    spec: {
      displayName: name,
      description: 'A benchmark team.',
      users: members,
    },
  };
}

function throughputFigure(r: LoadResult, unit: string): Figure {
  return { value: r.throughput, unit, detail: r };
}

function eventsFigure(r: LoadResult): Figure {
  return { value: Number(r.extra?.['eventsPerSecond'] ?? 0), unit: 'events/s', detail: r };
}

function latencyFigure(r: LoadResult, which: 'p50' | 'p99'): Figure {
  return { value: which === 'p50' ? r.latency.p50Ms : r.latency.p99Ms, unit: `ms ${which}`, detail: r };
}

function bytesFigure(bytes: number): Figure {
  return { value: Math.round(bytes), unit: 'bytes' };
}
