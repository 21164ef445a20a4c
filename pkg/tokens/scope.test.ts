import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AccessKeyScope } from '../apis/management/v1/common.js';
import { isUnlimitedScope, scopeExcess } from './scope.js';

describe('isUnlimitedScope', () => {
  it('treats an absent or empty scope as unlimited, and any entry as a limit', () => {
    assert.ok(isUnlimitedScope(undefined));
    assert.ok(isUnlimitedScope({}));
    assert.ok(isUnlimitedScope({ roles: [], rules: [], allowPlatformCli: false }));
    assert.ok(!isUnlimitedScope({ allowPlatformCli: true }));
    assert.ok(!isUnlimitedScope({ clusters: [{ cluster: 'a' }] }));
  });
});

interface Case {
  readonly name: string;
  readonly allowed: AccessKeyScope | undefined;
  readonly requested: AccessKeyScope | undefined;
  /** Empty: within. */
  readonly excess: readonly string[];
}

const cases: readonly Case[] = [
  { name: 'anything within an unlimited scope', allowed: undefined, requested: { rules: [{}] }, excess: [] },
  {
    name: 'an unlimited request under a limit',
    allowed: { projects: [{ project: 'a' }] },
    requested: {},
    excess: ['an unlimited scope'],
  },
  {
    name: 'the same project',
    allowed: { projects: [{ project: 'a' }] },
    requested: { projects: [{ project: 'a' }] },
    excess: [],
  },
  {
    name: 'another project',
    allowed: { projects: [{ project: 'a' }] },
    requested: { projects: [{ project: 'b' }] },
    excess: ['projects[0] (b)'],
  },
  {
    name: 'every project under one',
    allowed: { projects: [{ project: 'a' }] },
    requested: { projects: [{ project: '*' }] },
    excess: ['projects[0] (*)'],
  },
  {
    name: 'a project under every project',
    allowed: { projects: [{ project: '*' }] },
    requested: { projects: [{ project: 'b' }] },
    excess: [],
  },
  {
    name: 'a space and a virtual cluster of an allowed project',
    allowed: { projects: [{ project: 'a' }] },
    requested: {
      spaces: [{ project: 'a', space: 's' }],
      virtualClusters: [{ project: 'a', virtualCluster: 'v' }],
    },
    excess: [],
  },
  {
    name: 'a virtual cluster next to the allowed one',
    allowed: { virtualClusters: [{ project: 'a', virtualCluster: 'v' }] },
    requested: { virtualClusters: [{ project: 'a', virtualCluster: 'w' }] },
    excess: ['virtualClusters[0] (a/w)'],
  },
  {
    name: 'the project of an allowed virtual cluster',
    allowed: { virtualClusters: [{ project: 'a', virtualCluster: 'v' }] },
    requested: { projects: [{ project: 'a' }] },
    excess: ['projects[0] (a)'],
  },
  {
    name: 'a cluster under every cluster',
    allowed: { clusters: [{ cluster: '*' }] },
    requested: { clusters: [{ cluster: 'prod' }] },
    excess: [],
  },
  {
    name: 'the command-line role from allowPlatformCli',
    allowed: { allowPlatformCli: true },
    requested: { roles: [{ role: 'platformCLI', projects: ['p'] }] },
    excess: [],
  },
  {
    name: 'network-peer implied by vcluster',
    allowed: { roles: [{ role: 'vcluster', projects: ['*'] }] },
    requested: { roles: [{ role: 'network-peer', projects: ['p'] }] },
    excess: [],
  },
  {
    name: 'a role the key does not have',
    allowed: { roles: [{ role: 'vcluster', projects: ['p'] }] },
    requested: {
      roles: [
        { role: 'agent', projects: ['p'] },
        { role: 'vcluster', projects: ['q'] },
      ],
    },
    excess: ['roles[0] (agent)', 'roles[1] (vcluster)'],
  },
  {
    name: 'a narrower rule',
    allowed: { rules: [{ verbs: ['get', 'list'], resources: [{ group: 'apps', resources: ['*'] }] }] },
    requested: {
      rules: [
        { verbs: ['get'], resources: [{ group: 'apps', resources: ['deployments', 'deployments/scale'] }] },
      ],
    },
    excess: [],
  },
  {
    name: 'every verb under some verbs',
    allowed: { rules: [{ verbs: ['get'] }] },
    requested: { rules: [{ verbs: [] }] },
    excess: ['rules[0]'],
  },
  {
    name: 'another API group',
    allowed: { rules: [{ resources: [{ group: 'apps' }] }] },
    requested: { rules: [{ resources: [{ group: '' }] }] },
    excess: ['rules[0]'],
  },
  {
    name: 'subresource patterns',
    allowed: { rules: [{ resources: [{ group: '', resources: ['pods/*', '*/scale'] }] }] },
    requested: { rules: [{ resources: [{ group: '', resources: ['pods/log', 'deployments/scale'] }] }] },
    excess: [],
  },
  {
    name: 'the resource itself under its subresources',
    allowed: { rules: [{ resources: [{ group: '', resources: ['pods/*'] }] }] },
    requested: { rules: [{ resources: [{ group: '', resources: ['pods'] }] }] },
    excess: ['rules[0]'],
  },
  {
    name: 'another namespace, cluster and non-resource URL',
    allowed: { rules: [{ namespaces: ['a'], cluster: 'c', nonResourceURLs: ['/healthz*'] }] },
    requested: {
      rules: [
        { namespaces: ['a'], cluster: 'c', nonResourceURLs: ['/healthz/ping'] },
        { namespaces: ['b'], cluster: 'c' },
        { namespaces: ['a'], cluster: 'd' },
        { namespaces: ['a'], cluster: 'c', nonResourceURLs: ['/metrics'] },
      ],
    },
    excess: ['rules[1]', 'rules[2]', 'rules[3]'],
  },
  {
    name: 'virtual clusters of a rule',
    allowed: { rules: [{ virtualClusters: [{ namespace: 'n' }] }] },
    requested: {
      rules: [
        { virtualClusters: [{ name: 'v', namespace: 'n' }] },
        { virtualClusters: [{ name: 'v', namespace: 'm' }] },
      ],
    },
    excess: ['rules[1]'],
  },
];

describe('scopeExcess', () => {
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(scopeExcess(c.requested, c.allowed), c.excess);
    });
  }
});

describe('scopeExcess with the deprecated command-line flag', () => {
  it('refuses allowPlatformCli beyond the allowed roles', () => {
    assert.deepEqual(scopeExcess({ allowPlatformCli: true }, { projects: [{ project: '*' }] }), [
      'allowPlatformCli',
    ]);
    assert.deepEqual(scopeExcess({ allowPlatformCli: true }, { roles: [{ role: 'platformCLI' }] }), []);
  });
});
