// A throwaway etcd cluster of several members on loopback, for the fault suite: each
// member is a hack/etcd.ts instance with fixed ports and a data dir of its own, so a
// member (or all of them) can be SIGKILLed and started again on what it stored, or
// frozen with SIGSTOP, as a crash, a power loss or a partition would leave them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdJson, freePorts, startEtcd } from './etcd.js';
import type { EtcdInstance } from './etcd.js';

interface MemberSpec {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
}

export interface EtcdCluster {
  /** Every member's client URL, in member order (what `--etcd-servers` takes). */
  readonly endpoints: readonly string[];
  /** The index of the member that is the raft leader now (asked of the members over HTTP). */
  leader(): Promise<number>;
  /** SIGKILLs one member (no graceful shutdown: its data dir is left as a crash leaves it). */
  kill(member: number): Promise<void>;
  /** Starts a killed member again on its data dir and ports; resolves once it is healthy. */
  restart(member: number): Promise<void>;
  /** SIGKILLs every member. */
  killAll(): Promise<void>;
  /** Starts every member again together (none is healthy before a quorum is). */
  restartAll(): Promise<void>;
  /** Sends a signal to every running member (SIGSTOP freezes the cluster, SIGCONT thaws it). */
  signalAll(sig: NodeJS.Signals): void;
  /** Stops every member and removes the data dirs. Idempotent. */
  stop(): Promise<void>;
}

const STATUS_TIMEOUT_MS = 2000;

/** Starts a cluster of `size` members (3 unless told) and waits until it has a leader. */
export async function startEtcdCluster(size = 3): Promise<EtcdCluster> {
  const root = mkdtempSync(join(tmpdir(), 'etcd-cluster-'));
  const ports = await freePorts(size * 2);
  const specs: MemberSpec[] = Array.from({ length: size }, (_, i) => ({
    name: `member-${i}`,
    clientPort: ports[2 * i] as number,
    peerPort: ports[2 * i + 1] as number,
    dataDir: join(root, `member-${i}`),
  }));
  const initialCluster = specs.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  const endpoints = specs.map((m) => `http://127.0.0.1:${m.clientPort}`);
  const running: Array<EtcdInstance | undefined> = specs.map(() => undefined);

  const start = async (i: number): Promise<void> => {
    const m = specs[i] as MemberSpec;
    running[i] = await startEtcd({
      name: m.name,
      dataDir: m.dataDir,
      clientPort: m.clientPort,
      peerPort: m.peerPort,
      initialCluster,
      // A member waits for its peers: give the slowest start of a loaded machine room.
      startTimeoutMs: 60_000,
    });
  };
  const kill = async (i: number): Promise<void> => {
    const member = running[i];
    if (member === undefined) return;
    running[i] = undefined;
    member.signal('SIGKILL');
    // The supervisor sees etcd die and exits; stop() then only waits for that.
    await member.stop();
  };
  const stopAll = async (): Promise<void> => {
    await Promise.all(running.map((m) => m?.stop()));
    running.fill(undefined);
  };

  try {
    await Promise.all(specs.map((_, i) => start(i)));
  } catch (err) {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }

  let stopped: Promise<void> | undefined;
  return {
    endpoints,
    async leader() {
      // Each member's status names its own id and the leader's; the leader is the one whose ids agree.
      for (let i = 0; i < size; i++) {
        if (running[i] === undefined) continue;
        try {
          const status = (await etcdJson(
            `${endpoints[i]}/v3/maintenance/status`,
            'POST',
            undefined,
            STATUS_TIMEOUT_MS,
          )) as { header?: { member_id?: string }; leader?: string };
          if (status.leader !== undefined && status.leader === status.header?.member_id) return i;
        } catch {
          // Not answering: not the leader we can use.
        }
      }
      throw new Error('no etcd member reports itself the leader');
    },
    kill,
    restart: start,
    async killAll() {
      await Promise.all(specs.map((_, i) => kill(i)));
    },
    async restartAll() {
      await Promise.all(specs.map((_, i) => (running[i] === undefined ? start(i) : undefined)));
    },
    signalAll(sig) {
      for (const m of running) m?.signal(sig);
    },
    stop() {
      stopped ??= (async () => {
        // A frozen member would not shut down: thaw first.
        for (const m of running) {
          try {
            m?.signal('SIGCONT');
          } catch {
            // Already gone.
          }
        }
        await stopAll();
        rmSync(root, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
