import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import { emptyIdentityCache } from '../../../identity/testing/empty-cache.js';
import type { CreateOptions, RequestContext } from '../../rest/interfaces.js';
import { SelfStorage } from './storage.js';

const GROUP = 'management.platform.dev';
const CREATE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };
const alice: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'] };

function statusOf(obj: KubeObject): Record<string, unknown> {
  const status = obj['status'];
  assert.ok(isObject(status), 'status');
  return status;
}

test('selves reports the project namespace prefix the server was given, and none when unset', async (t) => {
  // Never started: an empty cache answers "no such user" for everyone, which is all this needs.
  const cache = emptyIdentityCache(t);
  const ctx: RequestContext = { user: alice, namespace: '', warnings: [] };

  const custom = new SelfStorage(GROUP, cache, undefined, { projectNamespacePrefix: 'project-' });
  const reported = statusOf(await custom.create(ctx, {}, CREATE));
  assert.equal(reported['projectNamespacePrefix'], 'project-');
  assert.equal(reported['subject'], 'alice');

  const bare = new SelfStorage(GROUP, cache);
  assert.equal(statusOf(await bare.create(ctx, {}, CREATE))['projectNamespacePrefix'], undefined);

  // The published schema names the field, so strict clients and kubectl explain know it.
  const schemaStatus = (custom.schema['properties'] as Record<string, Record<string, unknown>>)['status'];
  assert.ok(
    isObject(schemaStatus?.['properties']) && 'projectNamespacePrefix' in schemaStatus['properties'],
    'schema lists status.projectNamespacePrefix',
  );
});
