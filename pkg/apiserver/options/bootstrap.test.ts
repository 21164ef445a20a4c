import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KVStorage } from '../../storage/store.js';
import { SqliteKV } from '../../storage/sqlite/sqlite-kv.js';
import type { Storage } from '../../storage/interfaces.js';
import { hashAccessKey } from '../../apis/management/v1/owned-access-key.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import type { KubeConfig } from '../../kubeconfig/types.js';
import { ADMIN_KUBECONFIG_FILE, bootstrapAdmin, localServerUrl, type BootstrapOptions } from './bootstrap.js';
import { buildResources, collectionPrefix } from './resources.js';
import type { Logger } from '../config.js';

const GROUP = 'management.platform.dev';
const PREFIX = '/registry';
const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

function recordingLogger(): Logger & {
  lines: { level: string; msg: string; fields?: Record<string, unknown> }[];
} {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  return {
    lines,
    info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields) => lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields) => lines.push({ level: 'error', msg, fields }),
  };
}

function setup(t: { after(fn: () => void | Promise<void>): void }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-test-'));
  const open = (): Storage => new KVStorage(SqliteKV.open(join(dataDir, 'platform.db')));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  return { dataDir, open };
}

function options(
  dataDir: string,
  resources: readonly RESTStorage[],
  logger: Logger,
  caPem: string | null = CA,
): BootstrapOptions {
  return {
    resources,
    group: GROUP,
    adminUsername: 'admin',
    dataDir,
    serverUrl: 'https://127.0.0.1:8443/kubernetes/management',
    ...(caPem ? { caPem } : {}),
    logger,
  };
}

async function keyCount(storage: Storage): Promise<number> {
  return (await storage.getList(collectionPrefix(PREFIX, GROUP, 'ownedaccesskeys'), { recursive: true }))
    .items.length;
}

test('first start creates the admin and a kube config that carries the key; a second start changes nothing', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  const logger = recordingLogger();
  const result = await bootstrapAdmin(options(dataDir, buildResources(GROUP, storage, PREFIX), logger));
  assert.equal(result.outcome, 'created');

  const file = join(dataDir, ADMIN_KUBECONFIG_FILE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const text = readFileSync(file, 'utf8');
  const kubeconfig = parse(text) as KubeConfig;
  assert.equal(kubeconfig['current-context'], 'platform-admin');
  assert.equal(kubeconfig.clusters[0]?.cluster.server, 'https://127.0.0.1:8443/kubernetes/management');
  assert.equal(
    Buffer.from(kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
    CA,
  );
  const token = kubeconfig.users[0]?.user.token ?? '';
  assert.match(token, /^[a-z]{64}$/);

  // Storage holds the admin User and one key whose stored hash is that of the token.
  const user = await storage.get(`${PREFIX}/${GROUP}/users/admin`);
  assert.equal((user?.spec as { displayName?: string }).displayName, 'Administrator');
  const key = await storage.get(`${PREFIX}/${GROUP}/ownedaccesskeys/admin-bootstrap`);
  const spec = key?.spec as { key?: string; user?: string };
  assert.equal(spec.user, 'admin');
  assert.equal(spec.key, hashAccessKey(token));

  // The key is written to the file and nowhere in the log.
  assert.ok(!JSON.stringify(logger.lines).includes(token));
  assert.ok(logger.lines.some((l) => l.fields?.file === file));
  await storage.close();

  // Second start, same data: nothing created, the file untouched.
  const mtime = statSync(file).mtimeMs;
  const again = open();
  t.after(() => again.close());
  const second = await bootstrapAdmin(
    options(dataDir, buildResources(GROUP, again, PREFIX), recordingLogger()),
  );
  assert.deepEqual(second, { outcome: 'skipped', reason: 'users-exist' });
  assert.equal(readFileSync(file, 'utf8'), text);
  assert.equal(statSync(file).mtimeMs, mtime);
  assert.equal(await keyCount(again), 1);
});

test('two replicas bootstrapping at once create one admin key between them', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const resources = buildResources(GROUP, storage, PREFIX);
  // Hold both replicas' "are there users?" answers until both have asked, so both see none.
  let arrived = 0;
  let releaseAll!: () => void;
  const bothAsked = new Promise<void>((resolve) => (releaseAll = resolve));
  const gated = resources.map((r): RESTStorage => {
    if (r.info.resource !== 'users' || !r.list) return r;
    const list = r.list.bind(r);
    return Object.assign(Object.create(r) as RESTStorage, {
      list: async (...args: Parameters<typeof list>) => {
        const result = await list(...args);
        if (++arrived === 2) releaseAll();
        await bothAsked;
        return result;
      },
    });
  });
  const [a, b] = await Promise.all([
    bootstrapAdmin(options(dataDir, gated, recordingLogger())),
    bootstrapAdmin(options(dataDir, gated, recordingLogger())),
  ]);
  const outcomes = [a.outcome, b.outcome].sort();
  assert.deepEqual(outcomes, ['created', 'skipped']);
  const skipped = a.outcome === 'skipped' ? a : b;
  assert.deepEqual(skipped, { outcome: 'skipped', reason: 'another-replica' });
  assert.equal(await keyCount(storage), 1);
});

test('without a known CA the kube config has no CA data and the log says why', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const logger = recordingLogger();
  await bootstrapAdmin(options(dataDir, buildResources(GROUP, storage, PREFIX), logger, null));
  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  assert.equal(kubeconfig.clusters[0]?.cluster['certificate-authority-data'], undefined);
  assert.ok(logger.lines.some((l) => l.level === 'warn' && /no certificate-authority-data/.test(l.msg)));
});

test('the kube config points at loopback when the server listens on every interface', () => {
  assert.equal(
    localServerUrl('0.0.0.0', 8443, '/kubernetes/management'),
    'https://127.0.0.1:8443/kubernetes/management',
  );
  assert.equal(localServerUrl('::', 1234, ''), 'https://127.0.0.1:1234');
  assert.equal(localServerUrl('10.0.0.5', 8443, '/p'), 'https://10.0.0.5:8443/p');
  assert.equal(localServerUrl('::1', 8443, ''), 'https://[::1]:8443');
});
