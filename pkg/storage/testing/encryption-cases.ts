// Encryption at rest, case by case, for any backend: every provider's values round-
// trip through KVStorage and the watch cache, while the backend itself holds only the
// provider's prefix and ciphertext; a rotation rewrites stale values; a value that
// no provider can read fails naming its key, and a list names every such object
// while the others stay intact. A backend's test file calls runEncryptionConformance
// with a way to open its raw KV.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import { CachedStorage } from '../cacher/index.js';
import { isStorageError } from '../errors.js';
import type { Storage } from '../interfaces.js';
import type { KV } from '../kv.js';
import { KVStorage } from '../store.js';
import { TransformedKV } from '../transformed-kv.js';
import { AesCbcTransformer, AesGcmTransformer } from '../value/aes.js';
import { IDENTITY } from '../value/identity.js';
import { SecretboxTransformer } from '../value/secretbox.js';
import type { PrefixTransformer, Transformer } from '../value/transformer.js';
import { PrefixTransformers } from '../value/transformer.js';
import { EventReader, names, widget } from './helpers.js';

export interface RawBackend {
  /** The backend's KV: what it holds is what a disk or a backup holds. */
  readonly kv: KV;
  cleanup(): Promise<void>;
}

/** A named provider as a configuration would make it: `k8s:enc:<provider>:v1:<key>:` then its layout. */
export type ProviderFactory = (keyName: string, secret: Buffer) => PrefixTransformer;

function provider(name: string, make: (secret: Buffer) => Transformer): ProviderFactory {
  return (keyName, secret) => ({ prefix: Buffer.from(`k8s:enc:${name}:v1:${keyName}:`), transformer: make(secret) });
}

export const PROVIDERS: Readonly<Record<string, ProviderFactory>> = {
  aescbc: provider('aescbc', (k) => new AesCbcTransformer(k)),
  aesgcm: provider('aesgcm', (k) => new AesGcmTransformer(k)),
  secretbox: provider('secretbox', (k) => new SecretboxTransformer(k)),
};

const IDENTITY_PROVIDER: PrefixTransformer = { prefix: Buffer.alloc(0), transformer: IDENTITY };
const SECRET = 'correct-horse-battery-staple';

function secretObject(name: string): KubeObject {
  return widget(name, { namespace: 'default', spec: { data: { password: Buffer.from(SECRET).toString('base64'), plain: SECRET } } });
}

/** Every store a case opened: closed (with their watches) before the backend is. */
const opened: Storage[] = [];

/** KVStorage (optionally under the watch cache) over `raw`, encrypting with `chain` (first writes). */
function encryptedStorage(raw: KV, chain: readonly PrefixTransformer[], cached: boolean, root: string): { storage: Storage; kv: KV } {
  const transformer = new PrefixTransformers(chain, 'no matching prefix found');
  // Closing a store must not close the backend the other stores share.
  const shared: KV = {
    get: (key, revision) => raw.get(key, revision),
    range: (start, end, options) => raw.range(start, end, options),
    create: (key, value) => raw.create(key, value),
    update: (key, value, rev) => raw.update(key, value, rev),
    delete: (key, rev) => raw.delete(key, rev),
    watch: (prefix, from, handlers) => raw.watch(prefix, from, handlers),
    currentRevision: () => raw.currentRevision(),
    compactedRevision: () => raw.compactedRevision(),
    compact: (revision) => raw.compact(revision),
    close: () => Promise.resolve(),
  };
  const kv = new TransformedKV(shared, () => transformer);
  const base = new KVStorage(kv);
  const storage = cached
    ? new CachedStorage({ storage: base, kv, resourcePrefix: (k) => (k.startsWith(root) ? root : undefined) })
    : base;
  opened.push(storage);
  return { storage, kv };
}

async function rawBytes(raw: KV, key: string): Promise<Buffer> {
  const { kv } = await raw.get(key);
  assert.ok(kv, `no value stored at ${key}`);
  return kv.value;
}

function assertCiphertext(bytes: Buffer, prefix: Buffer): void {
  assert.ok(bytes.subarray(0, prefix.length).equals(prefix), `stored value starts with ${bytes.subarray(0, 30).toString('latin1')}`);
  assert.ok(!bytes.includes(Buffer.from(SECRET)), 'the plain value is in the stored bytes');
  assert.ok(!bytes.includes(Buffer.from(Buffer.from(SECRET).toString('base64'))), 'the base64 value is in the stored bytes');
}

export function runEncryptionConformance(name: string, open: () => Promise<RawBackend>): void {
  describe(`encryption at rest: ${name}`, () => {
    let backend: RawBackend | undefined;
    const run = randomBytes(4).toString('hex');
    let counter = 0;
    const root = (label: string): string => `/registry/enc-${run}/${label}-${++counter}/`;
    const raw = (): KV => {
      if (!backend) throw new Error('the backend was not opened');
      return backend.kv;
    };
    before(async () => {
      backend = await open();
    });
    after(async () => {
      for (const storage of opened.splice(0)) await storage.close();
      await backend?.cleanup();
    });

    for (const [providerName, make] of Object.entries(PROVIDERS)) {
      for (const cached of [false, true]) {
        it(`${providerName}${cached ? ' (watch cache)' : ''}: create, get, list and watch see the object; the backend holds only ciphertext`, async () => {
          const dir = root(providerName);
          const p = make('key1', randomBytes(32));
          const { storage } = encryptedStorage(raw(), [p], cached, dir);
          const watcher = await storage.watch(dir, { resourceVersion: String(await storage.currentResourceVersion()) });
          const events = new EventReader(watcher);
          try {
            const created = await storage.create(`${dir}a`, secretObject('a'));
            assertCiphertext(await rawBytes(raw(), `${dir}a`), p.prefix);
            const got = await storage.get(`${dir}a`);
            assert.deepEqual(got?.spec, secretObject('a').spec);
            assert.equal(got?.metadata.resourceVersion, created.metadata.resourceVersion);
            const list = await storage.getList(dir, { resourceVersion: created.metadata.resourceVersion ?? '' });
            assert.deepEqual(names(list.items), ['a']);
            const event = await events.nextChange();
            assert.equal(event.type, 'ADDED');
            assert.deepEqual(event.object.spec, secretObject('a').spec);
            const updated = await storage.guaranteedUpdate(`${dir}a`, (cur) => {
              assert.ok(cur);
              return { ...cur, spec: { ...(cur.spec as Record<string, unknown>), extra: 'x' } };
            });
            assert.equal((updated.spec as { extra?: string }).extra, 'x');
            assertCiphertext(await rawBytes(raw(), `${dir}a`), p.prefix);
            assert.equal((await events.nextChange()).type, 'MODIFIED');
          } finally {
            watcher.stop();
          }
        });
      }
    }

    it('a value the first provider cannot encrypt (a KMS plugin without a data key) fails the write with the reason; nothing is stored', async () => {
      const dir = root('unencryptable');
      const refusing: PrefixTransformer = {
        prefix: Buffer.from('k8s:enc:kms:v2:down:'),
        transformer: {
          transformFromStorage: () => Promise.reject(new Error('cannot read')),
          transformToStorage: () => Promise.reject(new Error('KMS v2 provider "down" cannot encrypt: got unexpected nil transformer')),
        },
      };
      const { storage } = encryptedStorage(raw(), [refusing, IDENTITY_PROVIDER], false, dir);
      await assert.rejects(storage.create(`${dir}a`, secretObject('a')), (err: unknown) => {
        assert.ok(isStorageError(err, 'Internal'), String(err));
        assert.equal(err.message, 'KMS v2 provider "down" cannot encrypt: got unexpected nil transformer');
        return true;
      });
      assert.equal((await raw().get(`${dir}a`)).kv, undefined);
    });

    it('aesgcm: a value copied under another key does not decrypt, and the error names that key', async () => {
      const dir = root('copied');
      const { storage } = encryptedStorage(raw(), [PROVIDERS['aesgcm']!('key1', randomBytes(32))], false, dir);
      await storage.create(`${dir}a`, secretObject('a'));
      assert.ok((await raw().create(`${dir}b`, await rawBytes(raw(), `${dir}a`))).ok);
      await assert.rejects(storage.get(`${dir}b`), (err: unknown) => {
        assert.ok(isStorageError(err, 'Internal') && err.corrupt, String(err));
        assert.match(err.message, new RegExp(`^StorageError: corrupt object, Code: 7, Key: ${dir}b, ResourceVersion: \\d+, AdditionalErrorMsg: data from the storage is not transformable`));
        assert.ok(!err.message.includes(SECRET));
        return true;
      });
    });

    for (const cached of [false, true]) {
      it(`rotation${cached ? ' (watch cache)' : ''}: a value read with the second provider is stale, and an unchanged update rewrites it with the first`, async () => {
        const dir = root('rotate');
        const oldKey = PROVIDERS['aescbc']!('old', randomBytes(32));
        const newKey = PROVIDERS['secretbox']!('new', randomBytes(32));
        const before = encryptedStorage(raw(), [oldKey, IDENTITY_PROVIDER], cached, dir).storage;
        await before.create(`${dir}a`, secretObject('a'));
        // Stored before encryption was on: plain text, read through identity.
        assert.ok((await raw().create(`${dir}plain`, Buffer.from(JSON.stringify(secretObject('plain'))))).ok);
        const after = encryptedStorage(raw(), [newKey, oldKey, IDENTITY_PROVIDER], cached, dir).storage;
        for (const n of ['a', 'plain']) {
          const current = await after.get(`${dir}${n}`);
          assert.ok(current);
          // What `kubectl replace` does with an unchanged object: an update that changes nothing.
          const rewritten = await after.guaranteedUpdate(`${dir}${n}`, (cur) => cur as KubeObject, cached ? { cached: current } : {});
          assert.notEqual(rewritten.metadata.resourceVersion, current.metadata.resourceVersion, `${n} was not rewritten`);
          assertCiphertext(await rawBytes(raw(), `${dir}${n}`), newKey.prefix);
          // Now current: another unchanged update writes nothing.
          const again = await after.guaranteedUpdate(`${dir}${n}`, (cur) => cur as KubeObject);
          assert.equal(again.metadata.resourceVersion, rewritten.metadata.resourceVersion);
        }
        // The old key removed: everything still reads.
        const only = encryptedStorage(raw(), [newKey], false, dir).storage;
        assert.deepEqual(names((await only.getList(dir)).items), ['a', 'plain']);
      });
    }

    for (const cached of [false, true]) {
      it(`a value no provider can read${cached ? ' (watch cache)' : ''}: get names it, a list names every such object, the others stay intact`, async () => {
        const dir = root('lost');
        const lostKey = PROVIDERS['aesgcm']!('key1', randomBytes(32));
        const keptKey = PROVIDERS['aesgcm']!('key2', randomBytes(32));
        const writerLost = encryptedStorage(raw(), [lostKey], false, dir).storage;
        await writerLost.create(`${dir}x1`, secretObject('x1'));
        await writerLost.create(`${dir}x2`, secretObject('x2'));
        const writerKept = encryptedStorage(raw(), [keptKey], false, dir).storage;
        await writerKept.create(`${dir}ok`, secretObject('ok'));

        // key1 is gone (a wrong or missing key): only key2 is configured.
        const storage = encryptedStorage(raw(), [keptKey], cached, dir).storage;
        assert.equal((await storage.get(`${dir}ok`))?.metadata.name, 'ok');
        await assert.rejects(storage.get(`${dir}x1`), (err: unknown) => {
          assert.ok(isStorageError(err, 'Internal'));
          assert.match(err.message, new RegExp(`Key: ${dir}x1, .*not transformable: no matching prefix found`));
          return true;
        });
        // A wrong key under the right name: the cipher refuses it, with Go's words.
        const wrong = encryptedStorage(raw(), [keptKey, PROVIDERS['aesgcm']!('key1', randomBytes(32))], false, dir).storage;
        await assert.rejects(wrong.get(`${dir}x1`), /not transformable: cipher: message authentication failed/);
        await assert.rejects(storage.getList(dir), (err: unknown) => {
          assert.ok(isStorageError(err, 'Internal'));
          assert.match(err.message, /^unable to transform or decode 2 objects: \{\n\t/);
          assert.ok(err.message.includes(`Key: ${dir}x1,`) && err.message.includes(`Key: ${dir}x2,`));
          assert.ok(!err.message.includes(`Key: ${dir}ok,`));
          assert.ok(!err.message.includes(SECRET));
          return true;
        });
        // Nothing was lost: with the key back, everything reads.
        const restored = encryptedStorage(raw(), [keptKey, lostKey], false, dir).storage;
        assert.deepEqual(names((await restored.getList(dir)).items), ['ok', 'x1', 'x2']);
      });
    }
  });
}
