// node dist/hack/bench/profile-summary.js <file.cpuprofile>... [--group package|folder|file] [--top N] [--areas N]
//
// Summarises a V8 CPU profile (from `node --cpu-prof`, BENCH_PROFILE, or the --profile
// option of the focused benches: create-path, etcd-client, fanout-ab, get-path,
// list-path) without opening DevTools:
//   - the sampled time split into busy, idle and the profiler's own (samples under
//     hack/bench/profiler.js: the inspector call that stops the profile is sampled too,
//     seconds of a window, and is no part of the workload), and within busy (program) and GC;
//   - self time by area: this project's code, each npm package, Node's own modules,
//     and V8's pseudo-frames ((gc), (program), (native)); protobufjs's generated codecs
//     (compiled with new Function, so they have no url) get an area of their own;
//   - the top functions by self time (name file:line);
//   - this project's functions by total (inclusive) time;
//   - each sample charged to the nearest frame of this project on its stack: what our
//     code costs including the Node, npm and native work it calls into.
// Percentages are of the busy time (neither idle nor the profiler's own).
//
// --group picks how fine the areas are (the npm areas are one per package at every level):
//   package  project code by top folder (pkg/storage), Node as one area (node:)
//   folder   project code by folder, two levels (pkg/registry/generic), Node by module
//            (node:http2, `internal/` dropped); the default
//   file     project code by file (pkg/storage/etcd3/store.js), Node by full url
// Other scripts can import summariseProfile / formatProfileSummary to print one after profiling.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export interface ProfileNode {
  readonly id: number;
  readonly children?: readonly number[];
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  /** Microseconds before each sample; a profile without them counts every sample as 1 µs. */
  readonly timeDeltas?: readonly number[];
}

export type AreaGrouping = 'package' | 'folder' | 'file';

type CallFrame = ProfileNode['callFrame'];

/** Time in microseconds, sorted most first. */
export type Ranking = readonly (readonly [name: string, us: number])[];

export interface ProfileSummary {
  /** All sampled time, idle included. */
  readonly sampledUs: number;
  readonly idleUs: number;
  /** Samples with hack/bench/profiler.js on the stack: capturing the profile, not the workload. */
  readonly profilerUs: number;
  /** Sampled minus idle and the profiler's own: the denominator of every share. */
  readonly busyUs: number;
  /** V8's "(program)": native VM work not attributed to a JS function. */
  readonly programUs: number;
  readonly gcUs: number;
  readonly selfByArea: Ranking;
  readonly selfByFunction: Ranking;
  /** Functions of this project, each counted once per sample it is on the stack of. */
  readonly totalByProjectFunction: Ranking;
  /** Every busy sample charged to the nearest project frame of its stack (or "(no project frame)"). */
  readonly byNearestProjectFrame: Ranking;
}

export const NO_PROJECT_FRAME = '(no project frame)';

// This project's compiled code: dist/ of this tree or of a baseline build elsewhere
// (create-path/get-path --baseline /tmp/x/dist), never a package's own dist/.
const PROJECT = /\/dist\/((?:pkg|hack|cmd|e2e)\/.*)$/;
const PACKAGE = /node_modules\/((?:@[^/]+\/)?[^/]+)/;
// The in-process capture of hack/bench/profiler.ts (server-host, bare-server, create-path).
const CAPTURE = /\/dist\/hack\/bench\/profiler\.js$/;

/** The path under dist/ of a project frame, or undefined for any other code. */
function projectPathOf(url: string): string | undefined {
  if (PACKAGE.test(url)) return undefined;
  return PROJECT.exec(url)?.[1];
}

/** Where a frame's code lives, at the grain the grouping asks for. */
export function areaOf(frame: CallFrame, grouping: AreaGrouping = 'folder'): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(root)')
      return functionName;
    // protobufjs compiles its codecs at run time: no url, names like TxnResponse$decode.
    if (functionName.includes('$')) return 'npm protobufjs (generated codecs)';
    return '(native)';
  }
  const own = projectPathOf(url);
  if (own !== undefined) {
    const folders = own.split('/').slice(0, -1);
    if (grouping === 'file') return own;
    return folders.slice(0, grouping === 'package' ? 2 : 3).join('/');
  }
  const pkg = PACKAGE.exec(url);
  if (pkg) return `npm ${pkg[1] ?? ''}`;
  if (url.startsWith('node:')) {
    if (grouping === 'file') return url;
    if (grouping === 'package') return 'node:';
    return url.replace(/^node:(internal\/)?/, 'node:').split('/')[0] ?? url;
  }
  return url;
}

/**
 * A function's name with where it is: `name pkg/storage/x.js:12`, paths shortened past
 * dist/ and node_modules/; `name (native)` for V8's builtins, V8's pseudo-frames as named.
 */
function functionOf(frame: CallFrame): string {
  if (frame.url === '')
    return /^\(.*\)$/.test(frame.functionName)
      ? frame.functionName
      : `${frame.functionName || '(anonymous)'} (native)`;
  const where = frame.url.replace(/^.*\/(dist|node_modules)\//, '');
  return `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
}

function add(map: Map<string, number>, key: string, us: number): void {
  map.set(key, (map.get(key) ?? 0) + us);
}

function rank(map: Map<string, number>): Ranking {
  return [...map].sort((a, b) => b[1] - a[1]);
}

export function summariseProfile(profile: CpuProfile, grouping: AreaGrouping = 'folder'): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node) stack.push(node);
    }
    return stack;
  };

  const selfByArea = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const totalByProjectFunction = new Map<string, number>();
  const byNearestProjectFrame = new Map<string, number>();
  let sampledUs = 0;
  let idleUs = 0;
  let profilerUs = 0;
  let programUs = 0;
  let gcUs = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const us = profile.timeDeltas ? Math.max(0, profile.timeDeltas[i] ?? 0) : 1;
    sampledUs += us;
    const area = areaOf(node.callFrame, grouping);
    if (area === '(idle)') {
      idleUs += us;
      return;
    }
    const stack = stackOf(id);
    if (stack.some((n) => CAPTURE.test(n.callFrame.url))) {
      profilerUs += us;
      return;
    }
    if (area === '(program)') programUs += us;
    if (area === '(gc)') gcUs += us;
    add(selfByArea, area, us);
    add(selfByFunction, functionOf(node.callFrame), us);
    const ownOnStack = stack.filter((n) => projectPathOf(n.callFrame.url) !== undefined);
    // A recursive function counts once per sample, so no total exceeds 100%.
    for (const name of new Set(ownOnStack.map((n) => functionOf(n.callFrame))))
      add(totalByProjectFunction, name, us);
    const nearest = ownOnStack[0];
    add(byNearestProjectFrame, nearest ? functionOf(nearest.callFrame) : NO_PROJECT_FRAME, us);
  });
  return {
    sampledUs,
    idleUs,
    profilerUs,
    busyUs: sampledUs - idleUs - profilerUs,
    programUs,
    gcUs,
    selfByArea: rank(selfByArea),
    selfByFunction: rank(selfByFunction),
    totalByProjectFunction: rank(totalByProjectFunction),
    byNearestProjectFrame: rank(byNearestProjectFrame),
  };
}

export interface FormatOptions {
  /** Rows of each function table. */
  readonly top: number;
  /** Rows of the area table. */
  readonly areas: number;
}

/** The summary as readable lines: shares of busy time beside milliseconds. */
export function formatProfileSummary(s: ProfileSummary, options: FormatOptions): string[] {
  const ms = (us: number): string => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const pct = (us: number): string => `${((100 * us) / Math.max(1, s.busyUs)).toFixed(1).padStart(5)}%`;
  const table = (title: string, rows: Ranking, limit: number): string[] => [
    '',
    title,
    ...rows.slice(0, limit).map(([name, us]) => `  ${pct(us)} ${ms(us)}  ${name}`),
  ];
  return [
    `sampled ${(s.sampledUs / 1000).toFixed(0)} ms: busy ${(s.busyUs / 1000).toFixed(0)} ms, ` +
      `idle ${(s.idleUs / 1000).toFixed(0)} ms, profiler's own ${(s.profilerUs / 1000).toFixed(0)} ms; of busy: (program) ${pct(s.programUs).trim()}, ` +
      `GC ${pct(s.gcUs).trim()}`,
    ...table('self time by area', s.selfByArea, options.areas),
    ...table(`top ${options.top} functions by self time`, s.selfByFunction, options.top),
    ...table(
      `top ${options.top} functions of this project by total time`,
      s.totalByProjectFunction,
      options.top,
    ),
    ...table(
      `top ${options.top} functions of this project, with the Node, npm and native work they call`,
      s.byNearestProjectFrame,
      options.top,
    ),
  ];
}

const GROUPINGS: readonly AreaGrouping[] = ['package', 'folder', 'file'];

function main(): void {
  const usage =
    'usage: profile-summary.js <file.cpuprofile>... [--group package|folder|file] [--top N] [--areas N]';
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      group: { type: 'string', default: 'folder' },
      top: { type: 'string', default: '25' },
      areas: { type: 'string', default: '30' },
    },
  });
  const grouping = GROUPINGS.find((g) => g === values.group);
  const top = Number(values.top);
  const areas = Number(values.areas);
  if (positionals.length === 0 || !grouping || !(top > 0) || !(areas > 0)) {
    console.error(usage);
    process.exitCode = 2;
    return;
  }
  positionals.forEach((file, i) => {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    if (i > 0) console.log('');
    console.log(file);
    for (const line of formatProfileSummary(summariseProfile(profile, grouping), { top, areas }))
      console.log(line);
  });
}

if (process.argv[1]?.endsWith('profile-summary.js')) main();
