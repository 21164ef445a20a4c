// What a window of a child's run allocates, by function: V8's sampling heap profiler
// over the inspector, counting every sampled allocation, also those the collector has
// freed by the end (a request's garbage is what makes scavenges). `start`, run the
// load, then `stop` answers the sampled bytes in all and by allocating function.

import { Session } from 'node:inspector';

export type AllocationCommand = { start: true } | { stop: true };

export interface AllocationSummary {
  /** Sampled bytes allocated in the window (an estimate: one sample per ~512 bytes). */
  readonly totalBytes: number;
  /** `name file:line` and its bytes, most first. */
  readonly byFunction: readonly (readonly [string, number])[];
}

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

let session: Session | undefined;

const post = (s: Session, method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => s.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));

/** Names as profile-summary.ts does: the function, then the path under dist/ or the module. */
function nameOf(frame: SamplingNode['callFrame']): string {
  const url = frame.url.replace(/^file:\/\//, '').replace(/^.*\/dist\//, '').replace(/^.*node_modules\//, '');
  return `${frame.functionName || '(anonymous)'} ${url || '(native)'}${url ? `:${frame.lineNumber + 1}` : ''}`;
}

export async function allocationProfile(command: AllocationCommand): Promise<AllocationSummary> {
  if ('start' in command) {
    session = new Session();
    session.connect();
    await post(session, 'HeapProfiler.enable');
    await post(session, 'HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return { totalBytes: 0, byFunction: [] };
  }
  if (!session) return { totalBytes: 0, byFunction: [] };
  const { profile } = (await post(session, 'HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
  session.disconnect();
  session = undefined;
  const bytes = new Map<string, number>();
  let totalBytes = 0;
  const walk = (node: SamplingNode): void => {
    if (node.selfSize > 0) {
      const name = nameOf(node.callFrame);
      bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
      totalBytes += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { totalBytes, byFunction: [...bytes.entries()].sort((a, b) => b[1] - a[1]) };
}
