// The host's SubjectAccessReview answers are cached briefly per question (user,
// groups, verb, resource, name, ...), and the cache is bounded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SubjectAccessReviewSpec } from '../hostcluster/types.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import { resourceAttributes } from './permissions.js';
import { SubjectAccessReviewAuthorizer } from './subject-access-review.js';

function fixture(maxCacheEntries = 4096): {
  authz: SubjectAccessReviewAuthorizer;
  asked: SubjectAccessReviewSpec[];
  clock: { now: number };
} {
  const asked: SubjectAccessReviewSpec[] = [];
  const clock = { now: 1_000_000 };
  const authz = new SubjectAccessReviewAuthorizer(
    {
      subjectAccessReview: (spec) => {
        asked.push(spec);
        return Promise.resolve({
          allowed: spec.resourceAttributes?.name === 'open',
          denied: false,
          reason: '',
          evaluationError: '',
        });
      },
    },
    { maxCacheEntries, now: () => clock.now },
  );
  return { authz, asked, clock };
}

const host = (name: string, groups: string[] = []): AuthenticatedUser => ({
  name,
  groups: [...groups, 'system:authenticated'],
  hostIdentity: true,
});
const get = (user: AuthenticatedUser, name: string, verb = 'get'): ReturnType<typeof resourceAttributes> =>
  resourceAttributes(user, { verb, group: 'g', resource: 'teams', name });

test('one review per question within 10 s; another user, group, verb or name is another question', async () => {
  const { authz, asked, clock } = fixture();
  assert.equal((await authz.authorize(get(host('jane'), 'open'))).decision, 'allow');
  assert.equal((await authz.authorize(get(host('jane'), 'open'))).decision, 'allow');
  assert.equal(asked.length, 1);
  await authz.authorize(get(host('joe'), 'open'));
  await authz.authorize(get(host('jane', ['viewers']), 'open'));
  await authz.authorize(get(host('jane'), 'open', 'delete'));
  await authz.authorize(get(host('jane'), 'closed'));
  assert.equal(asked.length, 5);
  clock.now += 10_001;
  await authz.authorize(get(host('jane'), 'open'));
  assert.equal(asked.length, 6);
});

test('concurrent identical questions share one review', async () => {
  const { authz, asked } = fixture();
  await Promise.all(Array.from({ length: 20 }, () => authz.authorize(get(host('jane'), 'open'))));
  assert.equal(asked.length, 1);
});

test('the cache is bounded: past its size the oldest answers are asked again', async () => {
  const { authz, asked } = fixture(3);
  for (const name of ['a', 'b', 'c', 'd']) await authz.authorize(get(host('jane'), name));
  assert.equal(asked.length, 4);
  await authz.authorize(get(host('jane'), 'd'));
  assert.equal(asked.length, 4);
  await authz.authorize(get(host('jane'), 'a'));
  assert.equal(asked.length, 5);
});

test('platform identities and system:masters never reach the host', async () => {
  const { authz, asked } = fixture();
  assert.equal((await authz.authorize(get({ name: 'alice', groups: [] }, 'open'))).decision, 'no-opinion');
  assert.equal((await authz.authorize(get(host('root', ['system:masters']), 'x'))).decision, 'allow');
  assert.equal(asked.length, 0);
});
