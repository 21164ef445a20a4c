import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { isApiError } from '../../../apis/meta/errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { AccessKeyScope } from '../../../apis/management/v1/common.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import type { Attributes, Authorizer } from '../../../authorization/interfaces.js';
import { SigningKeyManager } from '../../../tokens/key-manager.js';
import { MemoryKeyStore } from '../../../tokens/key-store.js';
import { TokenIssuer } from '../../../tokens/token-issuer.js';
import type { CreateOptions, RequestContext, RESTStorage } from '../../rest/interfaces.js';
import { DirectClusterEndpointTokenStorage } from './storage.js';

const GROUP = 'management.platform.dev';
const MAX_TTL = 86400;
const WRITE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };
const DRY_RUN: CreateOptions = { ...WRITE, dryRun: true };

/** Admins may do everything; others only get and list SharedSecrets. */
const authorizer: Authorizer & { asked: Attributes[] } = {
  asked: [],
  authorize(attrs) {
    this.asked.push(attrs);
    const allowed =
      attrs.user.name === 'admin' ||
      (attrs.resource === 'sharedsecrets' && (attrs.verb === 'get' || attrs.verb === 'list'));
    return Promise.resolve({ decision: allowed ? 'allow' : 'no-opinion' });
  },
};

const users = new Map<string, KubeObject>([
  [
    'alice',
    { apiVersion: `${GROUP}/v1`, kind: 'User', metadata: { name: 'alice' }, spec: { tokenGeneration: 4 } },
  ],
]);

let issuer: TokenIssuer;
let storage: DirectClusterEndpointTokenStorage;
let issued = 0;

function ctx(user: AuthenticatedUser): RequestContext {
  return { user, namespace: '', warnings: [] };
}

const alice: AuthenticatedUser = {
  name: 'alice',
  groups: ['dev', 'system:authenticated'],
  accessKeyName: 'k',
  accessKeyUid: 'uid-of-k',
  accessKeyDigest: 'digest-of-k',
};

function body(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: `${GROUP}/v1`, kind: 'DirectClusterEndpointToken', spec };
}

function tokenOf(obj: KubeObject): string {
  const status = obj['status'];
  return isObject(status) && typeof status['token'] === 'string' ? status['token'] : '';
}

async function failure(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return { code: err.code, message: err.message };
  }
  assert.fail('expected the request to fail');
}

before(async () => {
  const keys = new SigningKeyManager({ store: new MemoryKeyStore(), rotationPeriodMs: 0, gracePeriodMs: 0 });
  await keys.init();
  issuer = new TokenIssuer(keys, { issuer: 'https://platform.test', audience: GROUP });
  const counting: Pick<TokenIssuer, 'issue'> = {
    issue: (req) => {
      issued++;
      return issuer.issue(req);
    },
  };
  storage = new DirectClusterEndpointTokenStorage({
    group: GROUP,
    issuer: counting,
    maxTtlSeconds: MAX_TTL,
    authorizer,
    users: { user: (name) => users.get(name) },
    compileSchema,
  });
});

describe('DirectClusterEndpointToken create', () => {
  it('returns a signed token for the caller that lives ttl seconds, storing nothing', async () => {
    const created = await storage.create(ctx(alice), body({ ttl: 1800 }), WRITE);
    assert.equal(created['kind'], 'DirectClusterEndpointToken');
    assert.deepEqual(created['spec'], { ttl: 1800 });
    const claims = await issuer.verify(tokenOf(created));
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.exp - claims.iat, 1800);
    assert.equal(claims.tokenGeneration, 4);
    assert.deepEqual(claims.groups, ['dev']);
    assert.equal(claims.scope, undefined);
    assert.deepEqual(claims.accessKey, { name: 'k', uid: 'uid-of-k', digest: 'digest-of-k' });
    const rest: RESTStorage = storage;
    assert.equal(rest.get, undefined);
    assert.equal(rest.list, undefined);
  });

  it('issues nothing on a dry run', async () => {
    const before = issued;
    const created = await storage.create(ctx(alice), body({ ttl: 60 }), DRY_RUN);
    assert.equal(tokenOf(created), '');
    assert.equal(issued, before);
  });

  it('refuses a zero, negative, absurd or missing ttl with 422', async () => {
    for (const [ttl, message] of [
      [0, 'spec.ttl: Invalid value: 0: must be between 1 and 86400, inclusive'],
      [-5, 'spec.ttl: Invalid value: -5: must be between 1 and 86400, inclusive'],
      [MAX_TTL + 1, 'spec.ttl: Invalid value: 86401: must be between 1 and 86400, inclusive'],
      [undefined, 'spec.ttl: Required value'],
    ] as const) {
      const before = issued;
      const err = await failure(storage.create(ctx(alice), body(ttl === undefined ? {} : { ttl }), DRY_RUN));
      assert.equal(err.code, 422);
      assert.ok(err.message.startsWith(`DirectClusterEndpointToken.${GROUP} "" is invalid: `), err.message);
      assert.ok(err.message.includes(message), err.message);
      assert.equal(issued, before);
    }
    const err = await failure(storage.create(ctx(alice), body({ ttl: 'soon' }), WRITE));
    assert.equal(err.code, 422);
  });

  it('refuses unknown fields under strict field validation', async () => {
    const err = await failure(storage.create(ctx(alice), body({ ttl: 60, lifetime: 60 }), WRITE));
    assert.equal(err.code, 400);
    assert.match(err.message, /unknown field "spec.lifetime"/);
  });

  it('gives a scoped caller at most its own scope', async () => {
    const own: AccessKeyScope = { projects: [{ project: 'a' }] };
    const scoped: AuthenticatedUser = { ...alice, scope: own };

    const inherited = await storage.create(ctx(scoped), body({ ttl: 60 }), WRITE);
    assert.deepEqual((await issuer.verify(tokenOf(inherited))).scope, own);

    const narrower = { virtualClusters: [{ project: 'a', virtualCluster: 'v' }] };
    const narrowed = await storage.create(ctx(scoped), body({ ttl: 60, scope: narrower }), WRITE);
    assert.deepEqual((await issuer.verify(tokenOf(narrowed))).scope, narrower);

    const before = issued;
    const err = await failure(
      storage.create(ctx(scoped), body({ ttl: 60, scope: { projects: [{ project: '*' }] } }), WRITE),
    );
    assert.equal(err.code, 403);
    assert.equal(
      err.message,
      `directclusterendpointtokens.${GROUP} is forbidden: User "alice" cannot issue a token with a scope wider than the scope of their own credential: projects[0] (*) not covered`,
    );
    assert.equal(issued, before);
  });

  it('refuses scope rules over this API group that the caller may not use, asking as the caller', async () => {
    const readSecrets = {
      rules: [
        {
          verbs: ['get', 'list'],
          resources: [{ group: GROUP, resources: ['sharedsecrets'] }],
          namespaces: ['p-a'],
        },
      ],
    };
    authorizer.asked = [];
    const ok = await storage.create(ctx(alice), body({ ttl: 60, scope: readSecrets }), WRITE);
    assert.ok(tokenOf(ok));
    assert.deepEqual(
      authorizer.asked.map((a) => [a.user.name, a.verb, a.resource, a.namespace]),
      [
        ['alice', 'get', 'sharedsecrets', 'p-a'],
        ['alice', 'list', 'sharedsecrets', 'p-a'],
      ],
    );

    const deleteUsers = {
      rules: [{ verbs: ['delete'], resources: [{ group: GROUP, resources: ['users'] }] }],
    };
    const err = await failure(storage.create(ctx(alice), body({ ttl: 60, scope: deleteUsers }), DRY_RUN));
    assert.equal(err.code, 403);
    assert.equal(
      err.message,
      `directclusterendpointtokens.${GROUP} is forbidden: the scope is wider than the caller's own rights: User "alice" cannot delete resource "users" in API group "${GROUP}" at the cluster scope`,
    );
    const admin: AuthenticatedUser = { name: 'admin', groups: ['system:authenticated'] };
    assert.ok(tokenOf(await storage.create(ctx(admin), body({ ttl: 60, scope: deleteUsers }), WRITE)));
  });

  it('leaves rules about a connected cluster’s own resources to the cluster', async () => {
    const pods = {
      rules: [{ verbs: ['*'], resources: [{ group: '', resources: ['pods'] }], cluster: 'prod' }],
    };
    const created = await storage.create(ctx(alice), body({ ttl: 60, scope: pods }), WRITE);
    assert.deepEqual((await issuer.verify(tokenOf(created))).scope, pods);
  });

  it('issues no tokenGeneration for a caller that is not a User', async () => {
    const team: AuthenticatedUser = { name: 'team:dev', groups: ['team:dev', 'system:authenticated'] };
    const created = await storage.create(ctx(team), body({ ttl: 60 }), WRITE);
    const claims = await issuer.verify(tokenOf(created));
    assert.equal(claims.sub, 'team:dev');
    assert.equal(claims.tokenGeneration, undefined);
  });

  it('names no access key when the caller used none (its token is for connected clusters only)', async () => {
    const proxied: AuthenticatedUser = { name: 'alice', groups: ['dev'], hostIdentity: true };
    const created = await storage.create(ctx(proxied), body({ ttl: 60 }), WRITE);
    const claims = await issuer.verify(tokenOf(created));
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.accessKey, undefined);
  });
});
