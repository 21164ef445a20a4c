import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnknownProjectError, checkConnection } from './check.js';
import type { KeyIdentity } from './role-check.js';
import { MissingRoleError, vclusterRoleFor } from './role-check.js';
import { parseConnectionSettings } from './settings.js';
import { MemoryConnectionHost } from './testing/memory-host.js';

const target = { project: 'team-a', name: 'dev' };

test('a vcluster role entry covers a project by name or by *', () => {
  assert.ok(vclusterRoleFor({ roles: [{ role: 'vcluster', projects: ['*'] }] }, target));
  assert.ok(vclusterRoleFor({ roles: [{ role: 'vcluster', projects: ['team-a'] }] }, target));
  assert.ok(
    vclusterRoleFor(
      { roles: [{ role: 'vcluster', projects: ['team-a'], virtualClusters: ['dev'] }] },
      target,
    ),
  );
});

test('no role, another role, another project or another virtual cluster does not cover it', () => {
  assert.equal(vclusterRoleFor(undefined, target), undefined, 'an unscoped key has no vcluster role entry');
  assert.equal(vclusterRoleFor({ roles: [{ role: 'platformCLI', projects: ['*'] }] }, target), undefined);
  assert.equal(vclusterRoleFor({ roles: [{ role: 'vcluster', projects: ['team-b'] }] }, target), undefined);
  assert.equal(vclusterRoleFor({ roles: [{ role: 'vcluster' }] }, target), undefined);
  assert.equal(
    vclusterRoleFor(
      { roles: [{ role: 'vcluster', projects: ['team-a'], virtualClusters: ['prod'] }] },
      target,
    ),
    undefined,
  );
});

function setup(identity: KeyIdentity) {
  const host = new MemoryConnectionHost();
  host.putSecret('team-a-ns', 'vc-platform-api-key', {
    accessKey: 'k',
    host: 'p.example',
    project: 'team-a',
  });
  const reviewed: string[] = [];
  return {
    host,
    reviewed,
    input: {
      settings: parseConnectionSettings('external:\n  platform: {}\n').settings,
      virtualCluster: { name: 'dev', namespace: 'team-a-ns' },
      env: {},
      host,
      reviewSelf: (c: { accessKey: string; host: string }) => {
        reviewed.push(`${c.host}:${c.accessKey}`);
        return Promise.resolve(identity);
      },
    },
  };
}

test('a key with the role passes; the project comes from the secret when nothing else names it', async () => {
  const { input, reviewed } = setup({
    user: 'alice',
    scope: { roles: [{ role: 'vcluster', projects: ['*'] }] },
  });
  const r = await checkConnection(input);
  assert.equal(r.project, 'team-a');
  assert.equal(r.identity.user, 'alice');
  assert.deepEqual(reviewed, ['p.example:k']);
});

test('a key without the role is refused with a message naming the role and how to get a key that has it', async () => {
  const { input } = setup({
    user: 'alice',
    accessKeyName: 'ci-key',
    scope: { roles: [{ role: 'platformCLI' }] },
  });
  await assert.rejects(checkConnection(input), (err: unknown) => {
    assert.ok(err instanceof MissingRoleError);
    assert.match(
      err.message,
      /the access key "ci-key" lacks the virtual cluster role "vcluster" for project "team-a"/,
    );
    assert.match(err.message, /its scope has no "vcluster" role entry/);
    assert.match(err.message, /platform vcluster connect-key dev --project team-a/);
    assert.match(err.message, /platform create accesskey .*--role vcluster/);
    assert.doesNotMatch(err.message, /licen[cs]e|enterprise/i, 'it must not read like a paywall');
    return true;
  });
});

test('a key whose role is for another project says which projects it covers', async () => {
  const { input } = setup({ scope: { roles: [{ role: 'vcluster', projects: ['team-b'] }] } });
  await assert.rejects(
    checkConnection(input),
    /its "vcluster" role covers projects \[team-b\], not team-a\/dev/,
  );
});

test('the project in the configuration file wins over the secret and the flag', async () => {
  const { input } = setup({ scope: { roles: [{ role: 'vcluster', projects: ['team-c'] }] } });
  const settings = parseConnectionSettings('external:\n  platform:\n    project: team-c\n').settings;
  const r = await checkConnection({ ...input, settings, project: 'team-b' });
  assert.equal(r.project, 'team-c');
});

test('without any project the role cannot be checked, and the error says where to put one', async () => {
  const { input, host } = setup({ scope: { roles: [{ role: 'vcluster', projects: ['*'] }] } });
  host.putSecret('team-a-ns', 'vc-platform-api-key', { accessKey: 'k', host: 'p.example' });
  await assert.rejects(checkConnection(input), (err: unknown) => {
    assert.ok(err instanceof UnknownProjectError);
    assert.match(err.message, /external\.platform\.project/);
    return true;
  });
});
