// A process's memory after a full collection (the process runs with --expose-gc), and
// its heap snapshot.

import { writeHeapSnapshot } from 'node:v8';

export interface MemoryUsage {
  readonly heapUsed: number;
  readonly rss: number;
  readonly external: number;
}

export function memory(): MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, rss: m.rss, external: m.external };
}

/** Writes a heap snapshot of this process (V8 collects garbage first) to `file`. */
export function heapSnapshot(file: string): { file: string } {
  return { file: writeHeapSnapshot(file) };
}
