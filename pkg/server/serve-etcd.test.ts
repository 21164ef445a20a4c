// Two replicas on one etcd, started at the same moment: exactly one admin key is
// created, and a key made through either replica works on the other at once
// (each replica's access key index follows etcd's watch).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startEtcd } from '../../hack/etcd.js';
import type { KubeConfig } from '../kubeconfig/types.js';
import { ADMIN_KUBECONFIG_FILE } from './bootstrap.js';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions } from '../apiserver/options/server-run-options.js';
import { run } from './serve.js';
import { httpsCall, type Answer } from './testing.js';
import { eventually } from '../util/eventually.js';

const GROUP = 'management.platform.dev';

const get = (url: string, ca: string, token: string): Promise<Answer> => httpsCall(url, ca, { token });

test('two replicas starting at once on etcd create one admin, and share its key', async (t) => {
  const etcd = await startEtcd();
  t.after(() => etcd.stop());
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'replica-test-')));
  t.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const quiet = new JsonLogger('error', { write: () => true });

  const servers = await Promise.all(
    dirs.map((dataDir) => {
      const options = new ServerOptions({
        dataDir,
        securePort: 0,
        storageBackend: 'etcd3',
        etcdServers: [etcd.endpoint],
        etcdPrefix: '/replica-test',
      }).complete();
      assert.deepEqual(options.validate(), []);
      return run(options, quiet, { shutdownTimeoutMs: 5000 });
    }),
  );
  t.after(() => Promise.all(servers.map((s) => s.stop())));

  const outcomes = servers.map((s) => s.bootstrap.outcome).sort();
  assert.deepEqual(outcomes, ['created', 'skipped']);
  const winner = servers.findIndex((s) => s.bootstrap.outcome === 'created');
  const loser = 1 - winner;
  assert.ok(existsSync(join(dirs[winner] ?? '', ADMIN_KUBECONFIG_FILE)));
  assert.ok(!existsSync(join(dirs[loser] ?? '', ADMIN_KUBECONFIG_FILE)));

  const kubeconfig = parse(
    readFileSync(join(dirs[winner] ?? '', ADMIN_KUBECONFIG_FILE), 'utf8'),
  ) as KubeConfig;
  const token = kubeconfig.users[0]?.user.token ?? '';
  // Each replica generated its own CA: trust both for this test.
  const cas = dirs.map((d) => readFileSync(join(d, 'pki', 'ca.crt'), 'utf8')).join('');

  // The winner is ready only once its key works; the other replica learns of the key through its watch.
  const first = await get(`${servers[winner]?.url}/apis/${GROUP}/v1/ownedaccesskeys`, cas, token);
  assert.equal(first.status, 200, first.text);
  for (const server of servers) {
    const keys = await eventually(async () => {
      const r = await get(`${server.url}/apis/${GROUP}/v1/ownedaccesskeys`, cas, token);
      assert.equal(r.status, 200, r.text);
      return r;
    });
    const names = (JSON.parse(keys.text) as { items: { metadata: { name: string } }[] }).items.map(
      (i) => i.metadata.name,
    );
    assert.deepEqual(names, ['admin-bootstrap']);
  }
});
