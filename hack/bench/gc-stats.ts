// Garbage collections and heap sizes of a child process, for telling apart two servers
// whose CPU per request differs (a larger old space makes each scavenge dearer): the
// number and total pause of each kind of collection since the first call, and V8's
// heap statistics now. Installed on first use, so processes that never ask pay nothing.

import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

export interface GcStats {
  /** Collections since the observer was installed, by kind (scavenge, mark-sweep, ...). */
  readonly counts: Record<string, number>;
  /** Their summed duration in ms, by kind. */
  readonly ms: Record<string, number>;
  readonly usedHeapBytes: number;
  readonly totalHeapBytes: number;
  /** Each V8 heap space's used bytes (new_space, old_space, ...). */
  readonly spaces: Record<string, number>;
  /** The young generation's current capacity (new_space's size): V8 grows and shrinks it. */
  readonly newSpaceBytes: number;
  /**
   * One semi-space's capacity (new_space's used + available bytes): what the young
   * generation holds between scavenges. newSpaceBytes counts both semi-spaces once the
   * second is committed, so it reads twice this after the first scavenge.
   */
  readonly semiSpaceBytes: number;
  /**
   * The duration (ms) of every collection since the previous call, of any kind, in
   * order: the main thread's pause for each (what a request waiting behind it sees),
   * for a window's longest pause and its percentiles. Drained by each call.
   */
  readonly pausesMs: readonly number[];
}

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-sweep',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};

const counts: Record<string, number> = {};
const ms: Record<string, number> = {};
let pauses: number[] = [];
let observer: PerformanceObserver | undefined;

export function gcStats(): GcStats {
  if (!observer) {
    observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail;
        const kind = KINDS[detail?.kind ?? -1] ?? 'other';
        counts[kind] = (counts[kind] ?? 0) + 1;
        ms[kind] = (ms[kind] ?? 0) + entry.duration;
        pauses.push(entry.duration);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  const heap = getHeapStatistics();
  const spaces: Record<string, number> = {};
  let newSpaceBytes = 0;
  let semiSpaceBytes = 0;
  for (const s of getHeapSpaceStatistics()) {
    spaces[s.space_name] = s.space_used_size;
    if (s.space_name === 'new_space') {
      newSpaceBytes = s.space_size;
      semiSpaceBytes = s.space_used_size + s.space_available_size;
    }
  }
  const pausesMs = pauses;
  pauses = [];
  return {
    counts: { ...counts },
    ms: { ...ms },
    usedHeapBytes: heap.used_heap_size,
    totalHeapBytes: heap.total_heap_size,
    spaces,
    newSpaceBytes,
    semiSpaceBytes,
    pausesMs,
  };
}
