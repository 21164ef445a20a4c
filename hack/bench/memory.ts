// A process's memory after a full collection (the process runs with --expose-gc).

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
