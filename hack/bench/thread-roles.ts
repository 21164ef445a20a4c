// Which OS threads of a Node process are which, for hack/bench/thread-cpu.ts. Node 20
// names none of its threads (every /proc/<pid>/task/<tid>/comm reads "node"), so the
// roles are found another way:
// - the main thread (the event loop, JavaScript) is the thread whose id is the pid;
// - libuv's thread pool (fs, dns.lookup, async crypto, zlib) is the set of threads
//   that spend CPU while the pool alone works: as many PBKDF2 hashes as the pool has
//   threads are queued at once, each long enough (~0.3 s) that every pool thread takes
//   one, and the threads whose CPU time grew by most of that meanwhile are the pool's
//   (the main thread only waits; V8's threads spend next to nothing). Asked while the
//   server idles;
// - every other thread is V8's platform (the background compiler, concurrent marking,
//   parallel scavenge and sweeping, run by Node's platform workers and its delayed-task
//   scheduler): the server starts no worker_threads, and Node's inspector thread runs
//   only while a profiler is on.
// Runs in the measured process (server-host.ts answers `{ threads: true }` with it).

import { pbkdf2 } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';

export interface ThreadRoles {
  readonly pid: number;
  /** libuv thread pool thread ids (UV_THREADPOOL_SIZE of them, 4 unless set). */
  readonly pool: readonly number[];
}

/** USER_HZ: the unit of utime and stime in /proc/<pid>/task/<tid>/stat. */
const TICK_MS = 10;

function ticksByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(name), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The thread ended while being read.
    }
  }
  return out;
}

export async function threadRoles(): Promise<ThreadRoles> {
  const size = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const hash = promisify(pbkdf2);
  // Calibrate one hash to ~300 ms on this machine (one run on the pool).
  const probe = 20_000;
  const t0 = performance.now();
  await hash('x', 'y', probe, 32, 'sha256');
  const iterations = Math.max(probe, Math.round((probe * 300) / Math.max(1, performance.now() - t0)));
  const before = ticksByThread();
  await Promise.all(Array.from({ length: size }, () => hash('x', 'y', iterations, 32, 'sha256')));
  const after = ticksByThread();
  const grown = [...after]
    .filter(([tid]) => tid !== process.pid)
    .map(([tid, ticks]) => ({ tid, ms: (ticks - (before.get(tid) ?? 0)) * TICK_MS }))
    .sort((a, b) => b.ms - a.ms);
  // The pool's threads each spent about one hash's CPU (~300 ms on an idle machine, less
  // when the calibration's wall time was stretched by other load); the others next to
  // nothing: the threads within a third of the busiest.
  const busiest = grown[0]?.ms ?? 0;
  const pool = grown
    .slice(0, size)
    .filter((t) => t.ms >= 30 && t.ms >= busiest / 3)
    .map((t) => t.tid);
  return { pid: process.pid, pool: pool.sort((a, b) => a - b) };
}
