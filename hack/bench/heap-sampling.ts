// What a window of a child's run allocates, and where (issue 17's get path, fourth
// pass: "measure allocation per request"). `start` turns on V8's sampling heap
// profiler with the objects later collected by a scavenge or a mark-sweep kept in the
// profile (so it counts everything allocated, not what survived); `stop` summarises
// the window: the estimated bytes and objects allocated, the top allocation sites by
// function, and each sample charged to the nearest frame of this project (what our
// code allocates, including what the Node or npm code it calls allocates for it).
//
// The profiler samples about one allocation every `intervalBytes` bytes and scales
// each site's bytes back up (V8's estimate, unbiased for bytes: checked against
// `--trace-gc-nvp`'s "allocated" to within a few percent on a synthetic loop). The
// object count is the same estimate per sample (a sample of `size` bytes stands for
// 1 / (1 - e^(-size / interval)) objects): less exact for small objects under
// allocation folding, so read it as an order of magnitude and compare like with like.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

export type HeapSamplingCommand = { start: { intervalBytes: number } } | { stop: { topSites: number } };

export interface AllocationSite {
  readonly site: string;
  readonly bytes: number;
}

export interface AllocationSummary {
  readonly bytes: number;
  readonly objects: number;
  readonly samples: number;
  /** By the allocating function (self), largest first. */
  readonly bySite: readonly AllocationSite[];
  /** By the nearest frame of this project's code on the allocating stack. */
  readonly byProjectFrame: readonly AllocationSite[];
}

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

interface SamplingProfile {
  readonly head: ProfileNode;
  readonly samples: readonly { readonly size: number; readonly nodeId: number }[];
}

let session: Session | undefined;
let interval = 0;

function post(s: Session, method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) =>
    s.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
  );
}

/** `file:line` relative to the build (dist/…) or to node_modules, or the Node module's name. */
function where(frame: CallFrame): string {
  const url = frame.url;
  const cut = Math.max(url.lastIndexOf('/dist/'), url.lastIndexOf('/node_modules/'));
  const file = cut >= 0 ? url.slice(url.indexOf('/', cut + 1) + 1) : url.replace(/^file:\/\//, '');
  return `${frame.functionName || '(anonymous)'} ${file || '(native)'}:${frame.lineNumber + 1}`;
}

/** This project's code: the build's own folders, not node_modules or Node's internals. */
const ours = (frame: CallFrame): boolean =>
  frame.url.includes('/dist/') && !frame.url.includes('/node_modules/') && !frame.url.includes('/hack/bench/');

const top = (m: Map<string, number>, n: number): AllocationSite[] =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([site, bytes]) => ({ site, bytes }));

export function summarise(profile: SamplingProfile, intervalBytes: number, topSites: number): AllocationSummary {
  const bySite = new Map<string, number>();
  const byProject = new Map<string, number>();
  let bytes = 0;
  // Walk with the nearest project frame above each node carried down.
  const stack: { node: ProfileNode; project: string }[] = [{ node: profile.head, project: '(no project frame)' }];
  while (stack.length > 0) {
    const { node, project } = stack.pop()!;
    const here = ours(node.callFrame) ? where(node.callFrame) : project;
    if (node.selfSize > 0) {
      bytes += node.selfSize;
      const site = where(node.callFrame);
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      byProject.set(here, (byProject.get(here) ?? 0) + node.selfSize);
    }
    for (const child of node.children) stack.push({ node: child, project: here });
  }
  let objects = 0;
  for (const s of profile.samples) objects += 1 / (1 - Math.exp(-s.size / intervalBytes));
  return {
    bytes,
    objects,
    samples: profile.samples.length,
    bySite: top(bySite, topSites),
    byProjectFrame: top(byProject, topSites),
  };
}

export async function heapSampling(command: HeapSamplingCommand): Promise<AllocationSummary | object> {
  if ('start' in command) {
    session = new Session();
    session.connect();
    interval = command.start.intervalBytes;
    await post(session, 'HeapProfiler.enable');
    await post(session, 'HeapProfiler.startSampling', {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return {};
  }
  if (!session) throw new Error('heap sampling was not started');
  const { profile } = (await post(session, 'HeapProfiler.stopSampling')) as { profile: SamplingProfile };
  await post(session, 'HeapProfiler.disable');
  session.disconnect();
  session = undefined;
  // The whole profile too, for stacks the summary leaves out (open it in DevTools'
  // Memory tab, or read it with a script): HEAP_SAMPLING_DUMP=<dir>.
  const dumpDir = process.env.HEAP_SAMPLING_DUMP;
  if (dumpDir) writeFileSync(join(dumpDir, `heap-${process.pid}-${Date.now()}.heapprofile`), JSON.stringify(profile));
  return summarise(profile, interval, command.stop.topSites);
}
