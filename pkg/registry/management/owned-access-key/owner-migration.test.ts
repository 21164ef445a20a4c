import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KubeObject } from '../../../apis/meta/types.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import { SqliteKV } from '../../../storage/sqlite/index.js';
import { KVStorage } from '../../../storage/store.js';
import { Store } from '../../generic/store.js';
import { formerOwnerAnnotation } from '../../../apis/management/v1/owned-access-key.js';
import { addKeyOwnerReferences } from './owner-migration.js';
import { ownedAccessKeyStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const KEYS = `/registry/${GROUP}/ownedaccesskeys/`;

/** The keys' Store, in a world whose only User is `alice`. */
function keyStore(storage: KVStorage, alice: KubeObject): Store {
  return new Store({
    strategy: ownedAccessKeyStrategy(GROUP, {
      keyOwner: (kind, name) => Promise.resolve(kind === 'User' && name === 'alice' ? alice : undefined),
    }),
    storage,
    keyPrefix: '/registry',
    compileSchema,
  });
}

test('keys stored without an owner reference get one, once; keys of no existing owner are left alone', async () => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  try {
    const alice: KubeObject = {
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
      metadata: { name: 'alice', uid: 'u-alice' },
    };
    const keys = keyStore(storage, alice);
    // As an older server stored them: no ownerReferences.
    const legacy = (name: string, user: string): KubeObject => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { user, key: 'sha256:' + '0'.repeat(64) },
    });
    await storage.create(KEYS + 'a1', legacy('a1', 'alice'));
    await storage.create(KEYS + 'ghost', legacy('ghost', 'nobody'));

    assert.deepEqual(await addKeyOwnerReferences(keys), { updated: 1, failed: 0 });
    const a1 = await storage.get(KEYS + 'a1');
    assert.deepEqual(a1?.metadata.ownerReferences, [
      { apiVersion: `${GROUP}/v1`, kind: 'User', name: 'alice', uid: 'u-alice' },
    ]);
    assert.equal(
      (a1?.spec as Record<string, unknown>)['key'],
      'sha256:' + '0'.repeat(64),
      'the key still works',
    );
    assert.equal((await storage.get(KEYS + 'ghost'))?.metadata.ownerReferences, undefined);

    const rv = a1?.metadata.resourceVersion;
    assert.deepEqual(await addKeyOwnerReferences(keys), { updated: 0, failed: 0 });
    assert.equal(
      (await storage.get(KEYS + 'a1'))?.metadata.resourceVersion,
      rv,
      'a second run writes nothing',
    );
  } finally {
    await storage.close();
  }
});

test('a key orphaned from a former owner is not given to a User re-created under its name', async () => {
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  try {
    const alice: KubeObject = {
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
      metadata: { name: 'alice', uid: 'u-new-alice' },
    };
    const keys = keyStore(storage, alice);
    // What an orphaning delete of the first alice left: no reference, the lost uid recorded.
    await storage.create(KEYS + 'orphan', {
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: {
        name: 'orphan',
        uid: 'uid-orphan',
        creationTimestamp: '2026-01-01T00:00:00Z',
        annotations: { [formerOwnerAnnotation(GROUP)]: 'u-old-alice' },
      },
      spec: { user: 'alice', key: 'sha256:' + '0'.repeat(64) },
    });
    const rv = (await storage.get(KEYS + 'orphan'))?.metadata.resourceVersion;
    assert.deepEqual(await addKeyOwnerReferences(keys), { updated: 0, failed: 0 });
    const after = await storage.get(KEYS + 'orphan');
    assert.equal(after?.metadata.ownerReferences, undefined);
    assert.equal(after?.metadata.resourceVersion, rv, 'the key is not written');
  } finally {
    await storage.close();
  }
});
