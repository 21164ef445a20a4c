// Strategic merge patch on the real kinds follows the merge choices their schemas
// declare for server-side apply: sets merge as sets, list-maps merge by their key,
// atomic lists are replaced whole.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sharedSecretSchema } from '../../apis/management/v1/shared-secret.js';
import { teamSchema } from '../../apis/management/v1/team.js';
import { userSchema } from '../../apis/management/v1/user.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

describe('strategic merge patch on the kinds', () => {
  it("adds to a Team's users and groups (sets) instead of replacing them", () => {
    const team = { metadata: { name: 't' }, spec: { users: ['alice', 'bob'], groups: ['devs'] } };
    const out = strategicMergePatch(
      team,
      { spec: { users: ['carol', 'alice'], groups: ['ops'] } },
      teamSchema(),
    );
    assert.deepEqual(out['spec'], { users: ['alice', 'bob', 'carol'], groups: ['devs', 'ops'] });
  });

  it('removes a set member with $deleteFromPrimitiveList, as kubectl sends it', () => {
    const user = { metadata: { name: 'u' }, spec: { groups: ['a', 'b', 'c'] } };
    const out = strategicMergePatch(
      user,
      { spec: { '$deleteFromPrimitiveList/groups': ['b'] } },
      userSchema(),
    );
    assert.deepEqual(out['spec'], { groups: ['a', 'c'] });
  });

  it('replaces access rules whole (atomic): a rule is one grant', () => {
    const team = {
      metadata: { name: 't' },
      spec: { access: [{ name: 'r', verbs: ['get'], users: ['alice'] }] },
    };
    const out = strategicMergePatch(
      team,
      { spec: { access: [{ name: 'r', verbs: ['*'], teams: ['x'] }] } },
      teamSchema(),
    );
    assert.deepEqual(out['spec'], { access: [{ name: 'r', verbs: ['*'], teams: ['x'] }] });
  });

  it('merges conditions by type (list-map key = merge key)', () => {
    const secret = {
      metadata: { name: 's' },
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'Syncing' },
          { type: 'Synced', status: 'True' },
        ],
      },
    };
    const out = strategicMergePatch(
      secret,
      { status: { conditions: [{ type: 'Ready', status: 'True', reason: null }] } },
      sharedSecretSchema(),
    );
    assert.deepEqual(out['status'], {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Synced', status: 'True' },
      ],
    });
  });

  it("merges a SharedSecret's data key by key (a granular map)", () => {
    const secret = { metadata: { name: 's' }, spec: { data: { a: 'YQ==', b: 'Yg==' } } };
    const out = strategicMergePatch(secret, { spec: { data: { b: null, c: 'Yw==' } } }, sharedSecretSchema());
    assert.deepEqual(out['spec'], { data: { a: 'YQ==', c: 'Yw==' } });
  });
});
