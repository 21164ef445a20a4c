// The start-up migration of stored keys, on both backends: keys stored without an
// owner reference get one; keys orphaned from a former owner of their owner's name
// before orphaning deletes recorded it get the record instead (and are then refused
// by the authenticator's rule); a second run writes nothing.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startEtcd, type EtcdInstance } from '../../../../hack/etcd.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import { Etcd3KV } from '../../../storage/etcd3/etcd3-kv.js';
import { SqliteKV } from '../../../storage/sqlite/index.js';
import { KVStorage } from '../../../storage/store.js';
import { Store } from '../../generic/store.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
  UNKNOWN_FORMER_OWNER,
} from '../../../apis/management/v1/owned-access-key.js';
import { AccessKeyUsability } from '../../../authentication/access-key-usability.js';
import { memoryIdentitySource } from '../../../authentication/testing/identity-source.js';
import { migrateKeyOwners } from './owner-migration.js';
import type { KeyOwnerLookup } from './owner-reference.js';
import { ownedAccessKeyStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const KEYS = `/registry/${GROUP}/ownedaccesskeys/`;
const FORMER_OWNER = formerOwnerAnnotation(GROUP);
const HASH = 'sha256:' + '0'.repeat(64);

function user(name: string, uid: string, created: string): KubeObject {
  return { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name, uid, creationTimestamp: created } };
}

/** A key as an older server stored it: no ownerReferences unless given, no former owner recorded. */
function storedKey(name: string, owner: string, created: string, refUid?: string): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: created,
      ...(refUid !== undefined
        ? { ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'User', name: owner, uid: refUid }] }
        : {}),
    },
    spec: { user: owner, key: HASH },
  };
}

interface Backend {
  readonly name: string;
  open(): Promise<KVStorage>;
}

let etcd: EtcdInstance | undefined;
const backends: Backend[] = [
  { name: 'sqlite', open: () => Promise.resolve(new KVStorage(SqliteKV.open(':memory:'))) },
  {
    name: 'etcd3',
    open: async () => {
      etcd ??= await startEtcd();
      return new KVStorage(await Etcd3KV.connect({ endpoints: [etcd.endpoint] }));
    },
  },
];

after(async () => {
  await etcd?.stop();
});

for (const backend of backends) {
  describe(`the key owner migration (${backend.name})`, () => {
    let storage: KVStorage;
    const owners = new Map<string, KubeObject>();
    const lookup: KeyOwnerLookup = (kind, name) =>
      Promise.resolve(kind === 'User' ? owners.get(name) : undefined);
    const keys = (): Store =>
      new Store({
        strategy: ownedAccessKeyStrategy(GROUP, { keyOwner: lookup }),
        storage,
        keyPrefix: '/registry',
        compileSchema,
      });

    before(async () => {
      storage = await backend.open();
    });
    after(async () => {
      await storage.close();
    });

    it('gives keys stored without an owner reference one, once; keys of no existing owner are left alone', async () => {
      owners.clear();
      owners.set('alice', user('alice', 'u-alice', '2026-01-01T00:00:00Z'));
      await storage.create(KEYS + 'a1', storedKey('a1', 'alice', '2026-01-02T00:00:00Z'));
      await storage.create(KEYS + 'a2', storedKey('a2', 'alice', '2026-01-01T00:00:00Z'));
      await storage.create(KEYS + 'ghost', storedKey('ghost', 'nobody', '2026-01-01T00:00:00Z'));

      assert.deepEqual(await migrateKeyOwners(keys(), lookup), { updated: 2, orphaned: [], failed: 0 });
      const a1 = await storage.get(KEYS + 'a1');
      assert.deepEqual(a1?.metadata.ownerReferences, [
        { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'u-alice' },
      ]);
      assert.equal((a1?.spec as Record<string, unknown>)['key'], HASH, 'the key still works');
      assert.equal(a1?.metadata.annotations?.[FORMER_OWNER], undefined);
      assert.equal((await storage.get(KEYS + 'ghost'))?.metadata.ownerReferences, undefined);

      const rv = a1?.metadata.resourceVersion;
      assert.deepEqual(await migrateKeyOwners(keys(), lookup), { updated: 0, orphaned: [], failed: 0 });
      assert.equal(
        (await storage.get(KEYS + 'a1'))?.metadata.resourceVersion,
        rv,
        'a second run writes nothing',
      );
      for (const k of ['a1', 'a2', 'ghost']) await storage.delete(KEYS + k);
    });

    it('records the former owner of keys orphaned before that was recorded, so the re-created owner gets none of them', async () => {
      owners.clear();
      // bob was deleted and re-created on 2026-03-01 (another uid).
      owners.set('bob', user('bob', 'u-new-bob', '2026-03-01T00:00:00Z'));
      // Relabelled, then orphaned: the collector dropped the reference and nothing was recorded.
      await storage.create(KEYS + 'lost', storedKey('lost', 'bob', '2026-02-01T00:00:00Z'));
      // Its owner deleted without the collector having run: the reference names the old bob.
      await storage.create(KEYS + 'stale', storedKey('stale', 'bob', '2026-02-01T00:00:00Z', 'u-old-bob'));
      // Made for the new bob, stored before keys named their owner: his.
      await storage.create(KEYS + 'his', storedKey('his', 'bob', '2026-03-01T00:00:00Z'));
      // Already recorded by an orphaning delete: not written.
      await storage.create(KEYS + 'recorded', {
        ...storedKey('recorded', 'bob', '2026-02-01T00:00:00Z'),
        metadata: {
          name: 'recorded',
          uid: 'uid-recorded',
          creationTimestamp: '2026-02-01T00:00:00Z',
          annotations: { [FORMER_OWNER]: 'u-old-bob' },
        },
      });
      const recordedRv = (await storage.get(KEYS + 'recorded'))?.metadata.resourceVersion;

      const result = await migrateKeyOwners(keys(), lookup);
      assert.deepEqual(
        { ...result, orphaned: [...result.orphaned].sort() },
        {
          updated: 1,
          orphaned: ['lost', 'stale'],
          failed: 0,
        },
      );
      const lost = await storage.get(KEYS + 'lost');
      assert.equal(lost?.metadata.annotations?.[FORMER_OWNER], UNKNOWN_FORMER_OWNER);
      assert.equal(lost?.metadata.ownerReferences, undefined, 'not adopted');
      assert.equal((lost?.spec as Record<string, unknown>)['key'], HASH);
      const stale = await storage.get(KEYS + 'stale');
      assert.equal(stale?.metadata.annotations?.[FORMER_OWNER], 'u-old-bob');
      assert.deepEqual(
        stale?.metadata.ownerReferences?.map((r) => r.uid),
        ['u-old-bob'],
        'not adopted',
      );
      const his = await storage.get(KEYS + 'his');
      assert.deepEqual(
        his?.metadata.ownerReferences?.map((r) => r.uid),
        ['u-new-bob'],
      );
      assert.equal(his?.metadata.annotations?.[FORMER_OWNER], undefined);
      assert.equal((await storage.get(KEYS + 'recorded'))?.metadata.resourceVersion, recordedRv);

      // The authenticator's rule: the former owner's keys authenticate nobody, the new bob's does.
      const source = memoryIdentitySource();
      source.users.set('bob', owners.get('bob')!);
      const usability = new AccessKeyUsability(source, {
        generationAnnotation: tokenGenerationAnnotation(GROUP),
        formerOwnerAnnotation: FORMER_OWNER,
        revisionAnnotation: keyRevisionAnnotation(GROUP),
      });
      for (const [name, object] of [
        ['lost', lost],
        ['stale', stale],
      ] as const) {
        // Bob's key, made for an earlier bob: what it would say with no bob at all
        // (access-key-usability.ts); which earlier bob goes to the log only.
        assert.throws(
          () => usability.check(object!),
          new RegExp(`^ApiError: the user "bob" the access key "${name}" was made for no longer exists; `),
          name,
        );
      }
      usability.check(his!);

      // A later write, by anyone, keeps the record; a second run writes nothing.
      const rvs = await Promise.all(
        ['lost', 'stale', 'his'].map(async (k) => (await storage.get(KEYS + k))?.metadata.resourceVersion),
      );
      assert.deepEqual(await migrateKeyOwners(keys(), lookup), { updated: 0, orphaned: [], failed: 0 });
      assert.deepEqual(
        await Promise.all(
          ['lost', 'stale', 'his'].map(async (k) => (await storage.get(KEYS + k))?.metadata.resourceVersion),
        ),
        rvs,
      );
      const ctx = {
        user: { name: 'admin', groups: ['system:masters'] },
        namespace: '',
        userAgent: 'test',
        warnings: [],
      };
      const { object: relabelled } = await keys().patch!(
        ctx,
        'lost',
        'merge',
        { metadata: { labels: { x: 'y' }, annotations: { [FORMER_OWNER]: null } } },
        { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict' },
      );
      assert.equal(relabelled.metadata.annotations?.[FORMER_OWNER], UNKNOWN_FORMER_OWNER);
      assert.equal(relabelled.metadata.ownerReferences, undefined);
    });

    it('records keys a re-created User adopted from a former one, and only those', async () => {
      owners.clear();
      // carol was deleted and re-created on 2026-03-01; an older server let the new carol adopt.
      owners.set('carol', user('carol', 'u-new-carol', '2026-03-01T00:00:00Z'));
      const generation = tokenGenerationAnnotation(GROUP);
      const adoptedKey = (name: string, created: string, annotations: Record<string, string>): KubeObject => {
        const k = storedKey(name, 'carol', created, 'u-new-carol');
        return { ...k, metadata: { ...k.metadata, annotations } };
      };
      // Made while the first carol existed (a generation recorded), a month before this one.
      await storage.create(
        KEYS + 'adopted',
        adoptedKey('adopted', '2026-02-01T00:00:00Z', { [generation]: '0' }),
      );
      // Made while no carol existed (Helm applies the key before its User): no generation; hers.
      await storage.create(KEYS + 'helm', adoptedKey('helm', '2026-02-01T00:00:00Z', {}));
      // Made for this carol on a replica whose clock is a minute behind: hers.
      await storage.create(
        KEYS + 'skewed',
        adoptedKey('skewed', '2026-02-28T23:59:00Z', { [generation]: '0' }),
      );
      // Rotated since keys carry a revision: judged by its reference; hers.
      await storage.create(
        KEYS + 'rotated',
        adoptedKey('rotated', '2026-02-01T00:00:00Z', {
          [generation]: '0',
          [keyRevisionAnnotation(GROUP)]: 'r',
        }),
      );
      const names = ['adopted', 'helm', 'skewed', 'rotated'];
      const before = await Promise.all(
        names.map(async (k) => (await storage.get(KEYS + k))?.metadata.resourceVersion),
      );

      assert.deepEqual(await migrateKeyOwners(keys(), lookup), {
        updated: 0,
        orphaned: ['adopted'],
        failed: 0,
      });
      const adopted = await storage.get(KEYS + 'adopted');
      assert.equal(adopted?.metadata.annotations?.[FORMER_OWNER], UNKNOWN_FORMER_OWNER);
      assert.equal((adopted?.spec as Record<string, unknown>)['key'], HASH);
      const after = await Promise.all(
        names.map(async (k) => (await storage.get(KEYS + k))?.metadata.resourceVersion),
      );
      assert.deepEqual(after.slice(1), before.slice(1), 'the others are not written');
      assert.deepEqual(await migrateKeyOwners(keys(), lookup), { updated: 0, orphaned: [], failed: 0 });

      // The authenticator refuses the adopted key, before and after the record, and no other.
      const source = memoryIdentitySource();
      source.users.set('carol', owners.get('carol')!);
      const usability = new AccessKeyUsability(source, {
        generationAnnotation: generation,
        formerOwnerAnnotation: FORMER_OWNER,
        revisionAnnotation: keyRevisionAnnotation(GROUP),
      });
      const unrecorded = adoptedKey('adopted', '2026-02-01T00:00:00Z', { [generation]: '0' });
      for (const object of [unrecorded, adopted!]) {
        assert.throws(
          () => usability.check(object),
          /^ApiError: the user "carol" the access key "adopted" was made for no longer exists; /,
        );
      }
      for (const k of ['helm', 'skewed', 'rotated']) usability.check((await storage.get(KEYS + k))!);

      // An administrator re-adopts it deliberately: the record names this carol, and it works.
      const ctx = {
        user: { name: 'admin', groups: ['system:masters'] },
        namespace: '',
        userAgent: 'test',
        warnings: [],
      };
      const { object: readopted } = await keys().patch!(
        ctx,
        'adopted',
        'merge',
        { metadata: { annotations: { [FORMER_OWNER]: 'u-new-carol' } } },
        { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict' },
      );
      assert.equal(readopted.metadata.annotations?.[FORMER_OWNER], 'u-new-carol');
      usability.check(readopted);
      assert.deepEqual(await migrateKeyOwners(keys(), lookup), { updated: 0, orphaned: [], failed: 0 });
      for (const k of names) await storage.delete(KEYS + k);
    });
  });
}
