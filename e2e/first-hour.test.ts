// What a new user meets in the first hour, with the real kubectl. `kubectl version`
// without a skew warning. "May I?" and "who am I?": `kubectl auth can-i` (one question,
// and --list) and `kubectl auth whoami`, for each kind of caller (an administrator,
// an ordinary user, a team's key, a scoped key, a disabled key), answered by the
// same rules that decide the caller's real requests. kubectl 1.32 sends these
// reviews in protobuf; Debian's kubectl 1.20 in JSON and has no `auth whoami` (the
// same SelfSubjectReview then goes through `kubectl create --raw`).

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { CAN_I_GET_SHARED_SECRET_IN_CI } from '../pkg/apis/authorization/v1/testing/kubectl-captures.js';
import { cliRunner } from './cli-runner.js';
import type { CommandOptions, CommandResult } from './commands.js';
import { apiRequest } from './https-client.js';
import { GROUP, GROUP_VERSION, kubectlMinorVersion, kubectlWhoami, startServer } from './harness.js';
import type { TestServer } from './harness.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;

let server: TestServer;
let kubectlMinor = 0;
const keys: Record<string, string> = {};

async function create(
  path: string,
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  namespace?: string,
) {
  const r = await server.api('POST', `${V1}${path}`, {
    apiVersion: GROUP_VERSION,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec,
  });
  assert.equal(r.status, 201, r.text);
  return JSON.parse(r.text) as { spec: { key?: string } };
}

async function createKey(name: string, spec: Record<string, unknown>): Promise<void> {
  const created = await create('/ownedaccesskeys', 'OwnedAccessKey', name, spec);
  assert.ok(created.spec.key, 'the key is returned on create');
  keys[name] = created.spec.key;
}

function kubectlWith(key: string, args: readonly string[], options?: CommandOptions): Promise<CommandResult> {
  const token = key === 'admin' ? server.token : keys[key];
  assert.ok(token, `no key ${key}`);
  return server.kubectl(['--token', token, ...args], options);
}

/** `kubectl auth can-i <args>` as `key`: true for yes, false for no; fails on anything else. */
async function canI(key: string, ...args: string[]): Promise<boolean> {
  return (await canIWhy(key, ...args)).allowed;
}

/** The answer and, for an explicit denial, kubectl's `no - <reason>`. */
async function canIWhy(key: string, ...args: string[]): Promise<{ allowed: boolean; said: string }> {
  const r = await kubectlWith(key, ['auth', 'can-i', ...args]);
  const said = r.stdout.trim();
  const answer = said.split(' ')[0];
  assert.ok(answer === 'yes' || answer === 'no', `can-i ${args.join(' ')} as ${key}: ${r.stdout}${r.stderr}`);
  assert.equal(r.code, answer === 'yes' ? 0 : 1, r.stderr);
  return { allowed: answer === 'yes', said };
}

interface Rule {
  resources: string;
  names: string;
  verbs: string;
}

/** `kubectl auth can-i --list` rows (resource rules only), and its stderr. */
async function listRules(key: string, namespace: string): Promise<{ rows: Rule[]; stderr: string }> {
  const r = await kubectlWith(key, ['auth', 'can-i', '--list', '-n', namespace]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '' && !line.startsWith(' '))
    .map((line) => {
      const cells = line.trim().split(/\s{2,}/);
      return { resources: cells[0] ?? '', names: cells[2] ?? '', verbs: cells[3] ?? '' };
    });
  return { rows, stderr: r.stderr };
}

/** The review `auth whoami -o json` prints (for kubectl before 1.27, its request through create --raw). */
async function whoami(key: string): Promise<Record<string, string>> {
  const call = await kubectlWhoami([]);
  const r = await kubectlWith(key, call.args, call.options);
  assert.equal(r.code, 0, r.stderr);
  const review = JSON.parse(r.stdout) as {
    status: { userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> } };
  };
  const info = review.status.userInfo;
  return {
    username: info.username,
    groups: info.groups.join(','),
    key: (info.extra?.[`${GROUP}/access-key`] ?? []).join(','),
  };
}

describe('the first hour with kubectl: version, auth can-i, auth whoami', { timeout: 300_000 }, () => {
  before(async () => {
    server = await startServer({ backend: 'sqlite' });
    kubectlMinor = await kubectlMinorVersion();
    await create('/users', 'User', 'alice', { username: 'alice' });
    await create('/users', 'User', 'bob', { username: 'bob' });
    await create('/teams', 'Team', 'platform', { users: ['alice'] });
    // alice may get `shared` (an access rule) and owns `mine`.
    await create(
      '/namespaces/ci/sharedsecrets',
      'SharedSecret',
      'shared',
      {
        access: [{ verbs: ['get'], users: ['alice'] }],
      },
      'ci',
    );
    await create('/namespaces/ci/sharedsecrets', 'SharedSecret', 'mine', { owner: { user: 'alice' } }, 'ci');
    await createKey('alice-key', { user: 'alice' });
    await createKey('alice-cli', { user: 'alice', scope: { roles: [{ role: 'platformCLI' }] } });
    await createKey('platform-key', { team: 'platform' });
    await createKey('alice-off', { user: 'alice', disabled: true });
  });
  after(async () => {
    await server?.stop();
  });

  it('an administrator may do everything, and --list says so in one complete rule', TEST, async () => {
    assert.equal(await canI('admin', 'delete', 'teams'), true);
    assert.equal(await canI('admin', '*', '*'), true);
    assert.equal(await canI('admin', 'get', '/healthz'), true);
    const { rows, stderr } = await listRules('admin', 'ci');
    assert.deepEqual(rows, [{ resources: '*.*', names: '[]', verbs: '[*]' }]);
    assert.doesNotMatch(stderr, /incomplete/);
  });

  it(
    "an ordinary user gets the answers of their real requests: self, teams, an object's access rules",
    TEST,
    async () => {
      assert.equal(await canI('alice-key', 'get', 'users/alice'), true);
      assert.equal(await canI('alice-key', 'get', 'users/bob'), false);
      assert.equal(await canI('alice-key', 'get', 'teams/platform'), true);
      assert.equal(await canI('alice-key', 'delete', 'teams/platform'), false);
      assert.equal(await canI('alice-key', 'create', 'teams'), false);
      // The access rule of `shared` grants get, nothing else; alice owns `mine`.
      assert.equal(await canI('alice-key', 'get', 'sharedsecrets/shared', '-n', 'ci'), true);
      assert.equal(await canI('alice-key', 'delete', 'sharedsecrets/shared', '-n', 'ci'), false);
      assert.equal(await canI('alice-key', 'delete', 'sharedsecrets/mine', '-n', 'ci'), true);
      // Lists are filtered, never refused.
      assert.equal(await canI('alice-key', 'list', 'sharedsecrets', '-n', 'ci'), true);

      const { rows, stderr } = await listRules('alice-key', 'ci');
      const rule = (resources: string, names = '[]'): Rule | undefined =>
        rows.find((r) => r.resources === resources && r.names === names);
      assert.equal(rule(`users.${GROUP}`, '[alice]')?.verbs, '[get]');
      assert.equal(rule(`teams.${GROUP}`, '[platform]')?.verbs, '[get]');
      assert.equal(rule(`sharedsecrets.${GROUP}`)?.verbs, '[list watch]');
      assert.equal(rule('selfsubjectaccessreviews.authorization.k8s.io')?.verbs, '[create]');
      assert.equal(rule('*.*'), undefined, 'no wildcard for an ordinary user');
      assert.ok(!rows.some((r) => r.names === '[bob]'), 'nothing about bob');
      // Rights written on objects are per object: the list says it is incomplete.
      if (kubectlMinor >= 21) assert.match(stderr, /incomplete/);
    },
  );

  it("a team's key speaks for the team", TEST, async () => {
    assert.equal(await canI('platform-key', 'get', 'teams/platform'), true);
    assert.equal(await canI('platform-key', 'get', 'users/alice'), false);
    assert.deepEqual(await whoami('platform-key'), {
      username: 'team:platform',
      groups: 'team:platform,system:authenticated',
      key: 'platform-key',
    });
  });

  it("a scoped key gets its owner's rights narrowed by the scope", TEST, async () => {
    // platformCLI: reads only; alice herself may delete what she owns.
    assert.equal(await canI('alice-cli', 'get', 'sharedsecrets/mine', '-n', 'ci'), true);
    const denied = await canIWhy('alice-cli', 'delete', 'sharedsecrets/mine', '-n', 'ci');
    assert.equal(denied.allowed, false);
    assert.match(denied.said, /scope of access key "alice-cli" does not allow/);
    assert.equal(await canI('alice-key', 'delete', 'sharedsecrets/mine', '-n', 'ci'), true);
    const { rows } = await listRules('alice-cli', 'ci');
    assert.ok(
      !rows.some((r) => /delete|update|patch/.test(r.verbs) && r.resources.includes(GROUP)),
      JSON.stringify(rows),
    );
  });

  it('whoami names the user, the groups and the key in use, never the key itself', TEST, async () => {
    assert.deepEqual(await whoami('admin'), {
      username: 'admin',
      groups: 'system:authenticated',
      key: 'admin-bootstrap',
    });
    assert.deepEqual(await whoami('alice-key'), {
      username: 'alice',
      groups: 'system:authenticated',
      key: 'alice-key',
    });
    // kubectl 1.27+ prints a table; older kubectl prints the review it POSTed for.
    const call = await kubectlWhoami([]);
    const r = await kubectlWith(
      'alice-key',
      kubectlMinor >= 27 ? ['auth', 'whoami'] : call.args,
      kubectlMinor >= 27 ? {} : call.options,
    );
    assert.match(r.stdout, kubectlMinor >= 27 ? /Username\s+alice/ : /"username":\s*"alice"/);
    assert.ok(!r.stdout.includes(keys['alice-key'] ?? '<none>'), 'the key never appears');
  });

  it('a disabled key gets 401 with the reason, for can-i and whoami alike', TEST, async () => {
    const r = await kubectlWith('alice-off', ['auth', 'can-i', 'get', 'teams']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized|logged in/);
    const raw = await server.api(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { Authorization: `Bearer ${keys['alice-off'] ?? ''}` },
    );
    assert.equal(raw.status, 401);
    assert.match(raw.text, /is disabled/);
  });

  it(
    'answers the protobuf body kubectl 1.32 sends, byte for byte, in JSON, under both roots',
    TEST,
    async () => {
      for (const baseUrl of [server.url, server.apiBase]) {
        const r = await apiRequest(
          { baseUrl, ca: server.ca, token: keys['alice-key'] ?? '' },
          'POST',
          '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          CAN_I_GET_SHARED_SECRET_IN_CI,
          {
            'Content-Type': 'application/vnd.kubernetes.protobuf',
            Accept: 'application/vnd.kubernetes.protobuf, application/json',
          },
        );
        assert.equal(r.status, 201, `${baseUrl}: ${r.text}`);
        assert.match(r.headers['content-type'] ?? '', /^application\/json/);
        const review = JSON.parse(r.text) as { status: { allowed: boolean } };
        assert.equal(review.status.allowed, true);
      }
    },
  );

  it('kubectl version shows the platform in the server version and warns about no skew', TEST, async () => {
    const r = await server.kubectl(['version']);
    assert.equal(r.code, 0, r.stderr);
    // kubectl 1.20 prints the whole version.Info; later ones the gitVersion alone.
    const reported =
      /Server Version: (?:version\.Info\{.*GitVersion:")?v1\.(\d+)\.0\+platform\.\d+\.\d+\.\d+/.exec(
        r.stdout,
      );
    assert.ok(reported, r.stdout);
    // kubectl warns only beyond one minor version of its own (and 1.20 not at all).
    if (Math.abs(Number(reported[1]) - kubectlMinor) <= 1) {
      assert.doesNotMatch(r.stdout + r.stderr, /version difference|skew/i);
    }
  });

  it(
    'platform login takes the key from PLATFORM_ACCESS_KEY or standard input, never needing it in argv',
    TEST,
    async () => {
      const cli = cliRunner();
      try {
        const caFile = join(cli.home, 'ca.pem');
        writeFileSync(caFile, server.ca);
        const host = server.url.replace(/^https:\/\//, '');
        const key = keys['alice-key'] ?? '';
        const stored = (): string =>
          (
            JSON.parse(readFileSync(join(cli.home, '.platform', 'config.json'), 'utf8')) as {
              login: { accessKey: string };
            }
          ).login.accessKey;

        const fromEnv = await cli.ok(['login', host, '--ca-file', caFile], {
          env: { PLATFORM_ACCESS_KEY: key },
        });
        assert.match(fromEnv.stdout, /Logged in to .* as user alice with access key "alice-key"/);
        assert.equal(stored(), key);

        await cli.ok(['logout']);
        const fromStdin = await cli.ok(['login', host, '--ca-file', caFile, '--access-key', '-'], {
          input: `${key}\n`,
        });
        assert.match(fromStdin.stdout, /as user alice/);
        assert.equal(stored(), key);

        // Not a terminal and no key: no prompt that would hang a script, but where to put the key.
        const none = await cli.run(['login', host, '--ca-file', caFile], { input: '' });
        assert.equal(none.code, 2);
        assert.match(none.stderr, /no access key: set PLATFORM_ACCESS_KEY, or pass --access-key -/);

        // The old way still works.
        await cli.ok(['login', host, '--ca-file', caFile, '--access-key', server.token]);
        assert.equal(stored(), server.token);
      } finally {
        cli.cleanup();
      }
    },
  );

  it('serves the three reviews in discovery, legacy and aggregated', TEST, async () => {
    const legacy = await server.api('GET', '/apis/authorization.k8s.io/v1');
    assert.equal(legacy.status, 200, legacy.text);
    const names = (JSON.parse(legacy.text) as { resources: { name: string }[] }).resources.map((r) => r.name);
    assert.deepEqual(names.sort(), ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']);
    const r = await server.kubectl(['api-resources', '--api-group', 'authentication.k8s.io', '-o', 'name']);
    assert.equal(r.stdout.trim(), 'selfsubjectreviews.authentication.k8s.io');
  });
});
