// What a client retrying a former owner's access key in a loop costs the server, and
// what the key checks cost a usable key, measured A/B in one process, rounds
// alternating (A, B, B, A, ...), medians reported as CPU microseconds per call
// (process.cpuUsage over the round) beside calls/s (compareAlternating):
//
//   1. A refused former owner's key, the reason logged by the server's JsonLogger (to
//      a sink that drops the text, so only the logger's own work is counted): a line
//      per refusal, as before (the owner check called with no LogThrottle in its
//      context), against AccessKeyUsability.check now (one line per key and reason a
//      minute, LogThrottle).
//   2. A usable key (every request such a key authenticates): AccessKeyUsability.check
//      with no logger (a context without the logger and its throttle, as the context
//      was but for the logger) against one with the logger (the context carries both).
//      The owner rule itself is the one it was (formerOwnersKeyReason once, then the
//      deletion, disabled and generation tests); a refusal is only built when thrown.
//
// Then the log each refusal variant wrote: lines and bytes per 1,000 refusals, which
// is what a flood costs past this process (stdout, the node's log agent, storage).
//
// Bounded in time, no network, no server.
// Run: npx tsc -p tsconfig.build.json && node dist/hack/bench/former-owner-refusals-ab.js [calls-per-round] [rounds]

import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../pkg/apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../../pkg/apis/meta/types.js';
import {
  AccessKeyUsability,
  rejectKeyOfUnusableOwner,
  type CheckContext,
} from '../../pkg/authentication/access-key-usability.js';
import { memoryIdentitySource } from '../../pkg/authentication/testing/identity-source.js';
import { JsonLogger } from '../../pkg/util/log/index.js';
import { compareAlternating } from './alternating-ab.js';

const GROUP = 'management.platform.dev';
const CALLS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 7);

const options = {
  generationAnnotation: tokenGenerationAnnotation(GROUP),
  formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
  revisionAnnotation: keyRevisionAnnotation(GROUP),
  logger: new JsonLogger('info', { write: (text: string) => written.add(text) }),
};

/** What the logger was given to write: lines and bytes. */
const written = {
  lines: 0,
  bytes: 0,
  add(text: string): boolean {
    this.lines++;
    this.bytes += Buffer.byteLength(text);
    return true;
  },
};

const source = memoryIdentitySource();
source.users.set('alice', {
  apiVersion: `${GROUP}/v1`,
  kind: 'User',
  metadata: { name: 'alice', uid: 'uid-alice-again', creationTimestamp: '2026-07-01T00:00:00Z' },
  spec: {},
});

function keyOf(name: string, ownerUid: string): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: '2026-06-01T00:00:00Z',
      annotations: { [options.revisionAnnotation]: 'r1', [options.generationAnnotation]: '0' },
      ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: ownerUid }],
    },
    spec: { user: 'alice' },
  };
}

/** Made for the alice deleted since (her uid was uid-alice): a former owner's key. */
const formerOwnersKey = keyOf('k-former', 'uid-alice');
const usableKey = keyOf('k-usable', 'uid-alice-again');

const usability = new AccessKeyUsability(source, options);
const { logger: _none, ...withoutLogger } = options;
const usabilityWithoutLogger = new AccessKeyUsability(source, withoutLogger);
/** The check's context as it was before the throttle: every refusal writes its line. */
const unthrottled: CheckContext = { source, now: Date.now(), ...options };

const refused = (check: () => void) => (): void => {
  try {
    check();
  } catch {
    // Refused, as expected.
  }
};

compareAlternating(
  [
    [
      [
        'refused, a line per refusal (before)',
        refused(() => rejectKeyOfUnusableOwner(formerOwnersKey, unthrottled)),
      ],
      ['refused, a line a minute (now)', refused(() => usability.check(formerOwnersKey))],
    ],
    [
      ['usable, no logger in the context', () => usabilityWithoutLogger.check(usableKey)],
      ['usable, logger and throttle in the context', () => usability.check(usableKey)],
    ],
  ],
  CALLS,
  ROUNDS,
);

// Keys not refused yet, so that the throttle's first line is counted too.
const countedBefore = keyOf('k-former-counted-before', 'uid-alice');
const countedNow = keyOf('k-former-counted-now', 'uid-alice');
for (const [name, call] of [
  ['a line per refusal (before)', refused(() => rejectKeyOfUnusableOwner(countedBefore, unthrottled))],
  ['a line a minute (now)', refused(() => usability.check(countedNow))],
] as const) {
  written.lines = 0;
  written.bytes = 0;
  for (let i = 0; i < 1000; i++) call();
  console.log(
    `${name.padEnd(44)} ${written.lines} lines, ${written.bytes.toLocaleString('en')} bytes per 1,000 refusals`,
  );
}
