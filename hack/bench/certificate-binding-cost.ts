// What the certificate-binding check costs an identity the host's aggregator
// forwards (front-proxy headers, no binding): since the unbound check runs for
// front-proxy identities too (the User of that name must not be disabled or being
// deleted), every proxied request pays one prefix test per group and one look-up
// of the User. Compared in one process, rounds alternating (bare, wrapped, bare,
// ...): the bare front-proxy stand-in, the same wrapped for a platform User of
// 10,000, and wrapped for a host identity that is no platform User. Reports CPU
// microseconds per authenticate() (process.cpuUsage over the window) and calls/s;
// the median of the rounds. Bounded in time, no network.
// Run: node dist/hack/bench/certificate-binding-cost.js [calls-per-round] [rounds]

import type { IncomingMessage } from 'node:http';

import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../pkg/apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import { AccessKeyUsability, type AccessKeySource } from '../../pkg/authentication/access-key-usability.js';
import { CertificateBindingAuthenticator } from '../../pkg/authentication/certificate-binding.js';
import type { Authenticator } from '../../pkg/authentication/interfaces.js';
import type { AuthenticatedUser } from '../../pkg/authentication/user/user.js';

const GROUP = 'management.platform.dev';
const CALLS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 7);

const users = new Map<string, KubeObject>();
for (let i = 0; i < 10_000; i++) {
  const name = `user-${i}`;
  users.set(name, { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name, uid: `u-${i}` }, spec: {} });
}
const source: AccessKeySource = {
  hasSynced: true,
  waitForSync: () => Promise.resolve(true),
  accessKeyByHash: () => undefined,
  accessKey: () => undefined,
  user: (name) => users.get(name),
  team: () => undefined,
};
const keys = new AccessKeyUsability(source, {
  generationAnnotation: tokenGenerationAnnotation(GROUP),
  formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
  revisionAnnotation: keyRevisionAnnotation(GROUP),
});

/** What the front-proxy authenticator hands on: a host identity with a few groups. */
function forwarded(name: string): Authenticator {
  const user: AuthenticatedUser = {
    name,
    groups: ['developers', 'operators', 'system:authenticated'],
    hostIdentity: true,
  };
  return { authenticate: () => user };
}
const wrap = (inner: Authenticator): Authenticator =>
  new CertificateBindingAuthenticator(inner, { apiGroup: GROUP, keys, certificates: false });

const variants: ReadonlyArray<[string, Authenticator]> = [
  ['bare front proxy', forwarded('user-4242')],
  ['wrapped, a platform User', wrap(forwarded('user-4242'))],
  ['wrapped, a host-only identity', wrap(forwarded('kubernetes-admin'))],
];

const req = {} as IncomingMessage;
const results = new Map<string, { cpuUs: number[]; rate: number[] }>();
for (const [name] of variants) results.set(name, { cpuUs: [], rate: [] });

for (let round = 0; round < ROUNDS; round++) {
  for (const [name, authn] of round % 2 === 0 ? variants : [...variants].reverse()) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) authn.authenticate(req);
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const r = results.get(name)!;
    r.cpuUs.push((used.user + used.system) / CALLS);
    r.rate.push(CALLS / (wall / 1000));
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
for (const [name, r] of results) {
  console.log(
    `${name.padEnd(32)} ${median(r.cpuUs).toFixed(3)} µs CPU per call   ${Math.round(median(r.rate)).toLocaleString('en')} calls/s`,
  );
}
