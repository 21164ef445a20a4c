import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { guardedPatch } from '../field-patch.js';
import { editedFields, newTeamSpec, newUserSpec, teamFormFields, userFormFields } from './form-edits.js';

/**
 * The form's submitted values: each field's shown text as a one-line input holds it
 * (line breaks stripped by the browser) and trimmed as textForm submits it, then `edits`.
 */
function submit(
  fields: { id: string; shown: string }[],
  edits: Record<string, string>,
): Record<string, string> {
  return {
    ...Object.fromEntries(fields.map((f) => [f.id, f.shown.replace(/[\r\n]/g, '').trim()])),
    ...edits,
  };
}

// A team whose stored fields do not read back from their text: a display name with a
// trailing space (textForm trims it), a nameless cluster role entry (shown as '').
const team = {
  metadata: { name: 'platform', uid: 'u-1', resourceVersion: '7' },
  spec: {
    displayName: 'Platform ',
    users: ['alice', 'bob'],
    clusterRoles: [{ name: 'admin' }, {}],
  },
};

describe("a Team's and a User's edit forms", () => {
  it('save only the field whose text was edited, never one left as shown', () => {
    const fields = teamFormFields(team.spec);
    const patch = guardedPatch(
      team,
      editedFields(fields, submit(fields, { 'team-description': 'Runs the platform' })),
    );
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'u-1' },
      // The description was not set: guarded by the version (field-patch.ts).
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/spec/description', value: 'Runs the platform' },
    ]);
    // Nothing edited: nothing sent.
    assert.deepEqual(guardedPatch(team, editedFields(fields, submit(fields, {}))), []);
  });

  it('do not send a stored multi-line description when another field is edited', () => {
    // Set with kubectl (`description: |`); an <input> holds it without its line breaks.
    const spec = { ...team.spec, description: 'line one\nline two\n' };
    const fields = teamFormFields(spec);
    const patch = guardedPatch(
      { ...team, spec },
      editedFields(fields, submit(fields, { 'team-users': 'alice' })),
    );
    assert.deepEqual(
      patch.filter((op) => op.path.startsWith('/spec/')).map((op) => op.path),
      ['/spec/users', '/spec/users'],
      'only the members are tested and sent',
    );
  });

  it('save an edited list or cluster roles whole, tested against the stored value', () => {
    const fields = teamFormFields(team.spec);
    const patch = guardedPatch(
      team,
      editedFields(fields, submit(fields, { 'team-cluster-roles': 'admin, view', 'team-users': '' })),
    );
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'u-1' },
      { op: 'test', path: '/spec/users', value: ['alice', 'bob'] },
      { op: 'test', path: '/spec/clusterRoles', value: [{ name: 'admin' }, {}] },
      { op: 'remove', path: '/spec/users' },
      { op: 'replace', path: '/spec/clusterRoles', value: [{ name: 'admin' }, { name: 'view' }] },
    ]);
  });

  it("save a user's edited email alone", () => {
    const user = {
      metadata: { name: 'bob', uid: 'u-2', resourceVersion: '3' },
      spec: { username: 'bob', email: 'bob@example.com', groups: ['dev', 'ops'], clusterRoles: [{}] },
    };
    const fields = userFormFields(user.spec);
    const patch = guardedPatch(
      user,
      editedFields(fields, submit(fields, { 'user-email': 'bob@example.org' })),
    );
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'u-2' },
      { op: 'test', path: '/spec/email', value: 'bob@example.com' },
      { op: 'replace', path: '/spec/email', value: 'bob@example.org' },
    ]);
    // Emptied, the email is removed (not set to '').
    const cleared = guardedPatch(user, editedFields(fields, submit(fields, { 'user-email': '' })));
    assert.deepEqual(cleared.at(-1), { op: 'remove', path: '/spec/email' });
  });

  it('create a team or a user with the fields filled only (no empty display name, no empty members)', () => {
    assert.deepEqual(newTeamSpec('', ''), {});
    assert.deepEqual(newTeamSpec('Platform', 'alice, , bob'), {
      displayName: 'Platform',
      users: ['alice', 'bob'],
    });
    assert.deepEqual(newUserSpec('bob', '', ''), { username: 'bob' });
    assert.deepEqual(newUserSpec('bob', 'Bob', 'bob@example.com'), {
      username: 'bob',
      displayName: 'Bob',
      email: 'bob@example.com',
    });
  });
});
