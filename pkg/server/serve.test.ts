// The whole server in this process: options -> config -> run, then real HTTPS
// requests with the generated CA and the bootstrap admin's key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeConfig } from '../kubeconfig/types.js';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions } from '../apiserver/options/server-run-options.js';
import { run, type RunningServer } from './serve.js';
import { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
import { SqliteKV } from '../storage/sqlite/sqlite-kv.js';
import { httpsCall, type Answer } from './testing.js';
import { eventually } from '../util/eventually.js';

const GROUP = 'management.platform.dev';

function get(url: string, ca: string, token?: string, onResponse?: () => void): Promise<Answer> {
  return httpsCall(url, ca, { token, onResponse });
}

function send(
  method: string,
  url: string,
  ca: string,
  token: string,
  body: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  return httpsCall(url, ca, { method, token, body, contentType });
}

function capture(): { logger: JsonLogger; lines: () => Record<string, unknown>[] } {
  let text = '';
  const logger = new JsonLogger('info', { write: (chunk: string) => ((text += chunk), true) });
  return {
    logger,
    lines: () =>
      text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function start(
  dataDir: string,
): Promise<{ server: RunningServer; lines: () => Record<string, unknown>[] }> {
  const options = new ServerOptions({ dataDir, securePort: 0, logLevel: 'info' }).complete();
  assert.deepEqual(options.validate(), []);
  const { logger, lines } = capture();
  const server = await run(options, logger, { shutdownTimeoutMs: 5000 });
  return { server, lines };
}

test('a started server is ready, serves the admin over its kube config, and stops cleanly', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'serve-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await start(dataDir);
  let stopped = false;
  t.after(async () => {
    if (!stopped) await first.server.stop();
  });

  // The "serving" line tells where, with the port the OS picked.
  const serving = first.lines().find((l) => l.msg === 'serving');
  assert.equal(serving?.url, first.server.url);
  assert.match(String(serving?.url), /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(first.server.port, 0);

  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  const cluster = kubeconfig.clusters[0]?.cluster;
  const ca = Buffer.from(cluster?.['certificate-authority-data'] ?? '', 'base64').toString();
  const token = kubeconfig.users[0]?.user.token ?? '';
  assert.equal(cluster?.server, `${first.server.url}/kubernetes/management`);
  assert.ok(!first.lines().some((l) => JSON.stringify(l).includes(token)), 'the key is never logged');

  const ready = await get(`${first.server.url}/readyz`, ca);
  assert.deepEqual({ status: ready.status, text: ready.text }, { status: 200, text: 'ok' });

  const list = await get(`${cluster?.server}/apis/${GROUP}/v1/users`, ca, token);
  assert.equal(list.status, 200, list.text);
  const users = JSON.parse(list.text) as { kind: string; items: { metadata: { name: string } }[] };
  assert.equal(users.kind, 'UserList');
  assert.deepEqual(
    users.items.map((u) => u.metadata.name),
    ['admin'],
  );

  assert.equal((await get(`${cluster?.server}/apis/${GROUP}/v1/users`, ca)).status, 401);
  assert.equal((await get(`${cluster?.server}/apis/${GROUP}/v1/users`, ca, 'not-a-key')).status, 401);

  // A watch open at shutdown ends cleanly, and stop() returns.
  let watchOpen!: () => void;
  const opened = new Promise<void>((resolve) => (watchOpen = resolve));
  const watch = get(`${cluster?.server}/apis/${GROUP}/v1/teams?watch=true`, ca, token, watchOpen);
  await opened;
  await first.server.stop();
  stopped = true;
  assert.equal((await watch).status, 200);
  await assert.rejects(get(`${first.server.url}/readyz`, ca), /ECONNREFUSED/);

  // A second start on the same data keeps the admin and the file, and the key still works.
  const before = readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8');
  const second = await start(dataDir);
  t.after(() => second.server.stop());
  assert.deepEqual(second.server.bootstrap, { outcome: 'skipped', reason: 'users-exist' });
  assert.equal(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8'), before);
  const again = await get(
    `${second.server.url}/kubernetes/management/apis/${GROUP}/v1/users/admin`,
    ca,
    token,
  );
  assert.equal(again.status, 200, again.text);
});

test('a key created over the API works at once; non-admins see discovery and themselves only', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'serve-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { server } = await start(dataDir);
  t.after(() => server.stop());
  const kubeconfig = parse(readFileSync(join(dataDir, ADMIN_KUBECONFIG_FILE), 'utf8')) as KubeConfig;
  const ca = Buffer.from(
    kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '',
    'base64',
  ).toString();
  const admin = kubeconfig.users[0]?.user.token ?? '';
  const api = `${server.url}/kubernetes/management/apis/${GROUP}/v1`;

  const user = await send('POST', `${api}/users`, ca, admin, {
    metadata: { name: 'bob' },
    spec: { username: 'bob' },
  });
  assert.equal(user.status, 201, user.text);
  const created = await send('POST', `${api}/ownedaccesskeys`, ca, admin, {
    metadata: { name: 'bob-key' },
    spec: { user: 'bob', type: 'User' },
  });
  assert.equal(created.status, 201, created.text);
  const bob = (JSON.parse(created.text) as { spec: { key: string } }).spec.key;
  assert.match(bob, /^[a-z]{64}$/);

  const own = await eventually(async () => {
    const r = await get(`${api}/users/bob`, ca, bob);
    assert.equal(r.status, 200, r.text);
    return r;
  });
  assert.equal((JSON.parse(own.text) as { metadata: { name: string } }).metadata.name, 'bob');
  assert.equal((await get(`${server.url}/kubernetes/management/apis`, ca, bob)).status, 200);

  // Lists hold only what the caller may see: bob is in no team.
  const teams = await get(`${api}/teams`, ca, bob);
  assert.equal(teams.status, 200, teams.text);
  assert.deepEqual((JSON.parse(teams.text) as { items: unknown[] }).items, []);
  const denied = await get(`${api}/users/admin`, ca, bob);
  assert.equal(denied.status, 403);
  assert.equal(
    (JSON.parse(denied.text) as { message: string }).message,
    `users.${GROUP} "admin" is forbidden: User "bob" cannot get resource "users" in API group "${GROUP}" at the cluster scope`,
  );

  // Disabling the key locks bob out with a message that says why.
  const disable = await send(
    'PATCH',
    `${api}/ownedaccesskeys/bob-key`,
    ca,
    admin,
    [{ op: 'add', path: '/spec/disabled', value: true }],
    'application/json-patch+json',
  );
  assert.equal(disable.status, 200, disable.text);
  const locked = await eventually(async () => {
    const r = await get(`${api}/users/bob`, ca, bob);
    assert.equal(r.status, 401, r.text);
    return r;
  });
  assert.match((JSON.parse(locked.text) as { message: string }).message, /access key "bob-key" is disabled/);
});

test('a port already in use fails the start with a clear message and closes storage', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'serve-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await start(dataDir);
  t.after(() => first.server.stop());
  const options = new ServerOptions({
    dataDir: join(dataDir, 'other'),
    securePort: first.server.port,
  }).complete();
  const { logger } = capture();
  await assert.rejects(run(options, logger), /the port is in use .*choose another port with --secure-port/);
  // Storage was closed: the exclusive SQLite lock is free again.
  const kv = SqliteKV.open(join(dataDir, 'other', 'platform.db'), { lockTimeoutMs: 100 });
  await kv.create('/probe', Buffer.from('x'));
  await kv.close();
});
