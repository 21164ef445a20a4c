// The one rule both authenticators hold a key to (an access key presented itself,
// and a direct cluster endpoint token minted with it): each way a key stops being
// usable, and the 503 while the cache has not loaded.

import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { isApiError } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { Logger } from '../util/log/index.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import {
  AccessKeyUsability,
  EXPIRED_MESSAGE,
  retryAfterForUnreadyCache,
  type AccessKeyUse,
} from './access-key-usability.js';
import { memoryIdentitySource } from './testing/identity-source.js';

const GROUP = 'management.platform.dev';
const ANNOTATION = tokenGenerationAnnotation(GROUP);
const START = Date.parse('2026-07-01T00:00:00Z');

const source = memoryIdentitySource();
const { users, teams } = source;
const clock = { now: START };
const recorded: string[] = [];
const use: AccessKeyUse = {
  record: (key) => recorded.push(key.metadata.name ?? ''),
  lastUse: () => undefined,
};
/** The warnings the checks logged: a bare 401's reason is said only there. */
const warnings: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
const logger: Logger = {
  debug() {},
  info() {},
  warn: (msg, fields) => warnings.push({ msg, fields }),
  error() {},
  child: () => logger,
};
const usability = new AccessKeyUsability(source, {
  logger,
  generationAnnotation: ANNOTATION,
  formerOwnerAnnotation: formerOwnerAnnotation(GROUP),
  revisionAnnotation: keyRevisionAnnotation(GROUP),
  now: () => clock.now,
  use,
  syncTimeoutMs: 10,
});

function object(kind: string, name: string, spec: Record<string, unknown>, generation?: number): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind,
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: new Date(START).toISOString(),
      ...(generation !== undefined ? { annotations: { [ANNOTATION]: String(generation) } } : {}),
    },
    spec,
  };
}

function refusal(key: KubeObject): string {
  try {
    usability.check(key);
  } catch (err) {
    assert.ok(isApiError(err));
    assert.equal(err.code, 401);
    return err.message;
  }
  assert.fail('expected the key to be refused');
}

beforeEach(() => {
  warnings.length = 0;
  source.clear();
  clock.now = START;
  users.set('alice', object('User', 'alice', { tokenGeneration: 1 }));
  teams.set('devs', object('Team', 'devs', {}));
});

describe('AccessKeyUsability', () => {
  it('passes a key of an enabled, existing owner within its ttl', () => {
    usability.check(object('OwnedAccessKey', 'k', { user: 'alice', ttl: 60 }, 1));
    usability.check(object('OwnedAccessKey', 'k', { team: 'devs' }));
  });

  it('refuses a disabled key', () => {
    assert.match(
      refusal(object('OwnedAccessKey', 'k', { user: 'alice', disabled: true }, 1)),
      /"k" is disabled/,
    );
  });

  it('refuses a key past its ttl, counted from creation or from the last activity', () => {
    clock.now = START + 60_000;
    assert.equal(refusal(object('OwnedAccessKey', 'k', { user: 'alice', ttl: 60 }, 1)), EXPIRED_MESSAGE);
    const idle = object('OwnedAccessKey', 'k', { user: 'alice', ttl: 60, ttlAfterLastActivity: true }, 1);
    idle['status'] = { lastActivity: new Date(START + 30_000).toISOString() };
    usability.check(idle);
    clock.now = START + 90_000;
    assert.equal(refusal(idle), EXPIRED_MESSAGE);
  });

  it('refuses a key of a missing or disabled user, or of a user whose tokenGeneration moved past it', () => {
    const key = object('OwnedAccessKey', 'k', { user: 'alice' }, 1);
    users.set('alice', object('User', 'alice', { tokenGeneration: 2 }));
    assert.match(refusal(key), /"k" was revoked: the tokens of user "alice" were invalidated/);
    users.set('alice', object('User', 'alice', { tokenGeneration: 1, disabled: true }));
    assert.match(refusal(key), /user "alice" is disabled/);
    users.delete('alice');
    assert.match(refusal(key), /user "alice" of the access key "k" does not exist/);
  });

  it('refuses a key that references no owner and is older than its owner (a former owner of the name)', () => {
    const created = (obj: KubeObject, at: number | undefined): KubeObject => {
      const { creationTimestamp: _dropped, ...metadata } = obj.metadata;
      return {
        ...obj,
        metadata:
          at === undefined ? metadata : { ...metadata, creationTimestamp: new Date(at).toISOString() },
      };
    };
    const older = created(object('OwnedAccessKey', 'k', { user: 'alice' }, 1), START - 1000);
    // Upstream's bare 401: saying why would tell the key's holder that alice exists again.
    assert.equal(refusal(older), 'Unauthorized');
    assert.deepEqual(warnings, [
      {
        msg: "access key refused: it belongs to a former owner of its owner's name",
        fields: {
          accessKey: 'k',
          reason:
            'older than its User and stored before keys carried a revision (made for a former User of that name)',
        },
      },
    ]);
    assert.equal(
      refusal(created(object('OwnedAccessKey', 'k', { team: 'devs' }), START - 1000)),
      'Unauthorized',
    );
    // Made with or after the owner, or with a time unknown: the owner's, as before.
    usability.check(created(object('OwnedAccessKey', 'k', { user: 'alice' }, 1), START));
    usability.check(created(object('OwnedAccessKey', 'k', { user: 'alice' }, 1), undefined));
    // Referencing the owner it was adopted by: the reference decides, not the time.
    const ref = { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'uid-alice' };
    usability.check({ ...older, metadata: { ...older.metadata, ownerReferences: [ref] } });
    // Stored with a revision (since orphaning deletes record the former owner): made for a
    // name with no owner yet, as GitOps tools apply a key before its User; the owner's.
    const withRevision = created(object('OwnedAccessKey', 'k', { user: 'alice' }, 1), START - 1000);
    withRevision.metadata.annotations = {
      ...withRevision.metadata.annotations,
      [keyRevisionAnnotation(GROUP)]: 'r1',
    };
    usability.check(withRevision);
    // Recorded as a former owner's whose uid is unknown: refused whatever its time.
    const recorded = created(object('OwnedAccessKey', 'k', { user: 'alice' }, 1), START + 1000);
    recorded.metadata.annotations = {
      ...recorded.metadata.annotations,
      [formerOwnerAnnotation(GROUP)]: 'unknown',
    };
    assert.equal(refusal(recorded), 'Unauthorized');
    assert.equal(
      warnings.at(-1)?.fields?.['reason'],
      'recorded as older than its User (made for a former User of that name)',
    );
    const recording = (former: string): KubeObject => ({
      ...recorded,
      metadata: {
        ...recorded.metadata,
        annotations: { ...recorded.metadata.annotations, [formerOwnerAnnotation(GROUP)]: former },
      },
    });
    assert.equal(refusal(recording('uid-first-alice')), 'Unauthorized');
    assert.equal(
      warnings.at(-1)?.fields?.['reason'],
      'orphaned from a former User of that name (uid uid-first-alice)',
    );
    // Re-adopted by an administrator (the record names the current owner): alice's.
    usability.check(recording('uid-alice'));
  });

  it('refuses a key its User adopted from a former User of the name, judged again when the User changes', () => {
    const ref = { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'uid-alice' };
    // No revision, a generation recorded (a User of the name existed), 10 minutes older than alice.
    const adopted = object('OwnedAccessKey', 'k', { user: 'alice' }, 1);
    adopted.metadata.creationTimestamp = new Date(START - 600_000).toISOString();
    adopted.metadata.ownerReferences = [ref];
    assert.equal(refusal(adopted), 'Unauthorized');
    assert.equal(
      warnings.at(-1)?.fields?.['reason'],
      'made for a former User of that name while it existed, then adopted by this one (older than it)',
    );
    assert.equal(refusal(adopted), 'Unauthorized', 'the same answer the second time');
    // The same alice as an object created before the key: the key is hers.
    users.set('alice', {
      ...object('User', 'alice', { tokenGeneration: 1 }),
      metadata: {
        name: 'alice',
        uid: 'uid-alice',
        creationTimestamp: new Date(START - 900_000).toISOString(),
      },
    });
    usability.check(adopted);
  });

  it('refuses a team key once its team is gone', () => {
    teams.delete('devs');
    assert.match(refusal(object('OwnedAccessKey', 'k', { team: 'devs' })), /team "devs" .* does not exist/);
  });

  it('answers 503 while the identity cache has not loaded, and records only what it is told', async () => {
    source.hasSynced = false;
    await assert.rejects(usability.whenSynced(), (err) => isApiError(err) && err.code === 503);
    source.hasSynced = true;
    await usability.whenSynced();
    usability.recordUse(object('OwnedAccessKey', 'k', { user: 'alice' }, 1));
    assert.deepEqual(recorded, ['k']);
  });

  it('tells the caller when to retry, later the longer the cache has not loaded', async () => {
    source.hasSynced = false;
    const retryAfter = async (): Promise<number | undefined> => {
      const err = await usability.whenSynced().then(
        () => assert.fail('answered while not synced'),
        (e: unknown) => e,
      );
      assert.ok(isApiError(err));
      assert.equal(err.code, 503);
      assert.equal(err.reason, 'ServiceUnavailable');
      assert.match(err.message, /not ready yet, please try again/);
      return err.details?.retryAfterSeconds;
    };
    try {
      clock.now = START;
      assert.equal(await retryAfter(), 1);
      clock.now = START + 30_000;
      assert.equal(await retryAfter(), 6);
      clock.now = START + 3_600_000;
      assert.equal(await retryAfter(), 30);
    } finally {
      source.hasSynced = true;
      clock.now = START;
    }
  });
});

describe('retryAfterForUnreadyCache (k8s.io/apiserver cacher)', () => {
  it('is e^(0.06 × seconds) whole seconds, between 1 and 30', () => {
    assert.equal(retryAfterForUnreadyCache(0), 1);
    assert.equal(retryAfterForUnreadyCache(11_000), 1); // e^0.66 = 1.93
    assert.equal(retryAfterForUnreadyCache(12_000), 2); // e^0.72 = 2.05
    assert.equal(retryAfterForUnreadyCache(56_000), 28); // e^3.36 = 28.8
    assert.equal(retryAfterForUnreadyCache(57_000), 30); // e^3.42 = 30.6
  });
});
