// The one rule both authenticators hold a key to (an access key presented itself,
// and a direct cluster endpoint token minted with it): each way a key stops being
// usable, and the 503 while the cache has not loaded.

import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { isApiError } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { LOG_THROTTLE_MAX_SUBJECTS, type Logger } from '../util/log/index.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import {
  AccessKeyUsability,
  credentialRefusal,
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
/** The warnings the checks logged: which former owner a key was refused for is said only there. */
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

/** The answer for a key whose user (by uid) is gone, whether or not a User of the name exists. */
function userGone(user: string, key: string): string {
  return `the user "${user}" the access key "${key}" was made for no longer exists; use another key (a user created again with that name does not inherit it)`;
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
    // The answer it would get with no alice at all: nothing tells its holder that alice exists again.
    assert.equal(refusal(older), userGone('alice', 'k'));
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
      'the team "devs" the access key "k" was made for no longer exists; use another key (a team created again with that name does not inherit it)',
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
    assert.equal(refusal(recorded), userGone('alice', 'k'));
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
    assert.equal(refusal(recording('uid-first-alice')), userGone('alice', 'k'));
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
    assert.equal(refusal(adopted), userGone('alice', 'k'));
    assert.equal(
      warnings.at(-1)?.fields?.['reason'],
      'made for a former User of that name while it existed, then adopted by this one (older than it)',
    );
    assert.equal(refusal(adopted), userGone('alice', 'k'), 'the same answer the second time');
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

/** A key of `spec` made for the owner object `owner` (it references it, as every key does since its creation). */
function ownedKey(name: string, spec: Record<string, unknown>, owner: KubeObject): KubeObject {
  const key = object('OwnedAccessKey', name, spec, 1);
  key.metadata.annotations = { ...key.metadata.annotations, [keyRevisionAnnotation(GROUP)]: `r-${name}` };
  key.metadata.ownerReferences = [
    {
      apiVersion: `${GROUP}/v1`,
      kind: owner.kind ?? '',
      name: owner.metadata.name ?? '',
      uid: owner.metadata.uid ?? '',
    },
  ];
  return key;
}

/** The same object under another uid: deleted, then created again under its name. */
function recreated(owner: KubeObject): KubeObject {
  return { ...owner, metadata: { ...owner.metadata, uid: `${owner.metadata.uid ?? ''}-again` } };
}

function beingDeleted(owner: KubeObject): KubeObject {
  return { ...owner, metadata: { ...owner.metadata, deletionTimestamp: new Date(START).toISOString() } };
}

describe('a key whose owner is gone', () => {
  const alice = (): KubeObject => object('User', 'alice', { tokenGeneration: 1 });
  const devs = (): KubeObject => object('Team', 'devs', {});
  const teamGone = (key: string): string =>
    `the team "devs" the access key "${key}" was made for no longer exists; use another key (a team created again with that name does not inherit it)`;

  it('gets the same answer whether or not an owner of the name was created again', () => {
    const key = ownedKey('k-alice', { user: 'alice' }, alice());
    users.set('alice', beingDeleted(alice()));
    assert.equal(refusal(key), userGone('alice', 'k-alice'), 'being deleted');
    users.delete('alice');
    assert.equal(refusal(key), userGone('alice', 'k-alice'), 'deleted');
    users.set('alice', recreated(alice()));
    assert.equal(refusal(key), userGone('alice', 'k-alice'), 'created again');

    const teamKey = ownedKey('k-devs', { team: 'devs' }, devs());
    teams.set('devs', beingDeleted(devs()));
    assert.equal(refusal(teamKey), teamGone('k-devs'), 'being deleted');
    teams.delete('devs');
    assert.equal(refusal(teamKey), teamGone('k-devs'), 'deleted');
    teams.set('devs', recreated(devs()));
    assert.equal(refusal(teamKey), teamGone('k-devs'), 'created again');
  });

  it('gets the same answer for a key orphaned from it, and for one stored before keys recorded their owner', () => {
    const orphaned = object('OwnedAccessKey', 'k-orphan', { user: 'alice' }, 1);
    orphaned.metadata.annotations = {
      ...orphaned.metadata.annotations,
      [formerOwnerAnnotation(GROUP)]: 'uid-alice',
      [keyRevisionAnnotation(GROUP)]: 'r1',
    };
    // No revision, no reference, older than a user created now: no user made now would own it.
    const legacy = object('OwnedAccessKey', 'k-legacy', { user: 'alice' }, 1);
    clock.now = START + 3_600_000;
    for (const [key, name] of [
      [orphaned, 'k-orphan'],
      [legacy, 'k-legacy'],
    ] as const) {
      users.delete('alice');
      assert.equal(refusal(key), userGone('alice', name), `${name}, no alice`);
      users.set('alice', {
        ...recreated(alice()),
        metadata: {
          ...recreated(alice()).metadata,
          creationTimestamp: new Date(START + 60_000).toISOString(),
        },
      });
      assert.equal(refusal(key), userGone('alice', name), `${name}, alice created again`);
    }
  });

  it('says only "does not exist" for a key made before its owner, which the owner will adopt', () => {
    // Stored with a revision and naming no owner yet, as Helm applies a key before its User.
    const early = object('OwnedAccessKey', 'k-early', { user: 'alice' }, 1);
    early.metadata.annotations = { ...early.metadata.annotations, [keyRevisionAnnotation(GROUP)]: 'r1' };
    const doesNotExist =
      'the user "alice" of the access key "k-early" does not exist; ask an administrator to create the user or use another key';
    users.delete('alice');
    assert.equal(refusal(early), doesNotExist);
    users.set('alice', object('User', 'alice', { tokenGeneration: 1 }));
    usability.check(early);
    // The same answer while its User is being deleted as once it is gone.
    const deleting = object('User', 'alice', { tokenGeneration: 1 });
    deleting.metadata.deletionTimestamp = new Date(START).toISOString();
    users.set('alice', deleting);
    assert.equal(refusal(early), doesNotExist, 'while alice is being deleted');
    users.set('alice', object('User', 'alice', { tokenGeneration: 1 }));
    const earlyTeamKey = object('OwnedAccessKey', 'k-early-team', { team: 'devs' });
    earlyTeamKey.metadata.annotations = { [keyRevisionAnnotation(GROUP)]: 'r1' };
    teams.delete('devs');
    assert.equal(
      refusal(earlyTeamKey),
      'the team "devs" of the access key "k-early-team" does not exist; use another key',
    );
  });
});

describe('the refusals, as the key says them and as a credential made with it does', () => {
  /** Every refusal the default checks can throw: [what, the key, its message, a token's]. */
  const cases: [string, () => KubeObject, string, string][] = [
    [
      'disabled',
      () => object('OwnedAccessKey', 'k', { user: 'alice', disabled: true }, 1),
      'the access key "k" is disabled; ask an administrator to enable it or use another key',
      'this direct cluster endpoint token no longer works because the access key "k" is disabled; ask an administrator to enable it or use another key',
    ],
    [
      'expired',
      () => object('OwnedAccessKey', 'k', { user: 'alice', ttl: 1 }, 1),
      EXPIRED_MESSAGE,
      'this direct cluster endpoint token no longer works because the access key "k" expired; please log in again',
    ],
    [
      'user missing (a key made before its user)',
      () => {
        users.delete('alice');
        const key = object('OwnedAccessKey', 'k', { user: 'alice' }, 1);
        key.metadata.annotations = { ...key.metadata.annotations, [keyRevisionAnnotation(GROUP)]: 'r1' };
        return key;
      },
      'the user "alice" of the access key "k" does not exist; ask an administrator to create the user or use another key',
      'this direct cluster endpoint token no longer works because the user "alice" of the access key "k" does not exist; ask an administrator to create the user or use another key',
    ],
    [
      'user gone (deleted)',
      () => {
        const key = ownedKey('k', { user: 'alice' }, object('User', 'alice', {}));
        users.delete('alice');
        return key;
      },
      userGone('alice', 'k'),
      'this direct cluster endpoint token no longer works because the user "alice" the access key "k" was made for no longer exists; use another key (a user created again with that name does not inherit it)',
    ],
    [
      'user gone (a former owner of the name: created again)',
      () => {
        const key = ownedKey('k', { user: 'alice' }, object('User', 'alice', {}));
        users.set('alice', recreated(object('User', 'alice', { tokenGeneration: 1 })));
        return key;
      },
      userGone('alice', 'k'),
      'this direct cluster endpoint token no longer works because the user "alice" the access key "k" was made for no longer exists; use another key (a user created again with that name does not inherit it)',
    ],
    [
      'user being deleted',
      () => {
        users.set('alice', beingDeleted(object('User', 'alice', { tokenGeneration: 1 })));
        return ownedKey('k', { user: 'alice' }, object('User', 'alice', {}));
      },
      userGone('alice', 'k'),
      'this direct cluster endpoint token no longer works because the user "alice" the access key "k" was made for no longer exists; use another key (a user created again with that name does not inherit it)',
    ],
    [
      'user disabled',
      () => {
        users.set('alice', object('User', 'alice', { tokenGeneration: 1, disabled: true }));
        return object('OwnedAccessKey', 'k', { user: 'alice' }, 1);
      },
      'the user "alice" is disabled; ask an administrator to enable the user',
      'this direct cluster endpoint token no longer works because the user "alice" is disabled; ask an administrator to enable the user',
    ],
    [
      'tokens invalidated',
      () => object('OwnedAccessKey', 'k', { user: 'alice' }, 0),
      'the access key "k" was revoked: the tokens of user "alice" were invalidated; please log in again',
      'this direct cluster endpoint token no longer works because the access key "k" was revoked: the tokens of user "alice" were invalidated; please log in again',
    ],
    [
      'team missing (a key made before its team)',
      () => {
        teams.delete('devs');
        return object('OwnedAccessKey', 'k', { team: 'devs' });
      },
      'the team "devs" of the access key "k" does not exist; use another key',
      'this direct cluster endpoint token no longer works because the team "devs" of the access key "k" does not exist; use another key',
    ],
    [
      'team gone (created again)',
      () => {
        const key = ownedKey('k', { team: 'devs' }, object('Team', 'devs', {}));
        teams.set('devs', recreated(object('Team', 'devs', {})));
        return key;
      },
      'the team "devs" the access key "k" was made for no longer exists; use another key (a team created again with that name does not inherit it)',
      'this direct cluster endpoint token no longer works because the team "devs" the access key "k" was made for no longer exists; use another key (a team created again with that name does not inherit it)',
    ],
  ];

  for (const [what, make, keyMessage, tokenMessage] of cases) {
    it(what, () => {
      const key = make();
      if (what === 'expired') clock.now = START + 1000;
      assert.equal(refusal(key), keyMessage);
      let thrown: unknown;
      try {
        usability.check(key);
      } catch (err) {
        thrown = credentialRefusal('this direct cluster endpoint token', err);
      }
      assert.ok(isApiError(thrown) && thrown.code === 401);
      assert.equal(thrown.message, tokenMessage);
      // One sentence: no bare "Unauthorized", no "does not:" glue, one remedy after one ';'.
      assert.doesNotMatch(thrown.message, /Unauthorized|does not: /);
    });
  }

  it('passes any other error through as it is', () => {
    const other = new Error('storage down');
    assert.equal(credentialRefusal('this client certificate', other), other);
  });
});

describe("the log line of a former owner's key", () => {
  const formerOwnersKey = (name: string): KubeObject =>
    ownedKey(
      name,
      { user: 'alice' },
      { ...object('User', 'alice', {}), metadata: { name: 'alice', uid: 'uid-first-alice' } },
    );
  const formerOwnerLines = (key: string): (typeof warnings)[number][] =>
    warnings.filter((w) => w.fields?.['accessKey'] === key);

  it('is written once a minute per key, the next one with the count of refusals left out', () => {
    const key = formerOwnersKey('k-retried');
    clock.now = START + 10 * 3_600_000;
    for (let i = 0; i < 500; i++) refusal(key);
    assert.deepEqual(formerOwnerLines('k-retried'), [
      {
        msg: "access key refused: it belongs to a former owner of its owner's name",
        fields: {
          accessKey: 'k-retried',
          reason: 'made for a former User of that name (its reference names uid uid-first-alice)',
        },
      },
    ]);
    clock.now += 59_999;
    refusal(key);
    assert.equal(formerOwnerLines('k-retried').length, 1, 'still within the minute');
    clock.now += 1;
    refusal(key);
    const lines = formerOwnerLines('k-retried');
    assert.equal(lines.length, 2);
    assert.equal(
      lines[1]?.fields?.['suppressed'],
      500,
      'the 499 after the first, and the one a moment before the minute',
    );
  });

  it('forgets the oldest keys rather than grow: a client cycling many keys is written for, not remembered', () => {
    clock.now = START + 20 * 3_600_000;
    refusal(formerOwnersKey('k-first'));
    for (let i = 0; i < 3; i++) refusal(formerOwnersKey('k-first'));
    for (let i = 0; i < LOG_THROTTLE_MAX_SUBJECTS; i++) refusal(formerOwnersKey(`k-cycled-${i}`));
    assert.equal(warnings.length, LOG_THROTTLE_MAX_SUBJECTS + 1, 'a line for each new key');
    // The line of the key that made room for itself by forgetting the first key counts
    // its 3 refusals left out, by number only (no key named but its own). The windows
    // earlier tests left, older, were forgotten (and counted) before it.
    const counting = warnings.filter((w) => w.fields?.['suppressedOfForgottenKeys'] !== undefined);
    assert.deepEqual(counting.at(-1)?.fields, {
      accessKey: `k-cycled-${LOG_THROTTLE_MAX_SUBJECTS - 1}`,
      reason: counting.at(-1)?.fields?.['reason'],
      suppressedOfForgottenKeys: 3,
    });
    // The first key's window was forgotten to make room: its next refusal is written at once.
    refusal(formerOwnersKey('k-first'));
    assert.equal(formerOwnerLines('k-first').length, 2);
    // The most recent ones are still remembered.
    refusal(formerOwnersKey(`k-cycled-${LOG_THROTTLE_MAX_SUBJECTS - 1}`));
    assert.equal(formerOwnerLines(`k-cycled-${LOG_THROTTLE_MAX_SUBJECTS - 1}`).length, 1);
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
