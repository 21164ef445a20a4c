// node dist/hack/bench/create-profile-areas.js <file.cpuprofile>...
//
// Splits a CPU profile of a server answering creates (create-https.js --profile, or
// BENCH_PROFILE with the harness's create rows) by what a create does: Node's HTTPS
// server, authentication, the request's decode, admission and validation, the field
// manager, the registry, storage's encode, the etcd transport (unary calls on
// node:http2), the two watch streams a create wakes (the resource's cache, and the
// write-order watch of etcd < 3.4.31), the response's encode and write,
// metrics/audit/log, GC and the VM. Each busy sample goes to the area of the
// innermost frame on its stack that names one (so Node's and npm's work counts for
// the project code that called it), samples with no such frame to the area of their
// leaf (Node's HTTP server, grpc-js, GC, (program), native). Shares are of the busy
// time (idle and the profiler's own stop left out), as profile-summary.js counts it.
// Wall-weighted like every V8 profile: on a busy machine the small areas are blurred;
// read the large ones.

import { readFileSync } from 'node:fs';
import type { CpuProfile, ProfileNode } from './profile-summary.js';

type CallFrame = ProfileNode['callFrame'];

/** [area, test on a frame]; the first rule that matches a frame names its area. */
const RULES: readonly (readonly [string, (f: CallFrame) => boolean])[] = [
  ['watch: the write-order watch', (f) => f.url.includes('/cacher/global-progress.')],
  [
    'watch: the cache applies the event',
    (f) => f.url.includes('/storage/cacher/') && f.functionName !== 'create',
  ],
  [
    'watch: stream and decode',
    (f) => f.url.includes('/storage/etcd3/watch.') || f.url.includes('@grpc/grpc-js'),
  ],
  ['etcd transport (node:http2 unary)', (f) => f.url.includes('/storage/etcd3/http2-unary.')],
  ['etcd codecs and KV', (f) => f.url.includes('/storage/etcd3/')],
  ['storage encode/decode', (f) => f.url.includes('/pkg/storage/codec.')],
  ['storage layers (metrics, deadline, bounds)', (f) => f.url.includes('/pkg/storage/')],
  [
    'field manager (managedFields)',
    (f) => f.url.includes('/registry/fieldmanager/') || f.url.includes('/generic/managed-fields.'),
  ],
  ['validation and schema', (f) => f.url.includes('/apis/schema/') || f.url.includes('validation.')],
  ['admission', (f) => f.url.includes('/admission/')],
  [
    'registry (create, copies, defaults)',
    (f) => f.url.includes('/pkg/registry/') || f.url.includes('/pkg/util/plain-copy.'),
  ],
  [
    'authentication',
    (f) =>
      f.url.includes('/pkg/authentication/') ||
      f.url.includes('/pkg/identity/') ||
      f.url.includes('owned-access-key.'),
  ],
  [
    'metrics, audit, log',
    (f) => /\/pkg\/(audit|util\/log|metrics)\/|filters\/(metrics|audit)\.|prom-client|pino/.test(f.url),
  ],
  ['response encode and write', (f) => f.url.includes('/apiserver/responses.')],
  [
    'request body read and decode',
    (f) => f.url.includes('/apiserver/body.') || f.url.includes('/apiserver/json-scan.'),
  ],
  [
    'flow control and max-inflight',
    (f) => f.url.includes('/util/flowcontrol/') || f.url.includes('max-inflight.'),
  ],
  [
    'request path (routing, scope, negotiation)',
    (f) => f.url.includes('/pkg/apiserver/') || f.url.includes('/pkg/server/'),
  ],
];

function leafArea(f: CallFrame): string {
  if (f.functionName === '(garbage collector)') return 'GC';
  if (f.functionName === '(program)') return '(program)';
  if (f.url.startsWith('node:') || f.url === '')
    return "Node's HTTPS server, TLS, streams and native (no project frame)";
  return 'other';
}

function split(profile: CpuProfile): { busyUs: number; areas: Map<string, number> } {
  const byId = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areaOfNode = new Map<number, string | null>();
  const areaOf = (id: number): string | null => {
    const known = areaOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id) as ProfileNode;
    const f = node.callFrame;
    let area: string | null;
    if (f.functionName === '(idle)' || f.url.includes('hack/bench/profiler.')) area = null;
    else {
      const rule = RULES.find(([, test]) => test(f));
      const up = parent.get(id);
      area = rule ? rule[0] : up !== undefined ? areaOf(up) : leafArea(f);
      // No named frame above: the leaf's own kind.
      if (!rule && area === 'root') area = leafArea(f);
    }
    if (f.functionName === '(root)') area = 'root';
    areaOfNode.set(id, area);
    return area;
  };
  const areas = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas?.[i] ?? 1;
    let area = areaOf(id);
    if (area === null) return;
    if (area === 'root') area = leafArea((byId.get(id) as ProfileNode).callFrame);
    busyUs += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
  });
  return { busyUs, areas };
}

for (const file of process.argv.slice(2)) {
  const { busyUs, areas } = split(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  console.log(`${file}: busy ${(busyUs / 1000).toFixed(0)} ms`);
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1])) {
    console.log(`${((100 * us) / busyUs).toFixed(1).padStart(6)}%  ${area}`);
  }
}
