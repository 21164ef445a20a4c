import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  formerOwnerAnnotation,
  hashAccessKey,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../../../apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import { read, roundTrip, simulateCreate, simulateUpdate, testContext } from '../strategy-testing.js';
import { KeyReveals } from './key-reveals.js';
import { ownedAccessKeyStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const FORMER_OWNER = formerOwnerAnnotation(GROUP);

function spec(obj: KubeObject): Record<string, unknown> {
  return obj['spec'] as Record<string, unknown>;
}

function key(user = 'alice', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name: 'k1' },
    spec: { user, ...extra },
  };
}

describe('OwnedAccessKey create', () => {
  it('generates a key, stores only its hash and shows the key once in the create response', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const { errors, stored, response } = await simulateCreate(strategy, key());
    assert.deepEqual(errors, []);
    const plain = spec(response)['key'];
    assert.equal(typeof plain, 'string');
    assert.match(plain as string, /^[a-z]{64}$/);
    assert.equal(spec(stored)['key'], hashAccessKey(plain as string));
    assert.ok(!JSON.stringify(stored).includes(plain as string), 'the plain key must not be stored');
    // Every later read shows an empty key.
    assert.equal(spec(read(strategy, stored))['key'], '');
    assert.equal(spec(strategy.decorate?.(roundTrip(stored), true) ?? stored)['key'], '');
  });

  it('does not show the new key to a read that happens before the create response', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP, { generateKey: () => 'k'.repeat(64) });
    const ctx = testContext();
    const obj = key();
    await strategy.prepareForCreate(ctx, obj);
    assert.equal(spec(read(strategy, obj))['key'], '');
    assert.equal(spec(strategy.decorate?.(roundTrip(obj), false, testContext('eve')) ?? obj)['key'], '');
    assert.equal(spec(strategy.decorate?.(roundTrip(obj), true, ctx) ?? obj)['key'], 'k'.repeat(64));
  });

  it('stores the hash of a key the client chose and echoes it once', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const { errors, stored, response } = await simulateCreate(
      strategy,
      key('alice', { key: 'my-own-key-123' }),
    );
    assert.deepEqual(errors, []);
    assert.equal(spec(stored)['key'], hashAccessKey('my-own-key-123'));
    assert.equal(spec(response)['key'], 'my-own-key-123');
  });

  it('takes a value in stored form as the hash of a key it never sees', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const hash = hashAccessKey('elsewhere');
    const { errors, stored, response } = await simulateCreate(strategy, key('alice', { key: hash }));
    assert.deepEqual(errors, []);
    assert.equal(spec(stored)['key'], hash);
    assert.equal(spec(response)['key'], '');
  });

  it('rejects a key that cannot travel as a bearer token without echoing it', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const { errors, stored } = await simulateCreate(strategy, key('alice', { key: 'has a space' }));
    assert.deepEqual(errors, ['spec.key: Invalid value: must be 1 to 1024 visible ASCII characters']);
    assert.equal(spec(stored)['key'], hashAccessKey('has a space'));
  });

  it('clears status: lastActivity is the server’s', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const body = { ...key(), status: { lastActivity: '2020-01-01T00:00:00Z' } };
    const { stored } = await simulateCreate(strategy, body);
    assert.equal(stored['status'], undefined);
  });

  it('requires exactly one of user, team and subject', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const none = await simulateCreate(strategy, { metadata: { name: 'k' }, spec: {} });
    assert.deepEqual(none.errors, [
      'spec.user: Required value: an access key must belong to a user, a team or a subject',
    ]);
    const two = await simulateCreate(strategy, key('alice', { team: 'dev', subject: 's' }));
    assert.deepEqual(two.errors, [
      'spec.team: Forbidden: may not be set together with spec.user',
      'spec.subject: Forbidden: may not be set together with spec.user',
    ]);
    const team = await simulateCreate(strategy, { metadata: { name: 'k' }, spec: { team: 'dev' } });
    assert.deepEqual(team.errors, []);
  });

  it('rejects a negative ttl and an unknown type', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const { errors } = await simulateCreate(strategy, key('alice', { ttl: -1, type: 'Forever' }));
    assert.deepEqual(errors, [
      'spec.type: Unsupported value: "Forever": supported values: "", "Login", "User", "Other", "Reset", "OIDCRefreshToken", "NetworkPeer", "Workspace"',
      'spec.ttl: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('never returns identity.connectorData', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const body = key('alice', { identity: { username: 'alice', connectorData: 'c2VjcmV0' } });
    const { stored, response } = await simulateCreate(strategy, body);
    assert.deepEqual(spec(stored)['identity'], { username: 'alice', connectorData: 'c2VjcmV0' });
    assert.deepEqual(spec(response)['identity'], { username: 'alice' });
    assert.deepEqual(spec(read(strategy, stored))['identity'], { username: 'alice' });
    // decorate works on a copy: the stored object keeps its data.
    assert.deepEqual(spec(stored)['identity'], { username: 'alice', connectorData: 'c2VjcmV0' });
  });
});

describe('OwnedAccessKey update', () => {
  async function created(): Promise<{
    stored: KubeObject;
    plain: string;
    strategy: ReturnType<typeof ownedAccessKeyStrategy>;
  }> {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const { stored, response } = await simulateCreate(
      strategy,
      key('alice', { identity: { username: 'alice', connectorData: 'c2VjcmV0' } }),
    );
    const withStatus = { ...stored, status: { lastActivity: '2026-07-01T00:00:00Z' } };
    return { stored: withStatus, plain: spec(response)['key'] as string, strategy };
  }

  it('keeps the key when the object is sent back as read', async () => {
    const { stored, strategy } = await created();
    const asRead = read(strategy, stored);
    spec(asRead)['displayName'] = 'CI';
    const { errors, stored: after, response } = await simulateUpdate(strategy, asRead, stored);
    assert.deepEqual(errors, []);
    assert.equal(spec(after)['key'], spec(stored)['key']);
    assert.equal(spec(response)['key'], '');
    // The write-only connector data survives a round trip through a client.
    assert.deepEqual(spec(after)['identity'], { username: 'alice', connectorData: 'c2VjcmV0' });
  });

  it('keeps the key when the client sends the stored hash', async () => {
    const { stored, strategy } = await created();
    const { stored: after } = await simulateUpdate(strategy, roundTrip(stored), stored);
    assert.equal(spec(after)['key'], spec(stored)['key']);
  });

  it('rotates to a new value and shows it once, to the request that set it', async () => {
    const { stored, strategy } = await created();
    const body = read(strategy, stored);
    spec(body)['key'] = 'rotated-key-value';
    const ctx = testContext();
    const obj = structuredClone(body);
    await strategy.prepareForUpdate(ctx, obj, stored);
    assert.equal(spec(obj)['key'], hashAccessKey('rotated-key-value'));
    // Another request reading the new object sees no key, and does not use it up.
    assert.equal(spec(strategy.decorate?.(roundTrip(obj), false, testContext('bob')) ?? obj)['key'], '');
    assert.equal(spec(read(strategy, obj))['key'], '');
    assert.equal(spec(strategy.decorate?.(roundTrip(obj), false, ctx) ?? obj)['key'], 'rotated-key-value');
    assert.equal(spec(strategy.decorate?.(roundTrip(obj), false, ctx) ?? obj)['key'], '');
  });

  it('shows nothing when the Store does not say which request asks', async () => {
    const { stored, strategy } = await created();
    const body = { ...read(strategy, stored), spec: { ...spec(read(strategy, stored)), key: 'another-key' } };
    const { stored: after, response } = await simulateUpdate(strategy, body, stored, testContext(), false);
    assert.equal(spec(after)['key'], hashAccessKey('another-key'));
    assert.equal(spec(response)['key'], '');
  });

  it('keeps the stored status', async () => {
    const { stored, strategy } = await created();
    const body = { ...read(strategy, stored), status: { lastActivity: '1999-01-01T00:00:00Z' } };
    const { stored: after } = await simulateUpdate(strategy, body, stored);
    assert.deepEqual(after['status'], { lastActivity: '2026-07-01T00:00:00Z' });
    const noStatus = read(strategy, stored);
    delete noStatus['status'];
    const { stored: after2 } = await simulateUpdate(strategy, noStatus, stored);
    assert.deepEqual(after2['status'], { lastActivity: '2026-07-01T00:00:00Z' });
  });

  it('does not let a key move to another owner', async () => {
    const { stored, strategy } = await created();
    const body = read(strategy, stored);
    spec(body)['user'] = 'admin';
    const { errors } = await simulateUpdate(strategy, body, stored);
    assert.deepEqual(errors, ['spec.user: Invalid value: "admin": field is immutable']);
  });
});

describe('OwnedAccessKey table', () => {
  it('shows display name, user, team, type and disabled', () => {
    const strategy = ownedAccessKeyStrategy(GROUP);
    const obj = key('alice', { displayName: 'CI', type: 'User', disabled: true });
    assert.deepEqual(
      strategy.tableColumns.map((c) => c.definition.name),
      ['Display Name', 'User', 'Team', 'Type', 'Disabled'],
    );
    assert.deepEqual(
      strategy.tableColumns.map((c) => c.cell(obj)),
      ['CI', 'alice', '', 'User', true],
    );
  });
});

describe('KeyReveals', () => {
  it('forgets entries after their time and keeps at most maxEntries', () => {
    let now = 0;
    const reveals = new KeyReveals({ ttlMs: 1000, maxEntries: 2, now: () => now });
    const ctx = testContext();
    reveals.setAside('h1', 'p1', ctx);
    now = 1500;
    assert.equal(reveals.take('h1', true, undefined), undefined);
    reveals.setAside('h2', 'p2', ctx);
    reveals.setAside('h3', 'p3', ctx);
    reveals.setAside('h4', 'p4', ctx);
    assert.equal(reveals.size, 2);
    assert.equal(reveals.take('h2', true, ctx), undefined);
    assert.equal(reveals.take('h4', false, testContext('other')), undefined);
    assert.equal(reveals.take('h4', false, ctx), 'p4');
    assert.equal(reveals.take('h4', false, ctx), undefined);
  });
});

describe('OwnedAccessKey token generation', () => {
  const annotation = tokenGenerationAnnotation(GROUP);
  const generations: Record<string, number> = { alice: 4 };
  const strategy = ownedAccessKeyStrategy(GROUP, {
    tokenGenerationOf: (name) => Promise.resolve(generations[name]),
  });

  it("records the user's generation on create, whatever the client sent", async () => {
    const body = {
      ...key('alice'),
      metadata: { name: 'k1', annotations: { [annotation]: '99', other: 'x' } },
    };
    const { stored } = await simulateCreate(strategy, body);
    // (The key's revision, also the server's, has a test of its own.)
    assert.deepEqual(withoutRevision(stored), { [annotation]: '4', other: 'x' });
    const none = await simulateCreate(strategy, key('nobody'));
    assert.equal(withoutRevision(none.stored), undefined);
  });

  it('keeps the recorded generation on update, and records the current one on rotation', async () => {
    const { stored } = await simulateCreate(strategy, key('alice'));
    generations['alice'] = 5;
    const edited = read(strategy, stored);
    edited.metadata.annotations = { [annotation]: '5' };
    const { stored: kept } = await simulateUpdate(strategy, edited, stored);
    assert.equal(kept.metadata.annotations?.[annotation], '4');
    const removed = read(strategy, stored);
    delete removed.metadata.annotations;
    assert.equal(
      (await simulateUpdate(strategy, removed, stored)).stored.metadata.annotations?.[annotation],
      '4',
    );
    const rotated = read(strategy, stored);
    spec(rotated)['key'] = 'a-new-key-value';
    assert.equal(
      (await simulateUpdate(strategy, rotated, stored)).stored.metadata.annotations?.[annotation],
      '5',
    );
  });
});

describe('OwnedAccessKey groups and scope', () => {
  const strategy = ownedAccessKeyStrategy(GROUP);

  it('refuses reserved groups', async () => {
    const { errors } = await simulateCreate(
      strategy,
      key('alice', { groups: ['ok', 'system:masters', 'team:ops'] }),
    );
    assert.deepEqual(errors, [
      'spec.groups[1]: Invalid value: "system:masters": groups starting with "system:" are reserved',
      'spec.groups[2]: Invalid value: "team:ops": groups starting with "team:" are reserved',
    ]);
  });

  it('refuses owners that name reserved identities, whoever asks', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { subject: 'system:admin' },
        'spec.subject: Invalid value: "system:admin": names starting with "system:" are reserved',
      ],
      [
        { subject: 'system:serviceaccount:kube-system:default' },
        'spec.subject: Invalid value: "system:serviceaccount:kube-system:default": names starting with "system:" are reserved',
      ],
      [
        { subject: 'team:ops' },
        'spec.subject: Invalid value: "team:ops": names starting with "team:" are reserved',
      ],
      [
        { user: 'system:anonymous' },
        'spec.user: Invalid value: "system:anonymous": names starting with "system:" are reserved',
      ],
      [
        { team: 'system:masters' },
        'spec.team: Invalid value: "system:masters": names starting with "system:" are reserved',
      ],
    ];
    for (const [owner, message] of cases) {
      const { errors } = await simulateCreate(strategy, { ...key(), spec: owner });
      assert.deepEqual(errors, [message], JSON.stringify(owner));
    }
    // Names that merely contain the words are fine.
    const { errors } = await simulateCreate(strategy, { ...key(), spec: { subject: 'ci-system:runner' } });
    assert.deepEqual(errors, []);
  });

  it('refuses a reserved group added by an update', async () => {
    const { stored } = await simulateCreate(strategy, key('alice', { groups: ['ok'] }));
    const changed = roundTrip(stored);
    (changed['spec'] as Record<string, unknown>)['groups'] = ['ok', 'system:masters'];
    const { errors } = await simulateUpdate(strategy, changed, stored);
    assert.deepEqual(errors, [
      'spec.groups[1]: Invalid value: "system:masters": groups starting with "system:" are reserved',
    ]);
  });

  it('refuses deprecated rules that would not mean what they say', async () => {
    const { errors } = await simulateCreate(
      strategy,
      key('alice', {
        scope: {
          rules: [
            {
              resources: [
                { group: '', resources: ['pods/*', 'pods/log'] },
                { group: '', resourceNames: ['x'] },
              ],
              nonResourceURLs: ['/apis/*', '/api*', '*'],
            },
          ],
        },
      }),
    );
    assert.deepEqual(errors, [
      'spec.scope.rules[0].resources[0].resources[0]: Invalid value: "pods/*": overlaps the entry "pods/log"; wildcard entries must not overlap others',
      'spec.scope.rules[0].resources[1].resourceNames: Forbidden: may only be set together with resources',
      'spec.scope.rules[0].nonResourceURLs[1]: Invalid value: "/api*": "*" is only allowed as the whole last step of the path, e.g. /apis/*',
    ]);
  });
});

describe('OwnedAccessKey generation and owner from one read of the User', () => {
  const annotation = tokenGenerationAnnotation(GROUP);
  /** A store of Users whose reads are counted: each stands for a consistent read on etcd. */
  function users(): {
    reads: string[];
    stored: Record<string, KubeObject>;
    keyOwner: (kind: string, name: string) => Promise<KubeObject | undefined>;
  } {
    const reads: string[] = [];
    const stored: Record<string, KubeObject> = {};
    const keyOwner = (kind: string, name: string): Promise<KubeObject | undefined> => {
      reads.push(`${kind}/${name}`);
      return Promise.resolve(stored[`${kind}/${name}`]);
    };
    return { reads, stored, keyOwner };
  }
  const alice = (uid: string, tokenGeneration: number): KubeObject => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'User',
    metadata: { name: 'alice', uid },
    spec: { tokenGeneration },
  });

  it("a create reads its User once, for both the generation and the reference's uid", async () => {
    const u = users();
    u.stored['User/alice'] = alice('u-1', 3);
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner: u.keyOwner, generationFromKeyOwner: true });
    const { errors, stored } = await simulateCreate(strategy, key('alice'));
    assert.deepEqual(errors, []);
    assert.deepEqual(u.reads, ['User/alice']);
    assert.equal(stored.metadata.annotations?.[annotation], '3');
    assert.deepEqual(stored.metadata.ownerReferences, [
      { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'u-1' },
    ]);
    const none = await simulateCreate(strategy, key('nobody'));
    assert.equal(none.stored.metadata.annotations?.[annotation], undefined);
    assert.equal(none.stored.metadata.ownerReferences, undefined);
  });

  it('every write reads the User as it is then: a revocation or a re-created User is seen by the next key', async () => {
    const u = users();
    u.stored['User/alice'] = alice('u-1', 3);
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner: u.keyOwner, generationFromKeyOwner: true });
    const first = await simulateCreate(strategy, key('alice'));
    u.stored['User/alice'] = alice('u-2', 4);
    const second = await simulateCreate(strategy, key('alice'));
    assert.equal(first.stored.metadata.annotations?.[annotation], '3');
    assert.equal(second.stored.metadata.annotations?.[annotation], '4');
    assert.equal(second.stored.metadata.ownerReferences?.[0]?.uid, 'u-2');
    // A rotation records the generation of the User read by that update, once.
    u.reads.length = 0;
    u.stored['User/alice'] = alice('u-2', 5);
    const rotated = read(strategy, second.stored);
    spec(rotated)['key'] = 'a-new-key-value';
    const update = await simulateUpdate(strategy, rotated, second.stored);
    assert.equal(update.stored.metadata.annotations?.[annotation], '5');
    assert.deepEqual(u.reads, ['User/alice']);
  });

  it('without generationFromKeyOwner the generation comes from tokenGenerationOf, and none without it', async () => {
    const u = users();
    u.stored['User/alice'] = alice('u-1', 3);
    const fromOption = ownedAccessKeyStrategy(GROUP, {
      keyOwner: u.keyOwner,
      tokenGenerationOf: () => Promise.resolve(7),
    });
    assert.equal(
      (await simulateCreate(fromOption, key('alice'))).stored.metadata.annotations?.[annotation],
      '7',
    );
    // The server's own Stores (the collector, migrations) pass only keyOwner: no generation.
    const bare = ownedAccessKeyStrategy(GROUP, { keyOwner: u.keyOwner });
    assert.equal(
      (await simulateCreate(bare, key('alice'))).stored.metadata.annotations?.[annotation],
      undefined,
    );
  });
});

describe('OwnedAccessKey owner reference', () => {
  const owners: Record<string, KubeObject> = {
    'User/alice': { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name: 'alice', uid: 'u-alice' } },
    'Team/devs': { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'devs', uid: 'u-devs' } },
  };
  const keyOwner = (kind: string, name: string): Promise<KubeObject | undefined> =>
    Promise.resolve(owners[`${kind}/${name}`]);
  const aliceRef = { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'u-alice' };

  it('names the User or Team that owns the key, without blockOwnerDeletion', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner });
    const user = await simulateCreate(strategy, key('alice'));
    assert.deepEqual(user.stored.metadata.ownerReferences, [aliceRef]);
    const team = await simulateCreate(strategy, key('', { team: 'devs' }));
    assert.deepEqual(team.stored.metadata.ownerReferences, [
      { apiVersion: `${GROUP}/v1`, kind: 'Team', name: 'devs', uid: 'u-devs' },
    ]);
    const orphanUser = await simulateCreate(strategy, key('nobody'));
    assert.equal(orphanUser.stored.metadata.ownerReferences, undefined);
  });

  it('refuses an update that drops the reference while the owner exists, and adds a missing one', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner });
    const { stored } = await simulateCreate(strategy, key('alice'));
    const dropped = structuredClone(stored);
    delete dropped.metadata.ownerReferences;
    const refused = await simulateUpdate(strategy, dropped, stored);
    assert.deepEqual(refused.errors, [
      'metadata.ownerReferences: Forbidden: the reference to the key\'s owner User "alice" cannot be removed while the user exists: deleting the user deletes its access keys',
    ]);
    // A key stored before keys named their owner gets the reference on its next write.
    const legacy = await simulateUpdate(strategy, dropped, dropped);
    assert.deepEqual(legacy.errors, []);
    assert.deepEqual(legacy.stored.metadata.ownerReferences, [aliceRef]);
  });

  it('lets the reference go once the owner is being deleted (an orphaning delete)', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP, {
      keyOwner: (kind, name) =>
        keyOwner(kind, name).then(
          (o) => o && { ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        ),
    });
    const stored = { ...key('alice'), metadata: { name: 'k1', ownerReferences: [aliceRef] } };
    const dropped = { ...key('alice'), metadata: { name: 'k1' } };
    const { errors, stored: orphaned } = await simulateUpdate(strategy, dropped, stored);
    assert.deepEqual(errors, []);
    assert.equal(orphaned.metadata.ownerReferences, undefined);
    assert.deepEqual(
      orphaned.metadata.annotations,
      { [FORMER_OWNER]: 'u-alice' },
      'the lost owner is recorded',
    );
  });

  it('records the owner being deleted as the former owner of a key created meanwhile', async () => {
    // Created for alice (or devs) while she is being deleted: no reference (the collector
    // would never see it), so without the record an alice re-created under the name
    // would adopt a key her predecessor's holder made.
    const strategy = ownedAccessKeyStrategy(GROUP, {
      keyOwner: (kind, name) =>
        keyOwner(kind, name).then(
          (o) => o && { ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        ),
    });
    const user = await simulateCreate(strategy, key('alice'));
    assert.deepEqual(user.errors, []);
    assert.equal(user.stored.metadata.ownerReferences, undefined);
    assert.equal(user.stored.metadata.annotations?.[FORMER_OWNER], 'u-alice');
    const team = await simulateCreate(strategy, key('', { team: 'devs' }));
    assert.equal(team.stored.metadata.annotations?.[FORMER_OWNER], 'u-devs');
    // Then never adopted by the alice created after.
    const later = await simulateUpdate(
      ownedAccessKeyStrategy(GROUP, {
        keyOwner: (kind, name) =>
          keyOwner(kind, name).then((o) => o && { ...o, metadata: { ...o.metadata, uid: 'u-alice-2' } }),
      }),
      user.stored,
      user.stored,
    );
    assert.equal(later.stored.metadata.ownerReferences, undefined);
    assert.equal(later.stored.metadata.annotations?.[FORMER_OWNER], 'u-alice');
  });

  it("refuses a reference carrying the owner's uid under another kind or name", async () => {
    // Relabelled, the reference would be dropped by an orphaning delete (by uid)
    // with no former owner recorded (by kind and name), and a re-created alice
    // would own the key.
    const relabelled = { apiVersion: `${GROUP}/v1`, kind: 'Team', name: 'nobody', uid: 'u-alice' };
    const want = [
      'metadata.ownerReferences[0]: Forbidden: the uid of the key\'s owner User "alice" may only be referenced as that user, not as Team "nobody"',
    ];
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner });
    const { stored } = await simulateCreate(strategy, key('alice'));
    const update = structuredClone(stored);
    update.metadata.ownerReferences = [relabelled];
    assert.deepEqual((await simulateUpdate(strategy, update, stored)).errors, want);
    const create = { ...key('alice'), metadata: { name: 'k2', ownerReferences: [relabelled] } };
    assert.deepEqual((await simulateCreate(strategy, create)).errors, want);
    // Nor while the owner is being deleted, when the collector drops references by uid.
    const deleting = ownedAccessKeyStrategy(GROUP, {
      keyOwner: (kind, name) =>
        keyOwner(kind, name).then(
          (o) => o && { ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        ),
    });
    assert.deepEqual((await simulateUpdate(deleting, update, stored)).errors, want);
    // A key stored relabelled before the rule: the collector's drop (by uid) still records the lost owner.
    const legacy = { ...key('alice'), metadata: { name: 'k3', ownerReferences: [relabelled] } };
    const dropped = { ...key('alice'), metadata: { name: 'k3' } };
    const orphaned = await simulateUpdate(deleting, dropped, legacy);
    assert.deepEqual(orphaned.errors, []);
    assert.equal(orphaned.stored.metadata.annotations?.[FORMER_OWNER], 'u-alice');
  });

  it('never gives an orphaned key to a User re-created under the same name', async () => {
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner });
    // Orphaned from an earlier alice; "alice" now is another User (uid u-alice).
    const orphaned = { ...key('alice'), metadata: { name: 'k1', annotations: { [FORMER_OWNER]: 'u-gone' } } };
    const touched = await simulateUpdate(
      strategy,
      { ...orphaned, spec: { user: 'alice', displayName: 'x' } },
      orphaned,
    );
    assert.deepEqual(touched.errors, []);
    assert.equal(touched.stored.metadata.ownerReferences, undefined, 'not adopted');
    // Nor can a client clear the record to have it adopted.
    const cleared = await simulateUpdate(strategy, { ...orphaned, metadata: { name: 'k1' } }, orphaned);
    assert.equal(cleared.stored.metadata.ownerReferences, undefined);
    assert.deepEqual(cleared.stored.metadata.annotations, { [FORMER_OWNER]: 'u-gone' });
    // A new key never claims a former owner, whatever the client sent.
    const created = await simulateCreate(strategy, orphaned);
    assert.equal(withoutRevision(created.stored), undefined);
    assert.deepEqual(created.stored.metadata.ownerReferences, [aliceRef]);
  });

  it("is re-adopted only when the record is set to the current owner's uid", async () => {
    // A key Helm applied before its User, stored before keys had a revision: recorded as
    // a former owner's (unknown) although it was made for this alice.
    const strategy = ownedAccessKeyStrategy(GROUP, { keyOwner });
    const recorded = {
      ...key('alice'),
      metadata: { name: 'k1', annotations: { [FORMER_OWNER]: 'unknown' } },
    };
    const withRecord = (value: string): KubeObject => ({
      ...recorded,
      metadata: { name: 'k1', annotations: { [FORMER_OWNER]: value } },
    });
    // Any other value, or none, keeps the record and adopts nothing.
    for (const body of [withRecord('u-someone'), withRecord(''), { ...recorded, metadata: { name: 'k1' } }]) {
      const kept = await simulateUpdate(strategy, body, recorded);
      assert.deepEqual(kept.errors, []);
      assert.equal(kept.stored.metadata.ownerReferences, undefined);
      assert.deepEqual(kept.stored.metadata.annotations, { [FORMER_OWNER]: 'unknown' });
    }
    // The current owner's uid: recorded as hers, and referenced.
    const adopted = await simulateUpdate(strategy, withRecord('u-alice'), recorded);
    assert.deepEqual(adopted.errors, []);
    assert.deepEqual(adopted.stored.metadata.ownerReferences, [aliceRef]);
    assert.deepEqual(adopted.stored.metadata.annotations, { [FORMER_OWNER]: 'u-alice' });
    // A later write that leaves the annotation out keeps it.
    const later = await simulateUpdate(
      strategy,
      { ...adopted.stored, metadata: { name: 'k1', ownerReferences: [aliceRef] } },
      adopted.stored,
    );
    assert.deepEqual(later.errors, []);
    assert.deepEqual(later.stored.metadata.ownerReferences, [aliceRef]);
    assert.deepEqual(later.stored.metadata.annotations, { [FORMER_OWNER]: 'u-alice' });
    // Not while that owner is being deleted.
    const deleting = ownedAccessKeyStrategy(GROUP, {
      keyOwner: (kind, name) =>
        keyOwner(kind, name).then(
          (o) => o && { ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
        ),
    });
    const refused = await simulateUpdate(deleting, withRecord('u-alice'), recorded);
    assert.equal(refused.stored.metadata.ownerReferences, undefined);
    assert.deepEqual(refused.stored.metadata.annotations, { [FORMER_OWNER]: 'unknown' });
  });
});

/** A stored key's annotations without its revision (drawn at random): undefined when none is left. */
function withoutRevision(obj: KubeObject): Record<string, string> | undefined {
  const rest = { ...(obj.metadata.annotations ?? {}) };
  delete rest[keyRevisionAnnotation(GROUP)];
  return Object.keys(rest).length > 0 ? rest : undefined;
}

describe('OwnedAccessKey revision', () => {
  const REVISION = keyRevisionAnnotation(GROUP);
  const strategy = ownedAccessKeyStrategy(GROUP);

  it('is drawn by the server on create and rotation, and kept (never the client’s) otherwise', async () => {
    const created = await simulateCreate(strategy, {
      ...key('alice'),
      metadata: { name: 'k1', annotations: { [REVISION]: 'chosen' } },
    });
    const first = created.stored.metadata.annotations?.[REVISION];
    assert.match(first ?? '', /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(first, 'chosen');
    // Another write without a new value: the stored revision, whatever the client sent.
    for (const annotations of [{ [REVISION]: 'chosen' }, undefined]) {
      const edited = read(strategy, created.stored);
      if (annotations) edited.metadata.annotations = annotations;
      else delete edited.metadata.annotations;
      const { stored } = await simulateUpdate(strategy, edited, created.stored);
      assert.equal(stored.metadata.annotations?.[REVISION], first);
    }
    // A new value: a new revision, so tokens and certificates made with the old value end.
    const rotated = read(strategy, created.stored);
    spec(rotated)['key'] = 'a-new-value';
    const { stored: after } = await simulateUpdate(strategy, rotated, created.stored);
    const second = after.metadata.annotations?.[REVISION];
    assert.match(second ?? '', /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(second, first);
    // A key stored before keys had a revision keeps none until it is rotated.
    const legacy = structuredClone(created.stored);
    delete legacy.metadata.annotations;
    const { stored: untouched } = await simulateUpdate(
      strategy,
      { ...read(strategy, legacy), metadata: { name: 'k1', annotations: { [REVISION]: 'chosen' } } },
      legacy,
    );
    assert.equal(untouched.metadata.annotations?.[REVISION], undefined);
  });
});
