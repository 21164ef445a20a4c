import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionRbac, rbacObjectName } from './rbac.js';
import { parseConnectionSettings } from './settings.js';

const shared = parseConnectionSettings(
  'external:\n  platform:\n    apiKey:\n      secretName: shared-key\n      namespace: vc-platform\n',
).settings.apiKey;

test('a secret in another namespace gets a Role allowing get on exactly that secret, bound to the service account', () => {
  const rbac = connectionRbac(shared, { name: 'dev', namespace: 'team-a' });
  assert.ok(rbac);
  assert.equal(rbac.role.metadata.namespace, 'vc-platform');
  assert.deepEqual(rbac.role.rules, [
    { apiGroups: [''], resources: ['secrets'], resourceNames: ['shared-key'], verbs: ['get'] },
  ]);
  assert.equal(rbac.roleBinding.metadata.namespace, 'vc-platform');
  assert.deepEqual(rbac.roleBinding.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'Role',
    name: rbac.role.metadata.name,
  });
  assert.deepEqual(rbac.roleBinding.subjects, [
    { kind: 'ServiceAccount', name: 'vc-dev', namespace: 'team-a' },
  ]);
});

test('a service account other than vc-<name> is bound when given', () => {
  const rbac = connectionRbac(shared, { name: 'dev', namespace: 'team-a', serviceAccount: 'syncer' });
  assert.equal(rbac?.roleBinding.subjects[0]?.name, 'syncer');
});

test('no RBAC when the secret is in the virtual cluster namespace, or createRBAC is false', () => {
  const dedicated = parseConnectionSettings('external:\n  platform: {}\n').settings.apiKey;
  assert.equal(connectionRbac(dedicated, { name: 'dev', namespace: 'team-a' }), undefined);
  assert.equal(
    connectionRbac({ ...shared, namespace: 'team-a' }, { name: 'dev', namespace: 'team-a' }),
    undefined,
  );
  assert.equal(
    connectionRbac({ ...shared, createRBAC: false }, { name: 'dev', namespace: 'team-a' }),
    undefined,
  );
});

test('names are unique per virtual cluster, stable, and valid even for long names', () => {
  const names = new Set(
    [
      { name: 'dev', namespace: 'team-a' },
      { name: 'dev', namespace: 'team-b' },
      { name: 'dev-team', namespace: 'a' },
      { name: 'dev', namespace: 'team-a' + '' },
      { name: 'a'.repeat(63), namespace: 'b'.repeat(63) },
      { name: 'a'.repeat(63), namespace: 'b'.repeat(62) + 'c' },
    ].map(rbacObjectName),
  );
  assert.equal(names.size, 5);
  assert.equal(
    rbacObjectName({ name: 'dev', namespace: 'team-a' }),
    rbacObjectName({ name: 'dev', namespace: 'team-a' }),
  );
  for (const n of names) {
    assert.ok(n.length <= 63, n);
    assert.match(n, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  }
  // "dev" in "team-a" vs "dev-team" in "a" would both read vc-platform-key-dev-team-a without the hash.
  assert.notEqual(
    rbacObjectName({ name: 'dev', namespace: 'team-a' }),
    rbacObjectName({ name: 'dev-team', namespace: 'a' }),
  );
});
