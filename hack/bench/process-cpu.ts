// CPU time of another process on this machine, from Linux's /proc: what a bench
// reads for a process it cannot ask (etcd), where its own children answer
// process.cpuUsage() themselves.

import { readdirSync, readFileSync } from 'node:fs';
import { childProcesses } from '../etcd.js';

/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat on Linux. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) `pid` has used so far, in µs (10 ms resolution). */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * The etcd processes this process started through hack/etcd.ts (each runs under a
 * supervisor shell that is a child of this process), by pid.
 */
export function etcdPidsOfThisProcess(): number[] {
  const pids: number[] = [];
  for (const supervisor of childProcesses(process.pid)) {
    for (const child of childProcesses(supervisor.pid)) if (child.command === 'etcd') pids.push(child.pid);
  }
  return pids;
}

/**
 * CPU time (user + system, µs, 10 ms resolution) of `pid`'s main thread and of all its
 * other threads together, so far. Node 20 names every thread "node", so /proc cannot
 * tell V8's platform threads (the GC's parallel and concurrent tasks, the optimising
 * compiler) from libuv's pool; in the server under gets the pool's share is ~1 µs a
 * get (its threads listed by id once: "The get path, sixth pass"), so the rest is V8's.
 * Those threads count in the process's process.cpuUsage(), but no CPU profile of the
 * main thread shows them.
 */
export function threadCpuMicros(pid: number): { main: number; others: number } {
  const out = { main: 0, others: 0 };
  for (const [tid, micros] of cpuByThread(pid)) {
    if (tid === pid) out.main += micros;
    else out.others += micros;
  }
  return out;
}

/** CPU time (user + system, µs, 10 ms resolution) of each thread of `pid` so far, by thread id. */
export function cpuByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}
