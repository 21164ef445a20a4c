import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { AuthenticatedUser } from '../authentication/user/user.js';
import { emptyIdentityCache } from '../identity/testing/empty-cache.js';
import type { ResourceInfo } from '../registry/rest/interfaces.js';
import { CallerResolver } from './caller.js';
import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';
import { RulesResolver } from './rules-review.js';

const GROUP = 'management.platform.dev';

function info(resource: string, namespaced: boolean, verbs: ResourceInfo['verbs']): ResourceInfo {
  return {
    group: GROUP,
    version: 'v1',
    resource,
    singular: resource.slice(0, -1),
    kind: resource,
    listKind: `${resource}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs,
    subresources: [],
  };
}

const RESOURCES = [
  info('teams', false, ['get', 'list', 'watch', 'delete']),
  info('sharedsecrets', true, ['get', 'list', 'watch', 'delete']),
];

/** Allows what `rule` says; remembers every question. */
class FakeChain implements Authorizer {
  readonly asked: Attributes[] = [];
  constructor(private readonly rule: (a: Attributes) => boolean) {}
  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    this.asked.push(attrs);
    return Promise.resolve({ decision: this.rule(attrs) ? 'allow' : 'deny' });
  }
}

function resolverWith(chain: Authorizer, t: { after(fn: () => unknown): void }): RulesResolver {
  const cache = emptyIdentityCache(t);
  const callers = new CallerResolver(cache, { adminUsername: '', adminRole: '' });
  return new RulesResolver(chain, callers, GROUP, () => RESOURCES);
}

const alice: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'] };

test('whoever the chain allows everything gets the one complete wildcard rule', async (t) => {
  const rules = await resolverWith(new FakeChain(() => true), t).rulesFor(alice, 'ci');
  assert.deepEqual(rules, {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  });
});

test("otherwise the rules are the chain's answers, grouped by verbs, and marked incomplete", async (t) => {
  const chain = new FakeChain(
    (a) =>
      (a.isResourceRequest && (a.verb === 'list' || a.verb === 'watch')) ||
      (a.resource === 'teams' && a.verb === 'delete' && a.name === '') ||
      (!a.isResourceRequest && a.path === '/version'),
  );
  const rules = await resolverWith(chain, t).rulesFor(alice, 'ci');
  assert.deepEqual(rules.resourceRules, [
    { verbs: ['list', 'watch', 'delete'], apiGroups: [GROUP], resources: ['teams'] },
    { verbs: ['list', 'watch'], apiGroups: [GROUP], resources: ['sharedsecrets'] },
  ]);
  assert.deepEqual(rules.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/version'] }]);
  assert.equal(rules.incomplete, true);
  assert.match(rules.evaluationError ?? '', /spec\.access/);
  // Namespaced kinds are asked about in the review's namespace, cluster-scoped ones in none.
  const ns = (resource: string): Set<string> =>
    new Set(chain.asked.filter((a) => a.resource === resource).map((a) => a.namespace));
  assert.deepEqual(ns('sharedsecrets'), new Set(['ci']));
  assert.deepEqual(ns('teams'), new Set(['']));
});
