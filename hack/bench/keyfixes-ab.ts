// What the keyfixes change costs, in one process, rounds alternating (A, B, A, B, ...;
// the order reversed every other round), medians reported as CPU microseconds per
// call (process.cpuUsage over the window) beside calls/s:
//
//   1. A key's checks on every request it authenticates: the owner rule as it was
//      (replacedOrDeleting, rebuilt below from the previous commit) against
//      DEFAULT_ACCESS_KEY_CHECKS now (formerOwnersKeyReason, which also asks
//      keyAdoptedFromFormerUser of a key referencing its User), for a key made
//      since keys carry a revision (nearly every key) and for a legacy key (no
//      revision, a token generation recorded: the one that pays two Date.parse).
//   2. A probe without Impersonate-* headers now pays hasImpersonationHeaders() on
//      the kubelet's four header lines: against the same loop without the test.
//
// Bounded in time, no network, no server.
// Run: npx tsc -p tsconfig.build.json && node dist/hack/bench/keyfixes-ab.js [calls-per-round] [rounds]

import type { IncomingMessage } from 'node:http';

import { hasImpersonationHeaders } from '../../pkg/apiserver/filters/impersonation.js';
import {
  formerOwnerAnnotation,
  keyPredatesOwner,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../pkg/apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import {
  AccessKeyUsability,
  DEFAULT_ACCESS_KEY_CHECKS,
  rejectDisabledKey,
  rejectExpiredKey,
  type AccessKeyCheck,
  type CheckContext,
} from '../../pkg/authentication/access-key-usability.js';
import { memoryIdentitySource } from '../../pkg/authentication/testing/identity-source.js';
import { newUnauthorized } from '../../pkg/apis/meta/errors.js';
import { userTokenGeneration, keyTokenGeneration } from '../../pkg/identity/token-generation.js';
import { compareAlternating, type Variant } from './alternating-ab.js';

const GROUP = 'management.platform.dev';
const CALLS = Number(process.argv[2] ?? 300_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const GENERATION = tokenGenerationAnnotation(GROUP);
const REVISION = keyRevisionAnnotation(GROUP);

/** The owner rule of a user key before this change (enough of it for a usable key). */
function replacedOrDeleting(key: KubeObject, owner: KubeObject, ctx: CheckContext): boolean {
  if (owner.metadata.deletionTimestamp) return true;
  const former = key.metadata.annotations?.[ctx.formerOwnerAnnotation];
  if (former !== undefined && former !== owner.metadata.uid) return true;
  const ref = (key.metadata.ownerReferences ?? []).find(
    (r) => r.kind === 'User' && r.name === owner.metadata.name,
  );
  if (ref !== undefined) return ref.uid !== owner.metadata.uid;
  return keyPredatesOwner(key, owner, ctx.revisionAnnotation);
}

const previousOwnerCheck: AccessKeyCheck = (key, ctx) => {
  const name = (key['spec'] as { user: string }).user;
  const user = ctx.source.user(name);
  if (!user || replacedOrDeleting(key, user, ctx)) throw newUnauthorized();
  if ((user['spec'] as { disabled?: boolean }).disabled === true) throw newUnauthorized();
  if (userTokenGeneration(user) > keyTokenGeneration(key, ctx.generationAnnotation)) throw newUnauthorized();
};

const source = memoryIdentitySource();
source.users.set('alice', {
  apiVersion: `${GROUP}/v1`,
  kind: 'User',
  metadata: { name: 'alice', uid: 'u-alice', creationTimestamp: '2026-03-01T00:00:00Z' },
  spec: {},
});
const options = {
  generationAnnotation: GENERATION,
  formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
  revisionAnnotation: REVISION,
};
const before = new AccessKeyUsability(source, {
  ...options,
  checks: [rejectDisabledKey, rejectExpiredKey, previousOwnerCheck],
});
const now = new AccessKeyUsability(source, { ...options, checks: DEFAULT_ACCESS_KEY_CHECKS });

function key(annotations: Record<string, string>): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: {
      name: 'k',
      uid: 'u-k',
      creationTimestamp: '2026-03-02T00:00:00Z',
      annotations,
      ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'u-alice' }],
    },
    spec: { user: 'alice' },
  };
}
const currentKey = key({ [GENERATION]: '0', [REVISION]: 'r' });
const legacyKey = key({ [GENERATION]: '0' });

/** The kubelet's probe: four header lines. */
const probe = {
  rawHeaders: [
    'Host',
    '10.0.0.5:8443',
    'User-Agent',
    'kube-probe/1.32',
    'Accept',
    '*/*',
    'Connection',
    'close',
  ],
} as unknown as IncomingMessage;
let sink = 0;

const comparisons: ReadonlyArray<readonly [Variant, Variant]> = [
  [
    ['key check before, current key', () => before.check(currentKey)],
    ['key check now, current key', () => now.check(currentKey)],
  ],
  [
    ['key check before, legacy key', () => before.check(legacyKey)],
    ['key check now, legacy key', () => now.check(legacyKey)],
  ],
  [
    ['probe header loop, no test', () => (sink += probe.rawHeaders.length)],
    [
      'probe header loop + hasImpersonationHeaders',
      () => (sink += probe.rawHeaders.length + (hasImpersonationHeaders(probe) ? 1 : 0)),
    ],
  ],
];

compareAlternating(comparisons, CALLS, ROUNDS, 'call', 44);
if (sink === -1) console.log(sink);
