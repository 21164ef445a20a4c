import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import type { Attributes } from './interfaces.js';
import {
  describeScope,
  isScopeEmpty,
  nonResourceURLMatches,
  resourcePatternMatches,
  sameScope,
  ScopeMatcher,
} from './scope.js';

const G = 'management.platform.dev';

function attrs(verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes {
  return {
    user: { name: 'alice', groups: [] },
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: G,
    apiVersion: 'v1',
    resource,
    subresource: '',
    namespace: '',
    name: '',
    ...extra,
  };
}

test('resource patterns: name, name/sub, *, name/*, */sub', () => {
  const pods = { resource: 'pods', subresource: '' };
  const log = { resource: 'pods', subresource: 'log' };
  const status = { resource: 'deployments', subresource: 'status' };
  assert.equal(resourcePatternMatches('pods', pods), true);
  assert.equal(resourcePatternMatches('pods', log), false);
  assert.equal(resourcePatternMatches('pods/log', log), true);
  assert.equal(resourcePatternMatches('*', log), true);
  assert.equal(resourcePatternMatches('pods/*', log), true);
  assert.equal(resourcePatternMatches('pods/*', pods), false);
  assert.equal(resourcePatternMatches('*/status', status), true);
  assert.equal(resourcePatternMatches('*/status', log), false);
});

test('non-resource URLs: exact, or * as the whole last step', () => {
  assert.equal(nonResourceURLMatches('/version', '/version'), true);
  assert.equal(nonResourceURLMatches('/version', '/version/x'), false);
  assert.equal(nonResourceURLMatches('/apis/*', '/apis/g/v1'), true);
  assert.equal(nonResourceURLMatches('/apis/*', '/apis'), false);
  assert.equal(nonResourceURLMatches('*', '/anything'), true);
});

test('empty scopes limit nothing, and compare equal however they are written', () => {
  assert.equal(isScopeEmpty(undefined), true);
  assert.equal(isScopeEmpty({ roles: [], projects: [] }), true);
  assert.equal(isScopeEmpty({ allowPlatformCli: false }), true);
  assert.equal(isScopeEmpty({ allowPlatformCli: true }), false);
  assert.equal(sameScope({}, { rules: [] }), true);
  assert.equal(
    sameScope({ projects: [{ project: 'p' }] }, { projects: [{ project: 'p' }], spaces: [] }),
    true,
  );
  assert.equal(sameScope({ projects: [{ project: 'p' }] }, {}), false);
  assert.equal(
    describeScope({
      roles: [{ role: 'vcluster' }],
      virtualClusters: [{ project: 'p', virtualCluster: 'v' }],
    }),
    'roles [vcluster]; virtualClusters [p/v]',
  );
});

test('roles and virtual clusters reach what they name in the project namespaces', () => {
  const matcher = new ScopeMatcher({ group: G, collections: 'strict' });
  const vcRole: AccessKeyScope = { roles: [{ role: 'vcluster', projects: ['p1'] }] };
  const vci = (verb: string, ns: string, name = '', subresource = ''): Attributes =>
    attrs(verb, 'virtualclusterinstances', { namespace: ns, name, subresource });
  assert.equal(matcher.allows(vcRole, vci('get', 'p-p1', 'vc1')), true);
  assert.equal(matcher.allows(vcRole, vci('get', 'p-p2', 'vc1')), false);
  assert.equal(matcher.allows(vcRole, vci('delete', 'p-p1', 'vc1')), false);
  assert.equal(matcher.allows(vcRole, attrs('get', 'users', { name: 'alice' })), false);

  const one: AccessKeyScope = { virtualClusters: [{ project: 'p1', virtualCluster: 'vc1' }] };
  assert.equal(matcher.allows(one, vci('create', 'p-p1', 'vc1', 'kubeconfig')), true);
  assert.equal(matcher.allows(one, vci('get', 'p-p1', 'vc2')), false);
  // A list names nothing: strict refuses it, lenient lets the storage filter it.
  assert.equal(matcher.allows(one, vci('list', 'p-p1')), false);
  assert.equal(new ScopeMatcher({ group: G, collections: 'lenient' }).allows(one, vci('list', 'p-p1')), true);

  const anyProject: AccessKeyScope = { projects: [{ project: '*' }] };
  assert.equal(
    matcher.allows(anyProject, attrs('delete', 'sharedsecrets', { namespace: 'p-x', name: 's' })),
    true,
  );
  assert.equal(
    matcher.allows(anyProject, attrs('get', 'sharedsecrets', { namespace: 'default', name: 's' })),
    false,
  );
});
