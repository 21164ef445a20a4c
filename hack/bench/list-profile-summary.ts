// node dist/hack/bench/list-profile-summary.js <file.cpuprofile> [top]
//
// Summarises a V8 CPU profile (from list-path.ts --profile, or BENCH_PROFILE) by self
// time: the top functions (name, file:line) and the share of busy time per module
// (this project's files by path under dist/, node_modules by package, Node's own
// internals as "node:"), idle and GC apart. Written for the list path; works for any profile.

import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function moduleOf(url: string, name: string): string {
  if (name === '(garbage collector)') return '(gc)';
  if (name === '(program)' || name === '(idle)') return name;
  if (url.startsWith('node:')) return 'node:';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0)
    return url
      .slice(nm + 13)
      .split('/')
      .slice(0, url.slice(nm + 13).startsWith('@') ? 2 : 1)
      .join('/');
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 6);
  return url === '' ? '(native)' : url;
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: list-profile-summary <file.cpuprofile> [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfByFn = new Map<string, number>();
const selfByModule = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, i) => {
  const node = byId.get(id);
  if (!node) return;
  const dt = profile.timeDeltas[i] ?? 0;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(idle)') return;
  busy += dt;
  const fn = `${functionName || '(anonymous)'} ${moduleOf(url, functionName)}:${lineNumber + 1}`;
  selfByFn.set(fn, (selfByFn.get(fn) ?? 0) + dt);
  const mod = moduleOf(url, functionName);
  selfByModule.set(mod, (selfByModule.get(mod) ?? 0) + dt);
});
const show = (title: string, m: Map<string, number>, top: number): void => {
  console.log(title);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`,
    );
  }
};
console.log(`busy ${(busy / 1000).toFixed(0)} ms`);
show('self time by function', selfByFn, Number(topArg ?? 25));
show('self time by module', selfByModule, 20);
