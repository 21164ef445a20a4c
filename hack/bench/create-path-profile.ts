// node dist/hack/bench/create-path-profile.js <file.cpuprofile> [--top N]
//
// Summarises a V8 .cpuprofile (as create-path.ts --profile writes) by self time:
// the share of each area (a node_modules package, a folder of this project, Node's
// internals, GC, idle) and the top functions. Enough to read a profile's split
// without opening DevTools.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a frame's code lives: a package, a folder of ours (two levels), node internals or a V8 pseudo-frame. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `npm:${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '')}`;
  }
  if (url.startsWith('node:')) return url.split('/')[0] ?? url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) {
    const parts = url.slice(dist + '/dist/'.length).split('/');
    return parts.length > 3 ? parts.slice(0, 3).join('/') : parts.slice(0, -1).join('/');
  }
  return url;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (file === undefined) throw new Error('usage: create-path-profile.js <file.cpuprofile> [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const areas = new Map<string, number>();
const functions = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of self) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  if (frame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  total += us;
  const area = areaOf(frame.url, frame.functionName);
  areas.set(area, (areas.get(area) ?? 0) + us);
  const where = frame.url
    ? `${frame.url.replace(/^.*\/(dist|node_modules)\//, '')}:${frame.lineNumber + 1}`
    : '';
  const name = `${frame.functionName || '(anonymous)'} ${where}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
}
const pct = (us: number): string => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
console.log(`busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`);
console.log('\nby area (self time)');
for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`${pct(us)}  ${area}`);
console.log('\ntop functions (self time)');
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`${pct(us)}  ${name}`);
}
