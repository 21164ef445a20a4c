// Encryption at rest as an operator meets it, on each backend: Global Secrets are
// stored encrypted (read the raw bytes: platform.db and its WAL, or etcd through
// etcdctl), kubectl's `get -o json | replace -f -` and `| apply -f -` work, the key
// rotation of docs/encryption.md runs exactly as written there (with
// --encryption-provider-config-automatic-reload standing in for the restarts), and a
// wrong key gives kubectl a clear error naming the object while the server runs on.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { runCommand } from './commands.js';
import { backends, GROUP, GROUP_VERSION, kubectlBinary, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { startEtcd } from '../hack/etcd.js';
import { KMSPluginDouble } from '../pkg/storage/value/kmsv2/testing/plugin-double.js';
import { eventually } from '../pkg/util/eventually.js';
import type { EtcdInstance } from '../hack/etcd.js';

const TEST = { timeout: 180_000 };
const PREFIX = { sqlite: '/registry', etcd3: '/registry-e2e' } as const;

interface Key {
  readonly name: string;
  readonly secret: string;
}

/** An EncryptionConfiguration for Global Secrets with these providers, in order. */
function providersConfig(providers: readonly object[]): string {
  return toYaml({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [{ resources: [`sharedsecrets.${GROUP}`], providers }],
  });
}

/** Secretbox with `keys`, then identity. */
function encryptionConfig(keys: readonly Key[]): string {
  return providersConfig([{ secretbox: { keys } }, { identity: {} }]);
}

function newKey(name: string): Key {
  return { name, secret: randomBytes(32).toString('base64') };
}

/** The secretbox keys of the file the server reads. */
function keysOf(file: string): Key[] {
  const match = /secretbox:\s*\n\s*keys:\s*\n\s*- name: (\S+)\s*\n\s*secret: (\S+)/.exec(readFileSync(file, 'utf8'));
  assert.ok(match, `no secretbox key in ${file}`);
  return [{ name: match[1] ?? '', secret: match[2] ?? '' }];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const backend of backends()) {
  describe(`encryption at rest (${backend})`, () => {
    let s: TestServer;
    let configFile: string;
    let workDir = '';
    let etcd: EtcdInstance | undefined;
    let args: string[] = [];
    /** A KMS v2 plugin on a unix socket in the work dir (used from the KMS cases on). */
    let plugin: KMSPluginDouble | undefined;
    /** Starts the server on what the previous one stored (a restart). */
    const start = async (): Promise<TestServer> =>
      startServer({ backend, args, dataDir: join(workDir, 'data'), ...(etcd ? { etcdEndpoint: etcd.endpoint } : {}) });
    const value = `pa55-${randomBytes(6).toString('hex')}`;
    const encoded = Buffer.from(value).toString('base64');

    before(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'enc-e2e-'));
      // One port for every start: admin.kubeconfig, written once, names it.
      args = ['--encryption-provider-config-automatic-reload=true', '--secure-port', String(await freePort())];
      if (backend === 'etcd3') {
        etcd = await startEtcd();
        // etcd has no default: the operator's file, shaped as the generated one.
        configFile = join(workDir, 'encryption-config.yaml');
        writeFileSync(configFile, encryptionConfig([newKey('key1')]), { mode: 0o600 });
        args.push('--encryption-provider-config', configFile);
      } else {
        configFile = join(workDir, 'data', 'pki', 'encryption-config.yaml');
      }
      s = await start();
    });
    after(async () => {
      await s?.stop();
      await plugin?.down();
      await etcd?.stop();
      rmSync(workDir, { recursive: true, force: true });
    });

    /** What the backend holds for Global Secret default/<name>, as bytes read past the server. */
    async function stored(name: string): Promise<Buffer> {
      if (backend === 'etcd3') {
        const key = `${PREFIX.etcd3}/${GROUP}/sharedsecrets/default/${name}`;
        const r = await runCommand('etcdctl', ['--endpoints', s.etcdEndpoint ?? '', 'get', key, '--print-value-only'], {
          env: { ...process.env, ETCDCTL_API: '3' },
        });
        assert.equal(r.code, 0, r.stderr);
        return Buffer.from(r.stdout, 'latin1');
      }
      // SQLite: the whole file and its write-ahead log, wherever the row landed.
      const db = join(s.dataDir, 'platform.db');
      return Buffer.concat([readFileSync(db), existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`) : Buffer.alloc(0)]);
    }

    function assertNoPlainValue(bytes: Buffer): void {
      assert.ok(!bytes.includes(Buffer.from(value)), 'the plain value is stored');
      assert.ok(!bytes.includes(Buffer.from(encoded)), 'the base64 value is stored');
    }

    /** Writes the file (secretbox `keys`, or this text) and waits until the server has loaded it (its log says so). */
    async function reconfigure(keys: readonly Key[] | string): Promise<void> {
      const since = new Date().toISOString();
      writeFileSync(configFile, typeof keys === 'string' ? keys : encryptionConfig(keys), { mode: 0o600 });
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const reloaded = s
          .logTail()
          .split('\n')
          .some((line) => line.includes('provider configuration reloaded') && (/"time":"([^"]+)"/.exec(line)?.[1] ?? '') >= since);
        if (reloaded) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.fail(`the server did not reload ${configFile}\n${s.logTail()}`);
    }

    /** A shell line as docs/encryption.md writes it, with `kubectl` meaning the admin's kubectl. */
    function shell(line: string): ReturnType<typeof runCommand> {
      const fn = 'kubectl() { command "$KUBECTL_BIN" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }';
      return runCommand('/bin/sh', ['-c', `${fn}\n${line}`], {
        env: { ...process.env, KUBECTL_BIN: kubectlBinary(), ADMIN_KUBECONFIG: s.kubeconfigPath },
      });
    }

    it('stores a Global Secret encrypted, and kubectl reads it back', TEST, async () => {
      if (backend === 'sqlite') {
        // The generated default: a key beside the CA, readable by the owner only.
        assert.equal(statSync(configFile).mode & 0o777, 0o600);
        assert.equal(statSync(join(s.dataDir, 'pki', 'ca.crt')).isFile(), true);
      }
      const manifest = toYaml({
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'db', namespace: 'default' },
        spec: { displayName: 'Database', data: { password: encoded } },
      });
      const created = await s.kubectl(['apply', '-f', '-'], { input: manifest });
      assert.equal(created.code, 0, created.stderr);
      const bytes = await stored('db');
      assert.ok(bytes.includes(Buffer.from(`k8s:enc:secretbox:v1:${keysOf(configFile)[0]?.name ?? 'key1'}:`)), 'no encrypted value stored');
      assertNoPlainValue(bytes);
      const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, encoded);
    });

    it('kubectl get -o json pipes into replace and apply (/api serves v1)', TEST, async () => {
      const replaced = await shell('kubectl get sharedsecrets -A -o json | kubectl replace -f -');
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.match(replaced.stdout, /sharedsecret\.management\.platform\.dev\/db replaced/);
      const applied = await shell('kubectl get sharedsecrets -A -o json | kubectl apply -f -');
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /sharedsecret\.management\.platform\.dev\/db (configured|unchanged)/);
      // The core v1 /api now advertises must not break full discovery.
      const resources = await s.kubectl(['api-resources']);
      assert.equal(resources.code, 0, resources.stderr);
      assert.match(resources.stdout, /sharedsecrets/);
    });

    it('rotates the key as docs/encryption.md says', TEST, async () => {
      const [key1] = keysOf(configFile);
      assert.ok(key1);
      const key2 = newKey('key2');
      // 1. The new key second: every server can read it before any writes with it.
      await reconfigure([key1, key2]);
      // 2. The new key first: writes use it.
      await reconfigure([key2, key1]);
      // 3. Rewrite every Global Secret (even unchanged ones: their values are stale).
      const rewrite = await shell('kubectl get sharedsecrets -A -o json | kubectl replace -f -');
      assert.equal(rewrite.code, 0, rewrite.stderr);
      const bytes = await stored('db');
      assert.ok(bytes.includes(Buffer.from('k8s:enc:secretbox:v1:key2:')), 'not rewritten with key2');
      assertNoPlainValue(bytes);
      // 4. The old key removed: everything still reads.
      await reconfigure([key2]);
      const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, encoded);
    });

    it('restarted with a wrong key, the server says which object it cannot read, and stays unready until the key is back', TEST, async () => {
      const [right] = keysOf(configFile);
      assert.ok(right);
      // A restart: the watch cache holds what it read with the right key until then.
      await s.stop();
      writeFileSync(configFile, encryptionConfig([{ name: right.name, secret: randomBytes(32).toString('base64') }]));
      // Access rules are read from every Global Secret: the server cannot be ready without them.
      await assert.rejects(
        startServer({ backend, args, dataDir: join(workDir, 'data'), startTimeoutMs: 60_000, ...(etcd ? { etcdEndpoint: etcd.endpoint } : {}) }),
        (err: Error) => {
          assert.match(err.message, /StorageError: corrupt object, Code: 7, Key: \S*\/sharedsecrets\/default\/db, .*not transformable: attempted to decrypt with an invalid key/);
          assert.ok(!err.message.includes(value) && !err.message.includes(encoded), 'the value leaked into the log');
          return true;
        },
      );
      // The right key back: nothing was lost.
      writeFileSync(configFile, encryptionConfig([right]));
      s = await start();
      const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, encoded);
    });
    it('rotates to a KMS v2 provider as the new first provider, as docs/encryption.md says', TEST, async () => {
      plugin = await KMSPluginDouble.start(join(workDir, 'kms.sock'));
      const kms = { kms: { apiVersion: 'v2', name: 'double', endpoint: plugin.endpoint, timeout: '3s' } };
      const [key] = keysOf(configFile);
      assert.ok(key);
      // 1. The kms provider second: every server can read it before any writes with it.
      await reconfigure(providersConfig([{ secretbox: { keys: [key] } }, kms, { identity: {} }]));
      // 2. The kms provider first: new writes use a DEK the plugin wrapped.
      await reconfigure(providersConfig([kms, { secretbox: { keys: [key] } }, { identity: {} }]));
      // 3. Rewrite every Global Secret: secretbox values are stale now.
      const rewrite = await shell('kubectl get sharedsecrets -A -o json | kubectl replace -f -');
      assert.equal(rewrite.code, 0, rewrite.stderr);
      const bytes = await stored('db');
      assert.ok(bytes.includes(Buffer.from('k8s:enc:kms:v2:double:')), 'not rewritten with the kms provider');
      assert.ok(bytes.includes(Buffer.from(plugin.keyId)), "the EncryptedObject does not carry the plugin's key id");
      assertNoPlainValue(bytes);
      // 4. The old provider removed: the reloaded configuration connects to the plugin itself.
      const encrypts = plugin.calls.encrypt;
      await reconfigure(providersConfig([kms, { identity: {} }]));
      assert.ok(plugin.calls.encrypt > encrypts, 'the reloaded kms provider did not ask the plugin for a DEK');
      const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, encoded);
    });

    it("follows the plugin's key rotation: a new DEK under the new key id, old values still read", TEST, async () => {
      assert.ok(plugin, 'the previous case starts the plugin');
      const oldKeyId = plugin.keyId;
      const newKeyId = plugin.rotate();
      // The Status poll (every minute; a health check asks too, at most every 20 s) sees the new key id;
      // from then on the stored value is stale and a replace rewrites it under the new one.
      await eventually(
        async () => {
          await s.api('GET', '/readyz/kms-providers');
          const rewrite = await shell('kubectl get sharedsecrets -A -o json | kubectl replace -f -');
          assert.equal(rewrite.code, 0, rewrite.stderr);
          const bytes = await stored('db');
          assert.ok(bytes.includes(Buffer.from(newKeyId)), `still under ${oldKeyId}`);
        },
        90_000,
        2_000,
      );
      assertNoPlainValue(await stored('db'));
      const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout, encoded);
    });

    it('reports a KMS plugin that is down on /readyz and /healthz, keeps serving what it read, and recovers', TEST, async () => {
      assert.ok(plugin, 'the previous cases start the plugin');
      await plugin.down();
      try {
        const failing = await eventually(
          async () => {
            const r = await s.api('GET', '/readyz?verbose');
            assert.equal(r.status, 500, r.text);
            return r;
          },
          60_000,
          1_000,
        );
        assert.match(failing.text, /\[-\]kms-providers failed: reason withheld/);
        const why = await s.api('GET', '/healthz/kms-providers');
        assert.equal(why.status, 500);
        assert.match(why.text, /kms-provider-0: failed to perform status section of the healthz check for KMS Provider double/);
        const got = await s.kubectl(['get', 'sharedsecret', 'db', '-n', 'default', '-o', 'jsonpath={.spec.data.password}']);
        assert.equal(got.code, 0, got.stderr);
        assert.equal(got.stdout, encoded);
      } finally {
        await plugin.up();
      }
      await eventually(
        async () => {
          const r = await s.api('GET', '/readyz');
          assert.equal(r.status, 200, r.text);
        },
        60_000,
        1_000,
      );
    });
  });
}
