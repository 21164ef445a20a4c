// node dist/hack/bench/etcd-client-profile.js FILE.cpuprofile [--top N]
//
// A .cpuprofile summarised by where its self time goes: by package (etcd3,
// @grpc/grpc-js, protobufjs, cockatiel, ...), by this project's modules, by Node's
// own (node:...), and the N functions with the most self time. Made to read the
// profiles hack/bench/etcd-client.ts writes (--profile), but any profile works.

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

/** Where a function lives: a package, one of our modules, Node's own, or the VM. */
function placeOf(url: string, functionName: string): string {
  // protobufjs compiles its codecs with new Function: they have no url, and names like TxnResponse$decode.
  if (url === '')
    return functionName.includes('$') ? 'protobufjs (generated codecs)' : '(vm: gc, program, natives)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return url.split('/')[0] as string;
  const ours = /\/dist\/(.*)$/.exec(url);
  return ours ? (ours[1] as string) : url;
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '15' } },
});
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  let idle = 0;
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const place = placeOf(url, functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const print = (title: string, rows: Map<string, number>, top: number): void => {
    console.log(`  ${title}`);
    for (const [name, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`    ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
    }
  };
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle`);
  print('self time by package / module', byPlace, 20);
  print('self time by function', byFunction, Number(values.top));
}
