// The embedded default: the first start generates a secretbox key beside the CA
// (0600) and encrypts Global Secrets; a database written before encryption is
// rewritten on start, so afterwards neither platform.db nor its WAL holds the value.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { KMSPluginDouble } from '../storage/value/kmsv2/testing/plugin-double.js';
import { eventually } from '../util/eventually.js';
import { JsonLogger } from '../util/log/index.js';
import { DEFAULT_OPTIONS, type ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { setUpEncryption } from './encryption.js';
import { openStorage, SQLITE_FILE } from './storage.js';

const quiet = new JsonLogger('error', { write: () => true });

it('encrypts a plain database on the first start with the generated key, leaving no plain value in the file or its WAL', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'enc-default-'));
  try {
    const options: ServerOptionValues = { ...DEFAULT_OPTIONS, etcdServers: [], dataDir, watchCache: false };
    const value = `plain-${randomBytes(8).toString('hex')}`;
    const key = `/registry/${options.apiGroup}/sharedsecrets/default/db`;
    // A database from before encryption: the value in plain JSON, updated once so history holds it twice.
    const before = SqliteKV.open(join(dataDir, SQLITE_FILE));
    const doc = (v: string): Buffer =>
      Buffer.from(
        JSON.stringify({
          apiVersion: `${options.apiGroup}/v1`,
          kind: 'SharedSecret',
          metadata: { name: 'db', namespace: 'default' },
          spec: { data: { v } },
        }),
      );
    const created = await before.create(key, doc(value));
    await before.update(key, doc(`${value}-2`), created.revision);
    await before.close();

    const encryption = await setUpEncryption(options, quiet);
    assert.ok(encryption?.generated);
    const file = join(dataDir, 'pki', 'encryption-config.yaml');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(
      readFileSync(file, 'utf8'),
      /secretbox:\n\s+keys:\n\s+- name: key1\n\s+secret: \S{44}\n\s+- identity: \{\}/,
    );
    const storage = await openStorage(options, quiet, encryption);
    const got = await storage.get(key);
    assert.deepEqual(got?.spec, { data: { v: `${value}-2` } });
    await storage.close();

    const db = join(dataDir, SQLITE_FILE);
    const bytes = Buffer.concat([
      readFileSync(db),
      existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`) : Buffer.alloc(0),
    ]);
    assert.ok(bytes.includes(Buffer.from('k8s:enc:secretbox:v1:key1:')));
    assert.ok(!bytes.includes(Buffer.from(value)), 'a plain value is left in platform.db or its WAL');

    // A second start reuses the key (the file is never replaced) and reads the same data.
    const text = readFileSync(file, 'utf8');
    const again = await setUpEncryption(options, quiet);
    assert.equal(readFileSync(file, 'utf8'), text);
    const reopened = await openStorage(options, quiet, again);
    assert.deepEqual((await reopened.get(key))?.spec, { data: { v: `${value}-2` } });
    await reopened.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('encrypts nothing on etcd3 without a file, and refuses a file that does not load', async () => {
  assert.equal(
    await setUpEncryption({ ...DEFAULT_OPTIONS, etcdServers: [], storageBackend: 'etcd3' }, quiet),
    undefined,
  );
  const dir = mkdtempSync(join(tmpdir(), 'enc-bad-'));
  try {
    await assert.rejects(
      setUpEncryption(
        {
          ...DEFAULT_OPTIONS,
          etcdServers: [],
          dataDir: dir,
          encryptionProviderConfig: join(dir, 'missing.yaml'),
        },
        quiet,
      ),
      /ENOENT/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a kms provider brings the kms-providers health check, which says when its plugin is down', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'enc-kms-'));
  const plugin = await KMSPluginDouble.start(join(dir, 'kms.sock'));
  const file = join(dir, 'encryption-config.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: EncryptionConfiguration',
      'resources:',
      '  - resources: [sharedsecrets.management.platform.dev]',
      `    providers: [{kms: {apiVersion: v2, name: vault, endpoint: "${plugin.endpoint}", timeout: 1s}}]`,
    ].join('\n'),
  );
  const encryption = await setUpEncryption({ ...DEFAULT_OPTIONS, etcdServers: [], dataDir: dir, encryptionProviderConfig: file }, quiet);
  try {
    assert.deepEqual(encryption?.healthChecks.map((c) => c.name), ['kms-providers']);
    const check = encryption.healthChecks[0]!;
    await check.check();
    // The first write asks nothing of the plugin: its DEK was wrapped at start.
    const key = '/registry/management.platform.dev/sharedsecrets/default/db';
    const stored = await encryption.transformerFor(key).transformToStorage(Buffer.from('{}'), Buffer.from(key));
    assert.ok(stored.subarray(0, 21).equals(Buffer.from('k8s:enc:kms:v2:vault:')));
    await plugin.down();
    // A good answer is reused for 20 s, as upstream's probe: wait for the next Status.
    await eventually(() => assert.rejects(Promise.resolve().then(() => check.check()), /kms-provider-0: failed to perform status section of the healthz check for KMS Provider vault/), 40_000, 500);
  } finally {
    encryption?.close();
    await plugin.down();
    rmSync(dir, { recursive: true, force: true });
  }
  // Without kms and without automatic reload there is nothing to check.
  const plain = mkdtempSync(join(tmpdir(), 'enc-nokms-'));
  try {
    const generated = await setUpEncryption({ ...DEFAULT_OPTIONS, etcdServers: [], dataDir: plain }, quiet);
    assert.deepEqual(generated?.healthChecks, []);
    generated?.close();
  } finally {
    rmSync(plain, { recursive: true, force: true });
  }
});
