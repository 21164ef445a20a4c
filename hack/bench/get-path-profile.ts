// node dist/hack/bench/get-path-profile.js FILE.cpuprofile [--top N]
//
// Summarises a V8 CPU profile (as get-path.ts --profile or BENCH_PROFILE write) by
// self time: the top functions, and the busy time split by where the code lives (this
// project's folders, each npm package, Node's own modules, GC, V8's native code), as
// docs/performance.md quotes it. Percentages are of the busy (non-idle) samples.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly children?: readonly number[];
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

/** Where a frame's code lives: a project folder, an npm package, Node, or V8 itself. */
export function placeOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(idle)' || functionName === '(program)') return functionName;
    return '(native)';
  }
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/')[0] ?? url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm ${pkg[1]}`;
  const own = /\/dist\/((?:pkg|hack|cmd)\/[^/]+(?:\/[^/.]+(?=\/))?)/.exec(url);
  if (own) return own[1] ?? url;
  return url;
}

export function summarise(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const totalByFunction = new Map<string, number>();
  // Each sample charged to the nearest function of this project on its stack: what our
  // code costs including the Node and native work it calls into.
  const byNearestOwn = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const selfByPlace = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (!node) continue;
    const place = placeOf(node.callFrame);
    if (place === '(idle)') continue;
    busy++;
    const name = nameOf(node);
    selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + 1);
    // Total (inclusive) time: each function on the sampled stack once.
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at);
      if (frame) onStack.add(nameOf(frame));
    }
    for (const f of onStack) totalByFunction.set(f, (totalByFunction.get(f) ?? 0) + 1);
    let nearest = '(no project frame)';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at);
      if (frame && OWN.test(nameOf(frame))) {
        nearest = nameOf(frame);
        break;
      }
    }
    byNearestOwn.set(nearest, (byNearestOwn.get(nearest) ?? 0) + 1);
    selfByPlace.set(place, (selfByPlace.get(place) ?? 0) + 1);
  }
  const pct = (n: number): string => `${((n / Math.max(1, busy)) * 100).toFixed(1).padStart(5)}%`;
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `busy samples: ${busy}`,
    'self time by place:',
    ...sorted(selfByPlace).map(([k, v]) => `  ${pct(v)}  ${k}`),
    `top ${top} functions by self time:`,
    ...sorted(selfByFunction)
      .slice(0, top)
      .map(([k, v]) => `  ${pct(v)}  ${k}`),
    `top ${top} functions by total time (this project's only):`,
    ...sorted(totalByFunction)
      .filter(([k]) => OWN.test(k))
      .slice(0, top)
      .map(([k, v]) => `  ${pct(v)}  ${k}`),
    `top ${top} functions of this project, with the Node and native work they call:`,
    ...sorted(byNearestOwn)
      .slice(0, top)
      .map(([k, v]) => `  ${pct(v)}  ${k}`),
  ];
}

const OWN = /^\S+ (pkg|hack|cmd)\//;

function nameOf(node: ProfileNode): string {
  const f = node.callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/dist\//, '')}:${f.lineNumber + 1}`;
}

if (process.argv[1]?.endsWith('get-path-profile.js')) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '40' } },
  });
  for (const file of positionals) {
    console.log(file);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    for (const line of summarise(profile, Number(values.top))) console.log(line);
  }
}
