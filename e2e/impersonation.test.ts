// User impersonation with the real kubectl (--as, --as-group, --as-uid, auth can-i
// --as, auth whoami --as) against one started server: the administrator acts as a
// plain user and is limited to that user's rights; a plain user is refused with
// kube-apiserver's wording; the audit log records who impersonated whom. Debian's
// kubectl 1.20 has neither `auth whoami` (1.27) nor --as-uid (1.23): with it, the same
// SelfSubjectReview goes through `kubectl create --raw`, impersonated alike.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { Event } from '../pkg/audit/types.js';
import { createAccessKey } from './access-keys.js';
import { runCommand, type CommandOptions, type CommandResult } from './commands.js';
import { eventually } from './eventually.js';
import { apiRequest } from './https-client.js';
import {
  GROUP,
  GROUP_VERSION,
  kubectlBinary,
  kubectlMinorVersion,
  kubectlWhoami,
  startServer,
  type TestServer,
} from './harness.js';

const TEST = { timeout: 120_000 };

const POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  rules: [{ level: 'Metadata' }],
};

interface KubeConfigDoc {
  users: { name: string; user: { token?: string } }[];
}

const workDir = mkdtempSync(join(tmpdir(), 'impersonation-e2e-'));
const auditLog = join(workDir, 'audit', 'audit.log');
let server: TestServer;
let aliceConfig = '';
let kubectlMinor = 0;

/** kubectl with the admin's kube config, or with alice's own key. */
function kubectl(
  who: 'admin' | 'alice',
  args: readonly string[],
  options?: CommandOptions,
): Promise<CommandResult> {
  const config = who === 'admin' ? server.kubeconfigPath : aliceConfig;
  return runCommand(
    kubectlBinary(),
    ['--kubeconfig', config, '--cache-dir', join(workDir, `cache-${who}`), ...args],
    options,
  );
}

/** "Who am I?" with the given --as flags (harness.ts kubectlWhoami), printing the review as JSON. */
async function whoami(who: 'admin' | 'alice', impersonation: readonly string[]): Promise<CommandResult> {
  const call = await kubectlWhoami(impersonation);
  return kubectl(who, call.args, call.options);
}

async function names(who: 'admin' | 'alice', args: readonly string[]): Promise<string[]> {
  const r = await kubectl(who, [...args, '-o', 'name']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(l.indexOf('/') + 1))
    .sort();
}

function auditEvents(): Event[] {
  return readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

describe('impersonation with kubectl', TEST, () => {
  before(async () => {
    kubectlMinor = await kubectlMinorVersion();
    const policyFile = join(workDir, 'policy.yaml');
    writeFileSync(policyFile, toYaml(POLICY));
    server = await startServer({
      backend: 'sqlite',
      // debug: the request log's lines (kube-apiserver's httplog, from -v=3) are read below.
      args: ['--audit-policy-file', policyFile, '--audit-log-path', auditLog, '--log-level', 'debug'],
    });
    const objects = [
      { apiVersion: GROUP_VERSION, kind: 'User', metadata: { name: 'alice' }, spec: {} },
      { apiVersion: GROUP_VERSION, kind: 'User', metadata: { name: 'bob' }, spec: {} },
      {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'for-alice', namespace: 'team-a' },
        spec: { data: { token: 'YWxpY2U=' }, access: [{ verbs: ['get'], users: ['alice'] }] },
      },
      {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'private', namespace: 'team-a' },
        spec: { data: { token: 'cHJpdmF0ZQ==' } },
      },
    ];
    const apply = await server.kubectl(['apply', '-f', '-'], {
      input: objects.map((o) => toYaml(o)).join('---\n'),
    });
    assert.equal(apply.code, 0, apply.stderr);
    const key = await createAccessKey(server, 'alice-laptop', { user: 'alice', type: 'User' });
    const doc = parseYaml(readFileSync(server.kubeconfigPath, 'utf8')) as KubeConfigDoc;
    for (const u of doc.users) u.user.token = key;
    aliceConfig = join(workDir, 'alice.kubeconfig');
    writeFileSync(aliceConfig, toYaml(doc), { mode: 0o600 });
    await eventually(async () => assert.equal((await kubectl('alice', ['get', 'user', 'alice'])).code, 0));
  });

  after(async () => {
    await server?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('the administrator --as a plain user sees what that user sees', TEST, async () => {
    assert.deepEqual(await names('admin', ['get', 'users']), ['admin', 'alice', 'bob']);
    const asAlice = await names('admin', ['get', 'users', '--as', 'alice']);
    assert.deepEqual(asAlice, await names('alice', ['get', 'users']));
    assert.deepEqual(asAlice, ['alice']);
    assert.deepEqual(await names('admin', ['get', 'sharedsecrets', '-n', 'team-a', '--as', 'alice']), [
      'for-alice',
    ]);
  });

  it('the administrator --as a plain user is refused what that user is refused', TEST, async () => {
    const r = await kubectl('admin', ['get', 'sharedsecret', 'private', '-n', 'team-a', '--as', 'alice']);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `Error from server (Forbidden): sharedsecrets.${GROUP} "private" is forbidden: User "alice" cannot get resource "sharedsecrets" in API group "${GROUP}" in the namespace "team-a"`,
    );
    const write = await kubectl('admin', ['delete', 'user', 'bob', '--as', 'alice']);
    assert.equal(write.code, 1);
    assert.match(write.stderr, /User "alice" cannot delete resource "users"/);
    assert.deepEqual(await names('admin', ['get', 'users']), ['admin', 'alice', 'bob']);
  });

  it('auth whoami --as answers the impersonated user, with the groups and uid asked for', TEST, async () => {
    // --as-uid came with kubectl 1.23; older ones cannot ask for a uid.
    const withUid = kubectlMinor >= 23;
    const r = await whoami('admin', [
      '--as',
      'alice',
      '--as-group',
      'devs',
      ...(withUid ? ['--as-uid', 'uid-alice'] : []),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const review = JSON.parse(r.stdout) as { status: { userInfo: unknown } };
    assert.deepEqual(review.status.userInfo, {
      username: 'alice',
      ...(withUid ? { uid: 'uid-alice' } : {}),
      groups: ['devs', 'system:authenticated'],
    });
  });

  it("auth can-i --as answers for the impersonated user's rights", TEST, async () => {
    const yes = await kubectl('admin', [
      'auth',
      'can-i',
      'get',
      'sharedsecrets/for-alice',
      '-n',
      'team-a',
      '--as',
      'alice',
    ]);
    assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
    const no = await kubectl('admin', [
      'auth',
      'can-i',
      'get',
      'sharedsecrets/private',
      '-n',
      'team-a',
      '--as',
      'alice',
    ]);
    assert.equal(no.stdout.trim(), 'no');
    assert.equal(no.code, 1);
    const admin = await kubectl('admin', ['auth', 'can-i', 'get', 'sharedsecrets/private', '-n', 'team-a']);
    assert.equal(admin.stdout.trim(), 'yes', admin.stderr);
  });

  it("a plain user --as someone else is refused with kube-apiserver's wording", TEST, async () => {
    const r = await kubectl('alice', ['get', 'users', '--as', 'bob']);
    assert.equal(r.code, 1);
    // Its last line: kubectl first logs its failed discovery (memcache.go), as it does
    // against kube-apiserver, whose /api refuses the impersonation alike.
    assert.equal(
      r.stderr.trim().split('\n').pop(),
      'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const review = await whoami('alice', ['--as', 'bob']);
    assert.equal(review.code, 1);
    if (kubectlMinor >= 27) {
      // kubectl says so for any 403 of its review, as it does against kube-apiserver.
      assert.equal(
        review.stderr.trim(),
        'error: the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it',
      );
    } else {
      // A raw POST prints the server's Status as it is.
      assert.equal(
        review.stderr.trim(),
        'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
    }
    const canI = await kubectl('alice', ['auth', 'can-i', 'get', 'users', '--as', 'bob']);
    assert.notEqual(canI.code, 0);
    assert.match(
      canI.stderr,
      /users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group ""/,
    );
    const group = await kubectl('admin', ['get', 'users', '--as', 'alice', '--as-group', 'x']);
    assert.equal(group.code, 0, 'the administrator may impersonate groups');
  });

  it('impersonation is checked on the paths served without credentials too', TEST, async () => {
    const refusal = (who: string): string =>
      `users "x" is forbidden: User "${who}" cannot impersonate resource "users" in API group "" at the cluster scope`;
    for (const path of ['/healthz', '/version']) {
      const r = await kubectl('alice', ['get', '--raw', path, '--as', 'x']);
      assert.equal(r.code, 1, path);
      assert.equal(r.stderr.trim(), `Error from server (Forbidden): ${refusal('alice')}`, path);
      const plain = await kubectl('alice', ['get', '--raw', path]);
      assert.equal(plain.code, 0, plain.stderr);
    }
    const asAdmin = await kubectl('admin', ['get', '--raw', '/healthz', '--as', 'x']);
    assert.equal(asAdmin.code, 0, asAdmin.stderr);
    assert.equal(asAdmin.stdout, 'ok');
    // Anonymously, as curl would: kube-apiserver's anonymous user, refused alike.
    const anonymous = { baseUrl: server.apiBase, ca: server.ca, token: '' };
    for (const path of ['/healthz', '/livez', '/readyz', '/version', '/console/']) {
      const refused = await apiRequest(anonymous, 'GET', path, undefined, { 'Impersonate-User': 'x' });
      assert.equal(refused.status, 403, path);
      assert.deepEqual(refused.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: refusal('system:anonymous'),
        reason: 'Forbidden',
        details: { name: 'x', kind: 'users' },
        code: 403,
      });
      // The console's page is there once it is built (npm run build); refused either way.
      if (path === '/console/') continue;
      const served = await apiRequest(anonymous, 'GET', path);
      assert.equal(served.status, 200, path);
    }
    await eventually(async () => {
      const event = auditEvents().find(
        (e) =>
          e.stage === 'ResponseComplete' && e.requestURI.endsWith('/livez') && e.responseStatus?.code === 403,
      );
      assert.ok(event, 'the refused anonymous impersonation is audited');
      assert.equal(event.user.username, 'system:anonymous');
      assert.equal(event.impersonatedUser, undefined);
    });
  });

  it('an access rule naming impersonate on a User lets a plain user act as that user', TEST, async () => {
    // The README's command: only an administrator may write this rule.
    const patch = await kubectl('admin', [
      'patch',
      'user',
      'bob',
      '--type',
      'merge',
      '-p',
      '{"spec":{"access":[{"verbs":["impersonate"],"users":["alice"]}]}}',
    ]);
    assert.equal(patch.code, 0, patch.stderr);
    await eventually(async () => {
      const r = await whoami('alice', ['--as', 'bob']);
      assert.equal(r.code, 0, r.stderr);
      const review = JSON.parse(r.stdout) as { status: { userInfo: { username: string } } };
      assert.equal(review.status.userInfo.username, 'bob');
    });
    // As bob, alice sees bob's User and not her own any more.
    assert.deepEqual(await names('alice', ['get', 'users', '--as', 'bob']), ['bob']);
    // The rule names bob only.
    const other = await kubectl('alice', ['get', 'users', '--as', 'admin']);
    assert.equal(other.code, 1);
    assert.match(
      other.stderr,
      /users "admin" is forbidden: User "alice" cannot impersonate resource "users"/,
    );
  });

  it('no credential is minted as the impersonated user', TEST, async () => {
    const r = await server.kubectl(['create', '-f', '-', '--as', 'alice'], {
      input: JSON.stringify({
        apiVersion: GROUP_VERSION,
        kind: 'OwnedAccessKey',
        metadata: { name: 'minted-by-impersonation' },
        spec: { user: 'alice' },
      }),
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /an impersonated request cannot mint credentials/);
  });

  it(
    'the audit log names the caller as user and the impersonated user as impersonatedUser',
    TEST,
    async () => {
      const r = await kubectl('admin', ['get', 'user', 'alice', '--as', 'alice', '--as-group', 'qa']);
      assert.equal(r.code, 0, r.stderr);
      await eventually(async () => {
        const event = auditEvents().find(
          (e) =>
            e.stage === 'ResponseComplete' &&
            e.objectRef?.name === 'alice' &&
            e.verb === 'get' &&
            e.impersonatedUser?.groups?.includes('qa'),
        );
        assert.ok(event, 'the impersonated get is audited');
        assert.equal(event.user.username, 'admin');
        assert.deepEqual(event.impersonatedUser, {
          username: 'alice',
          groups: ['qa', 'system:authenticated'],
        });
        assert.equal(event.responseStatus?.code, 200);
      });
      // A refused impersonation is audited as the caller's, with its 403.
      // The request log names both, as upstream's "<caller> is impersonating <user>".
      await eventually(async () => {
        const logged = server
          .logTail()
          .split('\n')
          .filter((l) =>
            l.includes('"path":"/kubernetes/management/apis/management.platform.dev/v1/users/alice"'),
          );
        assert.ok(
          logged.some((l) => l.includes('"user":"alice"') && l.includes('"impersonatedBy":"admin"')),
          logged.join('\n'),
        );
      });
      const refusedGet = await kubectl('alice', ['get', 'user', 'nobody', '--as', 'admin']);
      assert.equal(refusedGet.code, 1);
      await eventually(async () => {
        const refused = auditEvents().find(
          (e) => e.stage === 'ResponseComplete' && e.objectRef?.name === 'nobody' && e.verb === 'get',
        );
        assert.ok(refused, 'the refused impersonation is audited');
        assert.equal(refused.user.username, 'alice');
        assert.equal(refused.responseStatus?.code, 403);
        assert.equal(refused.impersonatedUser, undefined);
      });
    },
  );
});
