import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_PROJECT_NAMESPACE_PREFIX, describeSelf, parseSelf } from './self.js';

describe('parseSelf', () => {
  it("reads the server's Self: user, teams, groups, key name, type, scope and project namespace prefix", () => {
    const self = parseSelf({
      kind: 'Self',
      status: {
        subject: 'alice',
        user: { name: 'alice', displayName: 'Alice', teams: [{ name: 'ops' }, { name: 'dev' }] },
        groups: ['ops', 7],
        accessKey: 'alice-ci',
        accessKeyType: 'User',
        accessKeyScope: { roles: [{ role: 'vcluster', projects: ['*'] }] },
        projectNamespacePrefix: 'project-',
      },
    });
    assert.equal(self.user, 'alice');
    assert.equal(self.team, undefined);
    assert.deepEqual(self.teams, ['ops', 'dev']);
    assert.deepEqual(self.groups, ['ops']);
    assert.equal(self.accessKeyName, 'alice-ci');
    assert.equal(self.accessKeyType, 'User');
    assert.deepEqual(self.scope, { roles: [{ role: 'vcluster', projects: ['*'] }] });
    assert.equal(self.projectNamespacePrefix, 'project-');
    assert.equal(describeSelf(self), 'user alice');
  });

  it('falls back to p- when the server does not report a prefix (older servers)', () => {
    assert.equal(DEFAULT_PROJECT_NAMESPACE_PREFIX, 'p-');
    assert.equal(parseSelf({ status: { team: { name: 'ops' } } }).projectNamespacePrefix, 'p-');
    assert.equal(parseSelf({ status: { projectNamespacePrefix: '' } }).projectNamespacePrefix, 'p-');
    assert.equal(describeSelf(parseSelf({ status: { team: 'ops' } })), 'team ops');
    assert.equal(describeSelf(parseSelf(null)), 'an unnamed subject');
  });
});
