import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KVStorage } from '../storage/store.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import type { Storage } from '../storage/interfaces.js';
import { hashAccessKey } from '../apis/management/v1/owned-access-key.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { RequestContext, RESTStorage } from '../registry/rest/interfaces.js';
import type { KubeConfig } from '../kubeconfig/types.js';
import {
  ADMIN_KUBECONFIG_FILE,
  bootstrapAdmin,
  bootstrapHandoverAnnotation,
  localServerUrl,
  type BootstrapOptions,
} from './bootstrap.js';
import { JsonLogger, silentLogger } from '../util/log/index.js';
import { ServerOptions } from '../apiserver/options/server-run-options.js';
import { buildResources, collectionPrefix, resourceStore } from './resources.js';
import { run } from './serve.js';
import { SQLITE_FILE } from './storage.js';
import { httpsCall, type Answer } from './testing.js';
import type { Logger } from '../util/log/index.js';

const GROUP = 'management.platform.dev';
const PREFIX = '/registry';
const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

function recordingLogger(): Logger & {
  lines: { level: string; msg: string; fields?: Record<string, unknown> }[];
} {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  return {
    ...silentLogger,
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

// ---- a first start that stopped half-way -------------------------------------------

const SYSTEM: RequestContext = {
  user: { name: 'test', groups: ['system:masters'] },
  namespace: '',
  warnings: [],
};
const WRITE = { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict' } as const;

/** What a first start that crashed right after creating the admin User leaves behind. */
async function createAdminOnly(resources: readonly RESTStorage[]): Promise<void> {
  await resourceStore(resources, 'users').create?.(
    { ...SYSTEM, warnings: [] },
    {
      apiVersion: `${GROUP}/v1`,
      kind: 'User',
      metadata: { name: 'admin' },
      spec: { displayName: 'Administrator', username: 'admin' },
    },
    WRITE,
  );
}

async function createKey(
  resources: readonly RESTStorage[],
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
): Promise<KubeObject> {
  const keys = resourceStore(resources, 'ownedaccesskeys');
  assert.ok(keys.create);
  return keys.create(
    { ...SYSTEM, warnings: [] },
    {
      apiVersion: `${GROUP}/v1`,
      kind: 'OwnedAccessKey',
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { user: 'admin', ...spec },
    },
    WRITE,
  );
}

/** A data directory and store as a first start left them when it stopped right after the admin User. */
async function crashedAfterAdminUser(t: { after(fn: () => void | Promise<void>): void }): Promise<{
  dataDir: string;
  storage: Storage;
  resources: RESTStorage[];
}> {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const resources = buildResources(GROUP, storage, PREFIX);
  await createAdminOnly(resources);
  return { dataDir, storage, resources };
}

function tokenInFile(dataDir: string): string {
  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  return kubeconfig.users[0]?.user.token ?? '';
}

async function storedKeys(storage: Storage): Promise<KubeObject[]> {
  return (await storage.getList(collectionPrefix(PREFIX, GROUP, 'ownedaccesskeys'), { recursive: true }))
    .items;
}

test('a start after a crash between the admin User and its key issues the key and writes the kube config', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);

  const logger = recordingLogger();
  const result = await bootstrapAdmin(options(dataDir, resources, logger));
  assert.equal(result.outcome, 'created');
  assert.equal(result.outcome === 'created' && result.recovered, true);

  const token = tokenInFile(dataDir);
  assert.match(token, /^[a-z]{64}$/);
  const keys = await storedKeys(storage);
  assert.deepEqual(
    keys.map((k) => [k.metadata.name, (k.spec as { key?: string }).key]),
    [['admin-bootstrap', hashAccessKey(token)]],
  );
  // Handed over: the pending mark is gone, so a later start counts the key as usable.
  assert.equal(keys[0]?.metadata.annotations?.[bootstrapHandoverAnnotation(GROUP)], undefined);
  assert.ok(!JSON.stringify(logger.lines).includes(token), 'the key is never logged');
  assert.ok(logger.lines.some((l) => l.level === 'warn' && /stopped before the admin key/.test(l.msg)));

  // And the next start is a plain restart again.
  const mtime = statSync(join(dataDir, ADMIN_KUBECONFIG_FILE)).mtimeMs;
  const again = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.deepEqual(again, { outcome: 'skipped', reason: 'users-exist' });
  assert.equal(statSync(join(dataDir, ADMIN_KUBECONFIG_FILE)).mtimeMs, mtime);
  assert.equal(await keyCount(storage), 1);
});

test('a start after a crash between the key and its hand-over replaces the key nobody ever saw', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  const lost = await createKey(
    resources,
    'admin-bootstrap',
    { type: 'User' },
    { [bootstrapHandoverAnnotation(GROUP)]: 'pending' },
  );

  const result = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.equal(result.outcome, 'created');
  const keys = await storedKeys(storage);
  assert.equal(keys.length, 1);
  assert.notEqual(keys[0]?.metadata.uid, lost.metadata.uid);
  assert.equal((keys[0]?.spec as { key?: string }).key, hashAccessKey(tokenInFile(dataDir)));
});

test('on shared storage, a first start still handing over on another replica is waited for, not replaced', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  // The other replica (its own data directory) has just made the User; its key comes a moment later.
  const recovering = bootstrapAdmin({
    ...options(dataDir, resources, recordingLogger()),
    handoverGraceMs: 60_000,
  });
  let settled = false;
  void recovering.then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settled, false, 'it waits while the admin User is young and has no key');
  const keys = resourceStore(resources, 'ownedaccesskeys');
  assert.ok(keys.patch);
  const theirs = await createKey(
    resources,
    'admin-bootstrap',
    { type: 'User' },
    { [bootstrapHandoverAnnotation(GROUP)]: 'pending' },
  );
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settled, false, 'it waits while the young key is pending');
  await keys.patch(
    { ...SYSTEM, warnings: [] },
    'admin-bootstrap',
    'merge',
    { metadata: { annotations: { [bootstrapHandoverAnnotation(GROUP)]: null } } },
    WRITE,
  );
  assert.deepEqual(await recovering, { outcome: 'skipped', reason: 'users-exist' });
  const stored = await storedKeys(storage);
  assert.deepEqual(
    stored.map((k) => k.metadata.uid),
    [theirs.metadata.uid],
    "the other replica's key is kept",
  );
  assert.ok(!existsSync(join(dataDir, ADMIN_KUBECONFIG_FILE)));
});

test('on shared storage, a pending key older than the grace is a crash, and is replaced', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  const lost = await createKey(
    resources,
    'admin-bootstrap',
    { type: 'User' },
    { [bootstrapHandoverAnnotation(GROUP)]: 'pending' },
  );
  // Timestamps have one-second resolution: a grace of 1 ms is over once the next second starts.
  await new Promise((r) => setTimeout(r, 1100));
  const result = await bootstrapAdmin({
    ...options(dataDir, resources, recordingLogger()),
    handoverGraceMs: 1,
  });
  assert.equal(result.outcome, 'created');
  const keys = await storedKeys(storage);
  assert.equal(keys.length, 1);
  assert.notEqual(keys[0]?.metadata.uid, lost.metadata.uid);
});

test('no kube config file but a usable admin key: nothing is issued or written', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  // The operator deleted the file after copying it, or made the admin and a key over the API.
  await createKey(resources, 'admin-laptop', { type: 'User' });

  const result = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.deepEqual(result, { outcome: 'skipped', reason: 'users-exist' });
  assert.ok(!existsSync(join(dataDir, ADMIN_KUBECONFIG_FILE)));
  assert.equal(await keyCount(storage), 1);
});

test('keys that cannot log in (disabled, older tokenGeneration) do not count: the admin gets a bootstrap key', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const resources = buildResources(GROUP, storage, PREFIX, {
    tokenGenerationOf: async (name) =>
      ((await storage.get(`${PREFIX}/${GROUP}/users/${name}`))?.spec as { tokenGeneration?: number })
        .tokenGeneration ?? 0,
  });
  await createAdminOnly(resources);
  await createKey(resources, 'admin-off', { type: 'User', disabled: true });
  await createKey(resources, 'admin-old', { type: 'User' });
  // Every token issued before is void once the generation grows.
  const users = resourceStore(resources, 'users');
  await users.patch?.({ ...SYSTEM, warnings: [] }, 'admin', 'merge', { spec: { tokenGeneration: 1 } }, WRITE);

  const result = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.equal(result.outcome, 'created');
  const names = (await storedKeys(storage)).map((k) => k.metadata.name).sort();
  assert.deepEqual(names, ['admin-bootstrap', 'admin-off', 'admin-old']);
  assert.match(tokenInFile(dataDir), /^[a-z]{64}$/);
});

test('an existing admin.kubeconfig is never overwritten, even when its key is gone', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  const file = join(dataDir, ADMIN_KUBECONFIG_FILE);
  writeFileSync(file, 'operator: kept\n', { mode: 0o600 });

  const result = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.deepEqual(result, { outcome: 'skipped', reason: 'users-exist' });
  assert.equal(readFileSync(file, 'utf8'), 'operator: kept\n');
  assert.equal(await keyCount(storage), 0);
});

test('a disabled bootstrap key is left alone, with a log line that says how to get a new one', async (t) => {
  const { dataDir, storage, resources } = await crashedAfterAdminUser(t);
  await createKey(resources, 'admin-bootstrap', { type: 'User', disabled: true });
  assert.equal(await keyCount(storage), 1);

  const logger = recordingLogger();
  const result = await bootstrapAdmin(options(dataDir, resources, logger));
  assert.deepEqual(result, { outcome: 'skipped', reason: 'users-exist' });
  assert.ok(!existsSync(join(dataDir, ADMIN_KUBECONFIG_FILE)));
  assert.ok(
    logger.lines.some((l) => l.level === 'warn' && /delete the access key "admin-bootstrap"/.test(l.msg)),
  );
  assert.equal(await keyCount(storage), 1);
});

test('first start on empty storage moves a stale admin.kubeconfig aside instead of writing over it', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const file = join(dataDir, ADMIN_KUBECONFIG_FILE);
  writeFileSync(file, 'stale: true\n', { mode: 0o600 });

  const result = await bootstrapAdmin(
    options(dataDir, buildResources(GROUP, storage, PREFIX), recordingLogger()),
  );
  assert.equal(result.outcome, 'created');
  assert.match(tokenInFile(dataDir), /^[a-z]{64}$/);
  const aside = readdirSync(dataDir).filter((f) => f.startsWith(`${ADMIN_KUBECONFIG_FILE}.stale-`));
  assert.equal(aside.length, 1);
  assert.equal(readFileSync(join(dataDir, aside[0] ?? ''), 'utf8'), 'stale: true\n');
});

test('a stale admin.kubeconfig on empty storage cannot block the recovery of a crashed first start', async (t) => {
  const { dataDir, open } = setup(t);
  const storage = open();
  t.after(() => storage.close());
  const resources = buildResources(GROUP, storage, PREFIX);
  const file = join(dataDir, ADMIN_KUBECONFIG_FILE);
  writeFileSync(file, 'stale: true\n', { mode: 0o600 });
  // The process dies right after the admin User is stored.
  const crashing = resources.map((r): RESTStorage => {
    if (r.info.resource !== 'users' || !r.create) return r;
    const create = r.create.bind(r);
    return Object.assign(Object.create(r) as RESTStorage, {
      create: async (...args: Parameters<typeof create>) => {
        await create(...args);
        throw new Error('crash');
      },
    });
  });
  await assert.rejects(bootstrapAdmin(options(dataDir, crashing, recordingLogger())), /crash/);
  assert.ok(!existsSync(file), 'the stale file was moved aside before the User was made');

  const result = await bootstrapAdmin(options(dataDir, resources, recordingLogger()));
  assert.equal(result.outcome, 'created');
  assert.equal(
    ((await storedKeys(storage))[0]?.spec as { key?: string }).key,
    hashAccessKey(tokenInFile(dataDir)),
  );
});

test('the server started on a store that holds only the admin User serves the admin over the new kube config', async (t) => {
  const { dataDir } = setup(t);
  // The crash: a first start that got as far as the User, on the server's own database file.
  const storage = new KVStorage(SqliteKV.open(join(dataDir, SQLITE_FILE)));
  await createAdminOnly(buildResources(GROUP, storage, PREFIX));
  await storage.close();

  const server = await run(
    new ServerOptions({ dataDir, securePort: 0, logLevel: 'error' }).complete(),
    new JsonLogger('error', { write: () => true }),
    { shutdownTimeoutMs: 5000 },
  );
  t.after(() => server.stop());
  assert.equal(server.bootstrap.outcome, 'created');

  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  const cluster = kubeconfig.clusters[0]?.cluster;
  const ca = Buffer.from(cluster?.['certificate-authority-data'] ?? '', 'base64').toString();
  const token = kubeconfig.users[0]?.user.token ?? '';
  const get = (path: string): Promise<Answer> => httpsCall(`${cluster?.server}/apis/${GROUP}/v1/${path}`, ca, { token });
  const admin = await get('users/admin');
  assert.equal(admin.status, 200, admin.text);
  // Through the server's own admission too, the hand-over clears the pending mark.
  const key = await get('ownedaccesskeys/admin-bootstrap');
  assert.equal(key.status, 200, key.text);
  const annotations = (JSON.parse(key.text) as KubeObject).metadata.annotations ?? {};
  assert.equal(annotations[bootstrapHandoverAnnotation(GROUP)], undefined);
});
