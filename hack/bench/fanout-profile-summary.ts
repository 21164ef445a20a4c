// node dist/hack/bench/fanout-profile-summary.js FILE.cpuprofile [--top N]
//
// Summarises a V8 .cpuprofile (from `node --cpu-prof`, BENCH_PROFILE or
// fanout-ab.ts --profile) by self time: the top functions (name, file:line), and the
// share of each module group: this project's code by directory (pkg/...), node:
// internals by module (node:_http_outgoing, node:_tls_wrap ...), native and GC.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The group a frame's self time counts toward. */
function groupOf(url: string, name: string): string {
  if (url === '') return `(${name || 'anonymous native'})`;
  const project =
    /\/dist\/(pkg\/[^/]+(?:\/[^/]+)?)\//.exec(url) ?? /\/dist\/((?:pkg|hack|cmd)\/[^/]+)/.exec(url);
  if (project) return project[1] ?? url;
  if (url.startsWith('node:')) return url;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  return dep ? `npm:${dep[1] ?? ''}` : url;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: fanout-profile-summary FILE.cpuprofile [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfByFrame = new Map<string, number>();
const selfByGroup = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const node = byId.get(id);
  if (!node) return;
  const { functionName, url, lineNumber } = node.callFrame;
  total += dt;
  const frame = `${functionName || '(anonymous)'} ${url.replace(/^.*\/dist\//, '')}:${lineNumber + 1}`;
  selfByFrame.set(frame, (selfByFrame.get(frame) ?? 0) + dt);
  const group = groupOf(url, functionName);
  selfByGroup.set(group, (selfByGroup.get(group) ?? 0) + dt);
});
const pct = (us: number): string => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const top = Number(values.top);
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
console.log('\nself time by group:');
for (const [g, us] of [...selfByGroup].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${g}`);
console.log('\nself time by function:');
for (const [f, us] of [...selfByFrame].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${f}`);
