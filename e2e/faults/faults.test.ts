// The fault suite (`npm run test:faults`): real etcd members and real server processes,
// broken the ways production breaks them, under a steady write load and with a watcher
// on every replica. What it asserts, with generous bounds and never speeds:
//
// - 0 acknowledged writes lost: every create answered 201 is readable afterwards at
//   the resourceVersion its answer gave;
// - 0 watch events missed: every watcher saw every acknowledged create exactly once,
//   in resourceVersion order, across its resumes (the definitions are in ledger.ts);
// - no request held over 10 s (HELD_LIMIT_MS): the server answers, even if with 503/504;
// - recovery within 15 s of each fault ending: every replica acknowledges a create again
//   (for a killed server process, from the moment its restart is ready; the restart
//   itself is printed as its own figure).
//
// Faults, in one cluster run: SIGKILL of the etcd leader; all of etcd SIGKILLed and
// down for 15 s, then started on the same data dirs; all of etcd frozen (SIGSTOP) for
// 15 s, then thawed; SIGKILL of one replica, then restarted. Then the embedded SQLite
// server, SIGKILLed three times while writes are in flight and restarted on its data dir.
// The figures are printed as a table before the assertions, so a failure shows them too.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { freePorts } from '../../hack/etcd.js';
import { startEtcdCluster } from '../../hack/etcd-cluster.js';
import { startServer } from '../harness.js';
import type { Backend, TestServer } from '../harness.js';
import { AckLedger } from './ledger.js';
import { ResumingWatcher, TEAMS, Writer } from './load.js';
import { HELD_LIMIT_MS, ReplicaClient, RequestLog } from './replica-client.js';

/** How long an outage lasts (the 15 s). */
const OUTAGE_MS = 15_000;
/** Every replica must acknowledge a create again within this of a fault's end. */
const RECOVERY_LIMIT_MS = 15_000;
/** How long the suite waits to measure a recovery that is late, so its figure is printed. */
const RECOVERY_PATIENCE_MS = 60_000;
/** Normal service between faults, so each fault hits a running load. */
const STEADY_MS = 3000;
const WRITERS_PER_REPLICA = 2;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface PhaseRow {
  fault: string;
  acked: number;
  requests: number;
  failed: number;
  longestMs: number;
  heldOver10s: number;
  /** How long a killed server process took to start again and be ready (process faults only). */
  restartMs?: number;
  recoveryMs: number;
}

interface Replica {
  readonly name: string;
  readonly port: number;
  server: TestServer;
  readonly client: ReplicaClient;
  readonly writers: Writer[];
  readonly watcher: ResumingWatcher;
}

/** One backend's servers under load, and the figures of each fault. */
class Run {
  readonly ledger = new AckLedger();
  readonly log = new RequestLog();
  readonly replicas: Replica[] = [];
  readonly rows: PhaseRow[] = [];
  private ackedBefore = 0;

  constructor(
    readonly backend: Backend,
    readonly dataDir: string,
    private readonly etcdEndpoint?: string,
  ) {}

  start(port: number): Promise<TestServer> {
    return startServer({
      backend: this.backend,
      dataDir: this.dataDir,
      // A fixed port, so a restarted replica is where its clients look for it.
      args: ['--secure-port', String(port)],
      ...(this.etcdEndpoint !== undefined ? { etcdEndpoint: this.etcdEndpoint } : {}),
    });
  }

  async addReplica(name: string, port: number): Promise<Replica> {
    const server = await this.start(port);
    const client = new ReplicaClient({ name, url: server.url, ca: server.ca, token: server.token }, this.log);
    const writers = Array.from(
      { length: WRITERS_PER_REPLICA },
      (_, i) => new Writer(client, this.ledger, `${this.backend}-${name}-w${i}`),
    );
    const watcher = new ResumingWatcher(client, this.log);
    await watcher.start();
    const replica = { name, port, server, client, writers, watcher };
    this.replicas.push(replica);
    return replica;
  }

  startLoad(): void {
    for (const r of this.replicas) for (const w of r.writers) w.start();
  }

  /**
   * Runs one fault: `fault` breaks something and resolves when the fault is over.
   * `restart` starts a killed server process again: its time is Node loading the
   * server's modules and the server starting, which on a loaded machine is mostly a
   * measure of the CPU left over (see docs/operations.md); it is reported as its own
   * figure, and recovery is measured from the moment the restarted process is ready.
   * `recover` (etcd started again, thawed) runs from the fault's end and counts in the
   * recovery; `repair` then restores what the next fault needs.
   */
  async phase(
    name: string,
    steps: {
      fault: () => Promise<void>;
      restart?: () => Promise<void>;
      recover?: () => Promise<void>;
      repair?: () => Promise<void>;
    },
  ): Promise<void> {
    await sleep(STEADY_MS);
    this.log.take();
    await steps.fault();
    const restartStarted = Date.now();
    await steps.restart?.();
    const over = Date.now();
    const [recoveryMs] = await Promise.all([this.recovery(over), steps.recover?.()]);
    await steps.repair?.();
    await sleep(STEADY_MS);
    const requests = this.log.take();
    const acked = this.ledger.creates.length;
    this.rows.push({
      fault: name,
      acked: acked - this.ackedBefore,
      requests: requests.count,
      failed: requests.failed,
      longestMs: requests.maxMs,
      heldOver10s: requests.heldOverLimit,
      ...(steps.restart ? { restartMs: over - restartStarted } : {}),
      recoveryMs,
    });
    this.ackedBefore = acked;
  }

  /** Until every replica acknowledged a create after `since`: the slowest replica's wait (Infinity: none within patience). */
  private async recovery(since: number): Promise<number> {
    const firstAck = (r: Replica): number | undefined => {
      const times = r.writers.map((w) => w.firstAckAfter(since)).filter((t): t is number => t !== undefined);
      return times.length === 0 ? undefined : Math.min(...times);
    };
    const deadline = since + RECOVERY_PATIENCE_MS;
    while (Date.now() < deadline) {
      const acks = this.replicas.map(firstAck);
      if (acks.every((t) => t !== undefined)) return Math.max(...(acks as number[])) - since;
      await sleep(100);
    }
    return Infinity;
  }

  /** Stops the load, waits for the watchers to catch up, and counts what was lost and missed. */
  async finish(): Promise<{ lost: string[]; missed: Map<string, number>; anomalies: string[] }> {
    await Promise.all(this.replicas.flatMap((r) => r.writers.map((w) => w.stop())));
    // The last creates reach the watchers within a moment; a missed one never does.
    const deadline = Date.now() + 30_000;
    while (
      Date.now() < deadline &&
      this.replicas.some((r) => r.watcher.record.missing(this.ledger).length > 0)
    ) {
      await sleep(200);
    }
    const missed = new Map(this.replicas.map((r) => [r.name, r.watcher.record.missing(this.ledger).length]));
    const lost = new Set<string>();
    for (const r of this.replicas) {
      const stored = await this.readAll(r.client);
      for (const c of this.ledger.creates) {
        if (stored.get(c.name) !== c.resourceVersion)
          lost.add(`${c.name}@${c.resourceVersion} (via ${c.via})`);
      }
    }
    const anomalies = this.replicas.flatMap((r) => r.watcher.record.anomalies.map((a) => `${r.name}: ${a}`));
    await Promise.all(this.replicas.map((r) => r.watcher.stop()));
    return { lost: [...lost], missed, anomalies };
  }

  /** Every Team and its resourceVersion, read through one replica (a consistent list). */
  private async readAll(client: ReplicaClient): Promise<Map<string, bigint>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const a = await client.call('GET', TEAMS);
      if (a.status === 200) {
        const items =
          (a.body['items'] as Array<{ metadata: { name: string; resourceVersion: string } }>) ?? [];
        return new Map(items.map((i) => [i.metadata.name, BigInt(i.metadata.resourceVersion)]));
      }
      if (Date.now() > deadline)
        throw new Error(`cannot list teams through ${client.target.name}: ${a.status}`);
      await sleep(500);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.flatMap((r) => [...r.writers.map((w) => w.stop()), r.watcher.stop()]));
    for (const r of this.replicas) {
      r.client.close();
      await r.server.stop().catch(() => undefined);
    }
  }

  report(outcome: { lost: string[]; missed: Map<string, number> }): void {
    const header = [
      'fault',
      'acked writes',
      'requests',
      'failed (5xx, no answer)',
      'longest request',
      'held > 10 s',
      'process restart',
      'recovery',
    ];
    const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    const lines = this.rows.map((r) => [
      r.fault,
      String(r.acked),
      String(r.requests),
      String(r.failed),
      seconds(r.longestMs),
      String(r.heldOver10s),
      r.restartMs === undefined ? '-' : seconds(r.restartMs),
      Number.isFinite(r.recoveryMs) ? seconds(r.recoveryMs) : `none in ${RECOVERY_PATIENCE_MS / 1000} s`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
    const row = (cells: string[]): string =>
      `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
    const out = [
      `\nfault suite (${this.backend}): ${this.ledger.creates.length} acknowledged creates`,
      row(header),
      `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
      ...lines.map(row),
      `lost acknowledged writes: ${outcome.lost.length}`,
      ...this.replicas.map((r) => {
        const f = r.watcher.record.figures();
        return (
          `watcher on ${r.name}: missed ${outcome.missed.get(r.name)}, duplicates ${f.duplicates}, ` +
          `out of order ${f.outOfOrder}, events ${f.events}, resumes ${f.resumes}, lists ${f.lists}`
        );
      }),
      ...(this.log.longest.length > 0 ? ['requests held over 10 s:', ...this.log.longest] : []),
    ];
    console.log(out.join('\n'));
  }

  assertOutcome(outcome: { lost: string[]; missed: Map<string, number>; anomalies: string[] }): void {
    assert.deepEqual(outcome.lost, [], 'acknowledged writes lost');
    for (const r of this.replicas) {
      const f = r.watcher.record.figures();
      assert.equal(outcome.missed.get(r.name), 0, `watch events missed by the watcher on ${r.name}`);
      assert.equal(
        f.duplicates + f.outOfOrder,
        0,
        `watch anomalies on ${r.name}: ${outcome.anomalies.join('; ')}`,
      );
    }
    for (const row of this.rows) {
      // Today's figure for the frozen etcd is printed above; the bound is the issue's, not weakened.
      assert.equal(
        row.heldOver10s,
        0,
        `${row.fault}: requests held over ${HELD_LIMIT_MS} ms (longest ${row.longestMs} ms)`,
      );
      assert.ok(row.recoveryMs <= RECOVERY_LIMIT_MS, `${row.fault}: recovery took ${row.recoveryMs} ms`);
    }
    assert.ok(this.ledger.creates.length > 0, 'the writers got creates acknowledged');
  }
}

test(
  'etcd3: a 3-member etcd and two replicas lose no acknowledged write and no watch event through etcd and replica faults',
  { timeout: 12 * 60_000 },
  async (t) => {
    const cluster = await startEtcdCluster(3);
    const dataDir = mkdtempSync(join(tmpdir(), 'faults-etcd3-'));
    const run = new Run('etcd3', dataDir, cluster.endpoints.join(','));
    // The servers first, while etcd still answers their shutdown; then etcd (thawed
    // first, should a failure have left it frozen); then the data.
    t.after(async () => {
      await run.stop();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const [portA, portB] = (await freePorts(2)) as [number, number];
    // One after the other on the one data dir: the second finds the first's admin
    // kube config, CA and keys, as replicas of one installation share them.
    await run.addReplica('replica-a', portA);
    const b = await run.addReplica('replica-b', portB);
    run.startLoad();

    let killedMember = -1;
    await run.phase('SIGKILL of the etcd leader', {
      fault: async () => {
        killedMember = await cluster.leader();
        await cluster.kill(killedMember);
      },
      // The other two members elect a leader: recovery needs nothing from us.
      repair: () => cluster.restart(killedMember),
    });
    await run.phase('all of etcd down for 15 s', {
      fault: async () => {
        await cluster.killAll();
        await sleep(OUTAGE_MS);
      },
      recover: () => cluster.restartAll(),
    });
    await run.phase('all of etcd frozen for 15 s', {
      fault: async () => {
        cluster.signalAll('SIGSTOP');
        await sleep(OUTAGE_MS);
      },
      recover: async () => cluster.signalAll('SIGCONT'),
    });
    await run.phase('SIGKILL of a replica', {
      fault: () => b.server.kill(),
      restart: async () => {
        b.server = await run.start(b.port);
      },
    });

    const outcome = await run.finish();
    run.report(outcome);
    run.assertOutcome(outcome);
  },
);

test(
  'sqlite: the embedded server SIGKILLed mid-write three times loses no acknowledged write and no watch event',
  { timeout: 6 * 60_000 },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'faults-sqlite-'));
    const run = new Run('sqlite', dataDir);
    t.after(async () => {
      await run.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const [port] = (await freePorts(1)) as [number];
    const only = await run.addReplica('server', port);
    run.startLoad();

    for (let i = 1; i <= 3; i++) {
      await run.phase(`SIGKILL mid-write (${i} of 3)`, {
        fault: async () => {
          // Mid-write: a create is on its way or being answered at the moment of the kill.
          const deadline = Date.now() + 10_000;
          while (only.client.inFlight === 0 && Date.now() < deadline) await sleep(1);
          assert.ok(only.client.inFlight > 0, 'a request is in flight when the server is killed');
          await only.server.kill();
        },
        restart: async () => {
          only.server = await run.start(port);
        },
      });
    }

    const outcome = await run.finish();
    run.report(outcome);
    run.assertOutcome(outcome);
  },
);
