// Who sees what, with the real kubectl: an administrator's kube config and plain
// users' kube configs against one started server. Then what an attacker with the
// disk or the logs would find: the stored files hold only hashes of the keys, and
// no log line carries a key.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { createAccessKey } from './access-keys.js';
import { runCommand } from './commands.js';
import { eventually } from './eventually.js';
import type { CommandResult } from './commands.js';
import { GROUP, GROUP_VERSION, kubectlBinary, startServer } from './harness.js';
import type { TestServer } from './harness.js';

const TEST = { timeout: 120_000 };

interface KubeConfigDoc {
  users: { name: string; user: { token?: string } }[];
}

const workDir = mkdtempSync(join(tmpdir(), 'authz-e2e-'));
const logDir = join(workDir, 'server-logs');
let server: TestServer;
const keys: Record<string, string> = {};
const kubeconfigs: Record<string, string> = {};

function createKey(name: string, spec: Record<string, unknown>): Promise<string> {
  return createAccessKey(server, name, spec);
}

/** The admin's kube config with another user's key in it. */
function kubeconfigFor(who: string, token: string): string {
  const doc = parseYaml(readFileSync(server.kubeconfigPath, 'utf8')) as KubeConfigDoc;
  for (const u of doc.users) u.user.token = token;
  const path = join(workDir, `${who}.kubeconfig`);
  writeFileSync(path, toYaml(doc), { mode: 0o600 });
  return path;
}

function kubectlAs(who: string, args: readonly string[], input?: string): Promise<CommandResult> {
  const config = who === 'admin' ? server.kubeconfigPath : kubeconfigs[who];
  assert.ok(config, `no kube config for ${who}`);
  return runCommand(
    kubectlBinary(),
    ['--kubeconfig', config, '--cache-dir', join(workDir, `cache-${who}`), ...args],
    {
      ...(input === undefined ? {} : { input }),
    },
  );
}

async function names(who: string, args: readonly string[]): Promise<string[]> {
  const r = await kubectlAs(who, [...args, '-o', 'name']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(l.indexOf('/') + 1))
    .sort();
}

const manifest = (objects: Record<string, unknown>[]): string => objects.map((o) => toYaml(o)).join('---\n');

describe('kubectl as an administrator and as plain users', TEST, () => {
  before(async () => {
    process.env['E2E_SERVER_LOGS'] = logDir;
    // debug: the line per request (kube-apiserver's httplog, from -v=3) is checked for keys below.
    server = await startServer({ backend: 'sqlite', args: ['--log-level', 'debug'] });
    keys['admin'] = server.token;
    const apply = await kubectlAs(
      'admin',
      ['apply', '-f', '-'],
      manifest([
        {
          apiVersion: GROUP_VERSION,
          kind: 'User',
          metadata: { name: 'alice' },
          spec: { groups: ['sso-devs'] },
        },
        { apiVersion: GROUP_VERSION, kind: 'User', metadata: { name: 'bob' }, spec: {} },
        {
          apiVersion: GROUP_VERSION,
          kind: 'Team',
          metadata: { name: 'devs' },
          spec: { groups: ['sso-devs'] },
        },
        { apiVersion: GROUP_VERSION, kind: 'Team', metadata: { name: 'ops' }, spec: {} },
        {
          apiVersion: GROUP_VERSION,
          kind: 'SharedSecret',
          metadata: { name: 'for-devs', namespace: 'team-a' },
          spec: { data: { token: 'ZGV2cw==' }, access: [{ verbs: ['get'], teams: ['devs'] }] },
        },
        {
          apiVersion: GROUP_VERSION,
          kind: 'SharedSecret',
          metadata: { name: 'private', namespace: 'team-a' },
          spec: { data: { token: 'cHJpdmF0ZQ==' } },
        },
      ]),
    );
    assert.equal(apply.code, 0, apply.stderr);
    keys['alice'] = await createKey('alice-laptop', { user: 'alice', type: 'User' });
    keys['bob'] = await createKey('bob-laptop', { user: 'bob', type: 'User' });
    kubeconfigs['alice'] = kubeconfigFor('alice', keys['alice']);
    kubeconfigs['bob'] = kubeconfigFor('bob', keys['bob']);
    await eventually(async () => assert.equal((await kubectlAs('bob', ['get', 'user', 'bob'])).code, 0));
  });

  after(async () => {
    await server?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('lists hold what each may see', TEST, async () => {
    assert.deepEqual(await names('admin', ['get', 'users']), ['admin', 'alice', 'bob']);
    assert.deepEqual(await names('bob', ['get', 'users']), ['bob']);
    assert.deepEqual(await names('admin', ['get', 'teams']), ['devs', 'ops']);
    assert.deepEqual(await names('alice', ['get', 'teams']), ['devs']);
    assert.deepEqual(await names('bob', ['get', 'teams']), []);
    assert.deepEqual(await names('admin', ['get', 'sharedsecrets', '-n', 'team-a']), ['for-devs', 'private']);
    assert.deepEqual(await names('alice', ['get', 'sharedsecrets', '-n', 'team-a']), ['for-devs']);
    assert.deepEqual(await names('bob', ['get', 'sharedsecrets', '-A']), []);
    // The table view (the default output) is filtered the same way.
    const table = await kubectlAs('bob', ['get', 'teams']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stderr, /No resources found/);
  });

  it('a plain user is refused with Kubernetes’ words', TEST, async () => {
    const get = await kubectlAs('bob', ['get', 'user', 'alice']);
    assert.equal(get.code, 1);
    assert.equal(
      get.stderr.trim(),
      `Error from server (Forbidden): users.${GROUP} "alice" is forbidden: User "bob" cannot get resource "users" in API group "${GROUP}" at the cluster scope`,
    );
    const del = await kubectlAs('alice', ['delete', 'team', 'devs']);
    assert.equal(del.code, 1);
    assert.match(del.stderr, /User "alice" cannot delete resource "teams"/);
    const secret = await kubectlAs('alice', ['get', 'sharedsecret', 'private', '-n', 'team-a']);
    assert.match(secret.stderr, /Forbidden/);
    // What the administrator can do, the plain user cannot.
    assert.equal((await kubectlAs('admin', ['get', 'sharedsecret', 'private', '-n', 'team-a'])).code, 0);
  });

  it('users manage their own keys and nobody else’s', TEST, async () => {
    const own = await kubectlAs(
      'alice',
      ['create', '-f', '-', '-o', 'json'],
      toYaml({
        apiVersion: GROUP_VERSION,
        kind: 'OwnedAccessKey',
        metadata: { name: 'alice-ci' },
        spec: { user: 'alice' },
      }),
    );
    assert.equal(own.code, 0, own.stderr);
    const ci = (JSON.parse(own.stdout) as { spec: { key: string } }).spec.key;
    assert.match(ci, /^[a-z]{64}$/);
    keys['alice-ci'] = ci;
    const read = await kubectlAs('alice', ['get', 'ownedaccesskey', 'alice-ci', '-o', 'json']);
    assert.equal((JSON.parse(read.stdout) as { spec: { key: string } }).spec.key, '');
    const forBob = await kubectlAs(
      'alice',
      ['create', '-f', '-'],
      toYaml({
        apiVersion: GROUP_VERSION,
        kind: 'OwnedAccessKey',
        metadata: { name: 'evil' },
        spec: { user: 'bob' },
      }),
    );
    assert.equal(forBob.code, 1);
    assert.match(forBob.stderr, /cannot create access keys of user "bob"/);
    assert.deepEqual(await names('bob', ['get', 'ownedaccesskeys']), ['bob-laptop']);
    assert.match((await kubectlAs('bob', ['delete', 'ownedaccesskey', 'alice-ci'])).stderr, /Forbidden/);
  });

  it('a disabled key locks its holder out with a message that says why', TEST, async () => {
    const disable = await kubectlAs('admin', [
      'patch',
      'ownedaccesskey',
      'bob-laptop',
      '--type=merge',
      '-p',
      '{"spec":{"disabled":true}}',
    ]);
    assert.equal(disable.code, 0, disable.stderr);
    await eventually(async () => {
      const r = await kubectlAs('bob', ['get', 'user', 'bob']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /You must be logged in to the server .*access key "bob-laptop" is disabled/);
    });
  });

  it('storage holds hashes of the keys, never the keys', TEST, async () => {
    // The SQLite files themselves, byte for byte (the database is locked while the server runs).
    const files = readdirSync(server.dataDir)
      .map((f) => join(server.dataDir, f))
      .filter((f) => statSync(f).isFile() && /platform\.db/.test(f));
    assert.ok(files.length > 0, `no database files in ${server.dataDir}`);
    const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
    for (const [who, key] of Object.entries(keys)) {
      assert.equal(bytes.includes(key), false, `the key of ${who} is stored in plain text`);
      const hash = createHash('sha256').update(key).digest('hex');
      assert.equal(bytes.includes(hash), true, `the hash of ${who}'s key is not where the test looks`);
    }
  });

  it('no key appears in any log line', TEST, async () => {
    await server.stop();
    const logs = readdirSync(logDir).map((f) => readFileSync(join(logDir, f), 'utf8'));
    const lines = logs.join('\n').split('\n');
    assert.ok(lines.filter((l) => l.includes('"request"')).length > 10, 'the requests were logged');
    for (const line of lines) {
      for (const [who, key] of Object.entries(keys))
        assert.equal(line.includes(key), false, `${who}'s key in: ${line}`);
    }
  });
});
