// node dist/hack/bench/exact-integers.js [--rounds R] [--decodes N]
//
// What the exact-integer check costs a create's body decode (pkg/apiserver/body.ts
// decodeJSON): A decodes as before it (the scan looks only at literals of 19 or more
// characters, for int64's bounds), B with it (literals of 16 or more, also checked for
// a double changing them). Both in one process, rounds alternating A, B, A, B so that
// a noisy neighbour slows them alike; the median round counts. Reported: CPU
// microseconds per decode (process.cpuUsage over the timed window, far steadier than
// wall time on a shared machine) and decodes per second. The bodies are what kubectl
// sends for a create: a User, an OwnedAccessKey with its ttl and scope, and a
// SharedSecret whose last-applied annotation repeats the object (about 3 KiB).

import { parseArgs } from 'node:util';
import { decodeJSON } from '../../pkg/apiserver/body.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '11' }, decodes: { type: 'string', default: '20000' } },
});
const ROUNDS = Number(values.rounds);
const DECODES = Number(values.decodes);

const user = {
  apiVersion: 'management.platform.dev/v1',
  kind: 'User',
  metadata: { name: 'alice', creationTimestamp: null, labels: { team: 'payments', tier: 'gold' } },
  spec: {
    username: 'alice',
    email: 'alice@example.com',
    displayName: 'Alice Example',
    subject: 'alice',
    groups: ['developers', 'payments', 'oncall'],
    tokenGeneration: 3,
  },
};
const key = {
  apiVersion: 'management.platform.dev/v1',
  kind: 'OwnedAccessKey',
  metadata: { name: 'alice-ci', creationTimestamp: null },
  spec: {
    user: 'alice',
    type: 'User',
    displayName: 'CI key',
    ttl: 2592000,
    ttlAfterLastActivity: true,
    scope: { roles: [{ role: 'platformCLI' }], projects: [{ project: 'payments' }] },
  },
};
const secretSpec = {
  displayName: 'Payment gateway',
  data: Object.fromEntries(
    Array.from({ length: 12 }, (_, i) => [
      `key-${i}`,
      Buffer.from(`value number ${i} `.repeat(4)).toString('base64'),
    ]),
  ),
};
const secret = {
  apiVersion: 'management.platform.dev/v1',
  kind: 'SharedSecret',
  metadata: {
    name: 'gateway',
    namespace: 'p-payments',
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
        apiVersion: 'management.platform.dev/v1',
        kind: 'SharedSecret',
        metadata: { name: 'gateway', namespace: 'p-payments' },
        spec: secretSpec,
      }),
    },
  },
  spec: secretSpec,
};

const BODIES: Record<string, Buffer> = {
  user: Buffer.from(JSON.stringify(user)),
  'owned-access-key': Buffer.from(JSON.stringify(key)),
  'shared-secret': Buffer.from(JSON.stringify(secret)),
};

/** CPU µs per decode over one timed round. */
function round(raw: Buffer, exact: boolean): { cpuUs: number; perSecond: number } {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < DECODES; i++) sink += decodeJSON(raw, exact).duplicates.length;
  const wallNs = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  if (sink !== 0) throw new Error('a bench body has duplicate keys');
  return { cpuUs: (used.user + used.system) / DECODES, perSecond: DECODES / (wallNs / 1e9) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

console.log(`exact-integers: ${ROUNDS} rounds of ${DECODES} decodes per side, alternating`);
console.log('body              bytes  A cpu µs  B cpu µs  B/A    A decodes/s  B decodes/s');
for (const [name, raw] of Object.entries(BODIES)) {
  // Warm both paths before timing anything.
  round(raw, false);
  round(raw, true);
  const a: { cpuUs: number; perSecond: number }[] = [];
  const b: { cpuUs: number; perSecond: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(round(raw, false));
    b.push(round(raw, true));
  }
  const aCpu = median(a.map((x) => x.cpuUs));
  const bCpu = median(b.map((x) => x.cpuUs));
  console.log(
    `${name.padEnd(17)} ${String(raw.length).padStart(5)}  ${aCpu.toFixed(2).padStart(8)}  ${bCpu.toFixed(2).padStart(8)}  ${(bCpu / aCpu).toFixed(3)}  ${median(
      a.map((x) => x.perSecond),
    )
      .toFixed(0)
      .padStart(11)}  ${median(b.map((x) => x.perSecond))
      .toFixed(0)
      .padStart(11)}`,
  );
}
