// CPU time of another process on this machine, from Linux's /proc: what a bench
// reads for a process it cannot ask (etcd), where its own children answer
// process.cpuUsage() themselves.

import { readFileSync } from 'node:fs';
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
