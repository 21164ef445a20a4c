import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes, Authorizer } from './interfaces.js';
import { AuthorizerChain, NOT_IMPLEMENTED_REASON, newPlatformAuthorizer } from './index.js';

const GROUP = 'management.platform.dev';
const authz = newPlatformAuthorizer({
  group: GROUP,
  adminUsername: 'admin',
  pathPrefixes: ['/kubernetes/management'],
});

function resource(
  user: string,
  verb: string,
  resourceName: string,
  name = '',
  groups: string[] = ['system:authenticated'],
): Attributes {
  return {
    user: { name: user, groups },
    verb,
    isResourceRequest: true,
    path: `/apis/${GROUP}/v1/${resourceName}${name ? '/' + name : ''}`,
    apiGroup: GROUP,
    apiVersion: 'v1',
    resource: resourceName,
    subresource: '',
    namespace: '',
    name,
  };
}

function nonResource(user: string, verb: string, path: string): Attributes {
  return {
    user: { name: user, groups: ['system:authenticated'] },
    verb,
    isResourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

test('the bootstrap admin and members of platform:admins may do anything', async () => {
  assert.equal((await authz.authorize(resource('admin', 'delete', 'teams', 'x'))).decision, 'allow');
  assert.equal(
    (await authz.authorize(resource('alice', 'create', 'users', '', ['platform:admins']))).decision,
    'allow',
  );
  assert.equal((await authz.authorize(nonResource('admin', 'post', '/anything'))).decision, 'allow');
});

test('anyone else is denied with a reason saying fine-grained authorization is missing', async () => {
  const result = await authz.authorize(resource('bob', 'list', 'teams'));
  assert.equal(result.decision, 'deny');
  assert.equal(result.reason, NOT_IMPLEMENTED_REASON);
  assert.equal((await authz.authorize(resource('bob', 'update', 'users', 'bob'))).decision, 'deny');
  assert.equal((await authz.authorize(resource('bob', 'get', 'users', 'alice'))).decision, 'deny');
  assert.equal((await authz.authorize(resource('bob', 'list', 'users'))).decision, 'deny');
});

test('everyone may get their own User', async () => {
  assert.equal((await authz.authorize(resource('bob', 'get', 'users', 'bob'))).decision, 'allow');
  const otherGroup = { ...resource('bob', 'get', 'users', 'bob'), apiGroup: 'other.example.com' };
  assert.equal((await authz.authorize(otherGroup)).decision, 'deny');
  const sub = { ...resource('bob', 'get', 'users', 'bob'), subresource: 'accesskeys' };
  assert.equal((await authz.authorize(sub)).decision, 'deny');
});

test('everyone may read discovery, OpenAPI, version and health, with or without the path prefix', async () => {
  for (const path of [
    '/api',
    '/apis',
    '/apis/',
    `/apis/${GROUP}`,
    `/apis/${GROUP}/v1`,
    '/openapi/v2',
    `/openapi/v3/apis/${GROUP}/v1`,
    '/version',
    '/readyz',
    '/kubernetes/management/apis',
    `/kubernetes/management/apis/${GROUP}/v1`,
    '/kubernetes/management/version',
  ]) {
    assert.equal((await authz.authorize(nonResource('bob', 'get', path))).decision, 'allow', path);
  }
  assert.equal((await authz.authorize(nonResource('bob', 'post', '/apis'))).decision, 'deny');
  assert.equal((await authz.authorize(nonResource('bob', 'get', '/metrics'))).decision, 'deny');
  assert.equal((await authz.authorize(nonResource('bob', 'get', '/apisx'))).decision, 'deny');
  assert.equal(
    (await authz.authorize(nonResource('bob', 'get', '/kubernetes/managementx/apis'))).decision,
    'deny',
  );
});

test('the chain takes the first decision and stops asking', async () => {
  const asked: string[] = [];
  const make = (name: string, decision: 'allow' | 'deny' | 'no-opinion'): Authorizer => ({
    authorize: () => {
      asked.push(name);
      return Promise.resolve({ decision, reason: name });
    },
  });
  const chain = new AuthorizerChain([make('a', 'no-opinion'), make('b', 'deny'), make('c', 'allow')]);
  const result = await chain.authorize(resource('x', 'get', 'teams'));
  assert.deepEqual(result, { decision: 'deny', reason: 'b' });
  assert.deepEqual(asked, ['a', 'b']);
  assert.deepEqual(await new AuthorizerChain([]).authorize(resource('x', 'get', 'teams')), {
    decision: 'deny',
  });
});
