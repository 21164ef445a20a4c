// /metrics of the whole server in this process (SQLite storage): object counts,
// storage calls and size, access-key authentications, and who may read it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { sample } from '../metrics/testing.js';
import { eventually } from '../util/eventually.js';
import { callServer, startWithAdmin } from './testing.js';

const GROUP = 'management.platform.dev';
const V1 = `/kubernetes/management/apis/${GROUP}/v1`;

/** status and body text, as these checks read them. */
async function call(
  url: string,
  ca: string,
  token: string,
  method = 'GET',
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const a = await callServer(url, ca, token, method, body);
  return { status: a.status, body: a.text };
}

test('/metrics reports storage, objects and authentications, to administrators and metrics-reader keys', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'metrics-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { server, ca, token: admin } = await startWithAdmin(dataDir);
  t.after(() => server.stop());
  const base = server.url;

  const team = await call(`${base}${V1}/teams`, ca, admin, 'POST', {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name: 'ops' },
    spec: {},
  });
  assert.equal(team.status, 201, team.body);

  const scrape = await call(`${base}/metrics`, ca, admin);
  assert.equal(scrape.status, 200, scrape.body);
  const text = scrape.body;
  // Counted by storage when scraped: one team, one user (the admin).
  assert.equal(sample(text, 'apiserver_resource_objects', { group: GROUP, resource: 'teams' }), 1);
  assert.equal(sample(text, 'apiserver_resource_objects', { group: GROUP, resource: 'users' }), 1);
  assert.equal(sample(text, 'apiserver_storage_objects', { resource: `teams.${GROUP}` }), 1);
  assert.ok((sample(text, 'apiserver_storage_size_bytes', { storage_cluster_id: 'etcd-0' }) ?? 0) > 0);
  // SQLite's calls are reported under etcd's names.
  assert.ok(
    (sample(text, 'etcd_requests_total', { operation: 'create', group: GROUP, resource: 'teams' }) ?? 0) >= 1,
  );
  assert.ok(
    (sample(text, 'etcd_request_duration_seconds_count', {
      operation: 'create',
      group: GROUP,
      resource: 'teams',
    }) ?? 0) >= 1,
  );
  assert.ok((sample(text, 'platform_access_key_authentications_total', { result: 'success' }) ?? 0) >= 2);

  const unknownBefore = sample(text, 'platform_access_key_authentications_total', { result: 'unknown' }) ?? 0;
  assert.equal((await call(`${base}/metrics`, ca, 'x'.repeat(64))).status, 401);
  const afterUnknown = (await call(`${base}/metrics`, ca, admin)).body;
  assert.equal(
    sample(afterUnknown, 'platform_access_key_authentications_total', { result: 'unknown' }),
    unknownBefore + 1,
  );

  // A key of the administrator's scoped to metrics-reader reads /metrics and nothing else.
  const created = await call(`${base}${V1}/ownedaccesskeys`, ca, admin, 'POST', {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name: 'prometheus' },
    spec: { user: 'admin', scope: { roles: [{ role: 'metrics-reader' }] } },
  });
  assert.equal(created.status, 201, created.body);
  const reader = (JSON.parse(created.body) as { spec: { key: string } }).spec.key;
  await eventually(async () => assert.equal((await call(`${base}/metrics`, ca, reader)).status, 200));
  assert.equal((await call(`${base}/kubernetes/management/metrics`, ca, reader)).status, 200);
  assert.equal((await call(`${base}${V1}/teams`, ca, reader)).status, 403);

  // A user who is no administrator may not read it, whatever the key's scope.
  const user = await call(`${base}${V1}/users`, ca, admin, 'POST', {
    apiVersion: `${GROUP}/v1`,
    kind: 'User',
    metadata: { name: 'bob' },
    spec: { username: 'bob' },
  });
  assert.equal(user.status, 201, user.body);
  const bobKey = await call(`${base}${V1}/ownedaccesskeys`, ca, admin, 'POST', {
    apiVersion: `${GROUP}/v1`,
    kind: 'OwnedAccessKey',
    metadata: { name: 'bob-metrics' },
    spec: { user: 'bob', scope: { roles: [{ role: 'metrics-reader' }] } },
  });
  assert.equal(bobKey.status, 201, bobKey.body);
  const bob = (JSON.parse(bobKey.body) as { spec: { key: string } }).spec.key;
  await eventually(async () => {
    const res = await call(`${base}/metrics`, ca, bob);
    assert.equal(res.status, 403, res.body);
    assert.match(res.body, /cannot get path \\"\/metrics\\"/);
  });
});
