import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isApiError } from '../../apis/meta/errors.js';
import type { ResourceInfo } from '../../apis/meta/resource-info.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import type { RequestContext } from '../../registry/rest/interfaces.js';
import type { Caller, CallerResolver } from '../caller.js';
import type { Permissions } from '../permissions.js';
import { EscalationAdmission } from './escalation.js';

const GROUP = 'management.platform.dev';
const USERS: ResourceInfo = {
  group: GROUP,
  version: 'v1',
  resource: 'users',
  singular: 'user',
  kind: 'User',
  listKind: 'UserList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: [],
  subresources: [],
};

const mgr: AuthenticatedUser = { name: 'mgr', groups: ['system:authenticated'] };

/**
 * A caller who is no administrator but holds every verb there is on the object (as a
 * host role's `*` on platform users does), and the admission under test.
 */
function admissionHoldingEverything(): EscalationAdmission {
  const caller: Caller = { name: 'mgr', team: '', groups: new Set(), teams: new Set(), admin: false };
  const callers = { resolve: () => caller } as unknown as CallerResolver;
  const permissions = { can: () => Promise.resolve(true) } as unknown as Permissions;
  return new EscalationAdmission({
    callers,
    permissions,
    adminRole: 'admin',
    carriesAccessRules: (resource) => resource === 'users',
  });
}

function user(name: string, access: unknown[]): KubeObject {
  return { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name }, spec: { access } };
}

async function refusal(promise: Promise<void>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    assert.equal(err.code, 403);
    return err.message;
  }
  assert.fail('admitted');
}

const ctx = { user: mgr, namespace: '', warnings: [] } as unknown as RequestContext;

describe('EscalationAdmission: impersonate', () => {
  it('refuses a new User carrying a rule that names impersonate, whatever the caller holds', async () => {
    const admission = admissionHoldingEverything();
    const obj = user('ghost', [{ verbs: ['impersonate'], users: ['mgr'] }]);
    assert.match(
      await refusal(admission.admit(ctx, obj, undefined, USERS)),
      /User "mgr" cannot grant the verb "impersonate": only administrators may/,
    );
  });

  it('refuses adding such a rule to an existing User, whatever the caller holds', async () => {
    const admission = admissionHoldingEverything();
    const old = user('root', [{ verbs: ['get'], users: ['mgr'] }]);
    const obj = user('root', [
      { verbs: ['get'], users: ['mgr'] },
      { verbs: ['get', 'impersonate'], users: ['mgr'] },
    ]);
    assert.match(await refusal(admission.admit(ctx, obj, old, USERS)), /only administrators may/);
  });

  it('lets a rule an administrator wrote stay through other changes', async () => {
    const admission = admissionHoldingEverything();
    const rule = { verbs: ['impersonate'], users: ['mgr'] };
    const old = user('bob', [rule]);
    await admission.admit(ctx, user('bob', [rule, { verbs: ['get'], users: ['mgr'] }]), old, USERS);
  });
});
