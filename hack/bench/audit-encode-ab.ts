// node dist/hack/bench/audit-encode-ab.js [--rounds R] [--iterations N]
//
// The audit event of an audited get (the chart's default policy: Metadata level, the
// ResponseComplete stage), encoded two ways in one process, rounds alternating:
//   snapshot  JSON.stringify(snapshotEvent(ev)), the ordered copy the log backend
//             stringified before (docs/performance/audited-gets.md)
//   encode    encodeEvent(ev) (pkg/audit/encode.ts): the event as built by newEvent
//             and the audit filter is already in upstream's order, so it is
//             JSON.stringify of itself, with no copy
// Each line gets its newline and is measured with Buffer.byteLength, as the stdout
// writer does (so a string built of pieces pays for its flattening). Prints CPU
// nanoseconds per event (process.cpuUsage over each round) by round and the median.
// The whole request's cost is measured by get-path.ts --audit (with --alloc and
// --base for an A/B of two builds); this isolates the encoding.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import { encodeEvent } from '../../pkg/audit/encode.js';
import { newEvent, snapshotEvent } from '../../pkg/audit/event.js';
import type { Event } from '../../pkg/audit/types.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    iterations: { type: 'string', default: '200000' },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);

/** A get's event as the audit filter builds it for an access key's caller. */
function getEvent(): Event {
  const ev = newEvent({
    level: 'Metadata',
    auditID: randomUUID(),
    requestURI: '/kubernetes/management/apis/management.platform.dev/v1/users/bench-user-0',
    verb: 'get',
    user: {
      username: 'admin',
      groups: ['system:masters', 'system:authenticated'],
      extra: { 'management.platform.dev/access-key': ['admin-bootstrap'] },
    },
    sourceIPs: ['127.0.0.1'],
    userAgent: 'undici',
    objectRef: { resource: 'users', name: 'bench-user-0', apiGroup: 'management.platform.dev', apiVersion: 'v1' },
    requestReceivedEpochMs: Date.now(),
  });
  ev.annotations = { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' };
  ev.responseStatus = { metadata: {}, code: 200 };
  ev.stage = 'ResponseComplete';
  return ev;
}

const ev = getEvent();
const sides: Record<string, () => string> = {
  snapshot: () => JSON.stringify(snapshotEvent(ev)),
  encode: () => encodeEvent(ev),
};
if (sides['snapshot']!() !== sides['encode']!()) throw new Error('the two encodings differ');

const ns: Record<string, number[]> = { snapshot: [], encode: [] };
let bytes = 0;
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['snapshot', 'encode'] : ['encode', 'snapshot'];
  for (const name of order) {
    const encode = sides[name]!;
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) bytes += Buffer.byteLength(`${encode()}\n`);
    const used = process.cpuUsage(start);
    ns[name]!.push(((used.user + used.system) * 1000) / iterations);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
for (const [name, list] of Object.entries(ns)) {
  console.log(`${name.padEnd(8)} CPU ns/event ${list.map((x) => x.toFixed(0)).join(', ')} (median ${median(list).toFixed(0)})`);
}
console.log(`encode/snapshot ${(median(ns['encode']!) / median(ns['snapshot']!)).toFixed(2)}x (${bytes} bytes written)`);
