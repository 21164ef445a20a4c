import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';

import { isApiError, type ApiError } from '../../apis/meta/errors.js';
import { RequestAudit } from '../../audit/context.js';
import { newEvent, snapshotEvent } from '../../audit/event.js';
import type { Event } from '../../audit/types.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import type { Attributes, AuthorizationResult, Authorizer } from '../../authorization/interfaces.js';
import {
  hasImpersonationHeaders,
  impersonate,
  splitServiceAccountUsername,
  unescapeExtraKey,
  type ImpersonationScope,
} from './impersonation.js';

const alice: AuthenticatedUser = {
  name: 'alice',
  groups: ['devs', 'system:authenticated'],
  accessKeyName: 'alice-laptop',
};

/** A request with these header lines, in this order, as node:http parses them. */
function request(lines: readonly [string, string][]): IncomingMessage {
  const headers: Record<string, string> = {};
  const headersDistinct: Record<string, string[]> = {};
  for (const [k, v] of lines) {
    const lower = k.toLowerCase();
    headers[lower] = lower in headers ? `${headers[lower]}, ${v}` : v;
    (headersDistinct[lower] ??= []).push(v);
  }
  return { rawHeaders: lines.flat(), headers, headersDistinct } as unknown as IncomingMessage;
}

/** Records every question; answers with `decide`. */
class RecordingAuthorizer implements Authorizer {
  readonly asked: Attributes[] = [];
  constructor(
    private readonly decide: (a: Attributes) => AuthorizationResult | Promise<AuthorizationResult>,
  ) {}
  authorize(attrs: Attributes): AuthorizationResult | Promise<AuthorizationResult> {
    this.asked.push(attrs);
    return this.decide(attrs);
  }
}

const allowAll = (): RecordingAuthorizer => new RecordingAuthorizer(() => ({ decision: 'allow' }));

function scopeOf(lines: readonly [string, string][], user: AuthenticatedUser = alice): ImpersonationScope {
  return { req: request(lines), user, audit: undefined };
}

async function run(
  lines: readonly [string, string][],
  authorizer: Authorizer = allowAll(),
  user: AuthenticatedUser = alice,
): Promise<AuthenticatedUser> {
  return await impersonate(authorizer, scopeOf(lines, user));
}

async function refusal(
  lines: readonly [string, string][],
  authorizer: Authorizer = allowAll(),
): Promise<ApiError> {
  try {
    await run(lines, authorizer);
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

/** What a caller asked about, one line per question. */
function questions(authorizer: RecordingAuthorizer): string[] {
  return authorizer.asked.map(
    (a) =>
      `${a.verb} ${a.apiGroup}/${a.apiVersion} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} ${a.namespace}/${a.name}`,
  );
}

/** A Metadata-level audit of alice's request, storing its events into `stored`. */
function auditOf(stored: Event[]): RequestAudit {
  return new RequestAudit(
    newEvent({
      level: 'Metadata',
      auditID: 'a',
      requestURI: '/apis/g/v1/users',
      verb: 'list',
      user: { username: 'alice', groups: ['devs', 'system:authenticated'] },
      sourceIPs: [],
      userAgent: '',
      objectRef: undefined,
      requestReceivedEpochMs: Date.UTC(2024, 0, 1),
    }),
    { level: 'Metadata', omitStages: [], omitManagedFields: false },
    { processEvents: (events) => (stored.push(...events), Promise.resolve(true)) },
  );
}

describe('impersonation filter', () => {
  it('sees Impersonate-* headers in any case, and nothing else', () => {
    assert.equal(hasImpersonationHeaders(request([])), false);
    assert.equal(
      hasImpersonationHeaders(
        request([
          ['Accept', 'application/json'],
          ['If-Match', 'x'],
        ]),
      ),
      false,
    );
    assert.equal(
      hasImpersonationHeaders(
        request([
          ['Impersonate', 'x'],
          ['Imported-By', 'y'],
        ]),
      ),
      false,
    );
    assert.equal(
      hasImpersonationHeaders(
        request([
          ['Accept', 'a'],
          ['Impersonate-User', 'bob'],
        ]),
      ),
      true,
    );
    assert.equal(hasImpersonationHeaders(request([['impersonate-group', 'g']])), true);
    assert.equal(hasImpersonationHeaders(request([['IMPERSONATE-EXTRA-scopes', 'v']])), true);
    assert.equal(hasImpersonationHeaders(request([['Impersonate-Uid', 'u']])), true);
  });

  it('serves the request as the user, with system:authenticated and who impersonated', async () => {
    const authorizer = allowAll();
    const user = await run([['Impersonate-User', 'bob']], authorizer);
    assert.deepEqual(questions(authorizer), ['impersonate /v1 users /bob']);
    assert.equal(authorizer.asked[0]?.user, alice);
    assert.equal(authorizer.asked[0]?.isResourceRequest, true);
    // None of the caller's credential comes along: no key, no scope.
    assert.deepEqual(user, {
      name: 'bob',
      groups: ['system:authenticated'],
      impersonator: { name: 'alice', groups: ['devs', 'system:authenticated'] },
    });
  });

  it('keeps a host identity a host identity, so the host still decides for it', async () => {
    const host: AuthenticatedUser = { name: 'kube-admin', groups: ['system:masters'], hostIdentity: true };
    const user = await run([['Impersonate-User', 'bob']], allowAll(), host);
    assert.equal(user.hostIdentity, true);
    assert.equal(user.impersonator?.name, 'kube-admin');
  });

  it('takes the groups asked for instead, adding system:authenticated unless an all-users group is there', async () => {
    const groups = async (lines: [string, string][]): Promise<readonly string[]> =>
      (await run([['Impersonate-User', 'bob'], ...lines])).groups;
    assert.deepEqual(
      await groups([
        ['Impersonate-Group', 'g1'],
        ['Impersonate-Group', 'g2'],
      ]),
      ['g1', 'g2', 'system:authenticated'],
    );
    assert.deepEqual(await groups([['Impersonate-Group', 'system:authenticated']]), ['system:authenticated']);
    assert.deepEqual(await groups([['Impersonate-Group', 'system:unauthenticated']]), [
      'system:unauthenticated',
    ]);
    const anonymous = await run([['Impersonate-User', 'system:anonymous']]);
    assert.deepEqual(anonymous.groups, ['system:unauthenticated']);
    const anonymousInGroup = await run([
      ['Impersonate-User', 'system:anonymous'],
      ['Impersonate-Group', 'g1'],
    ]);
    assert.deepEqual(anonymousInGroup.groups, ['g1', 'system:unauthenticated']);
  });

  it('asks about a service account by namespace and name, and gives it its groups', async () => {
    const authorizer = allowAll();
    const user = await run([['Impersonate-User', 'system:serviceaccount:ci:builder']], authorizer);
    assert.deepEqual(questions(authorizer), ['impersonate /v1 serviceaccounts ci/builder']);
    assert.equal(user.name, 'system:serviceaccount:ci:builder');
    assert.deepEqual(user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:ci',
      'system:authenticated',
    ]);
    // Groups asked for replace the service account's own.
    const grouped = await run([
      ['Impersonate-User', 'system:serviceaccount:ci:builder'],
      ['Impersonate-Group', 'g1'],
    ]);
    assert.deepEqual(grouped.groups, ['g1', 'system:authenticated']);
  });

  it('takes a name that is no valid service account username for a user', async () => {
    assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:sa'), ['ns', 'sa']);
    for (const name of [
      'system:serviceaccount:ns:sa:x',
      'system:serviceaccount:ns',
      'system:serviceaccount::sa',
      'system:serviceaccount:NS:sa',
      'system:serviceaccounts:ns:sa',
    ]) {
      assert.equal(splitServiceAccountUsername(name), undefined, name);
      const authorizer = allowAll();
      const user = await run([['Impersonate-User', name]], authorizer);
      assert.deepEqual(questions(authorizer), [`impersonate /v1 users /${name}`]);
      assert.equal(user.name, name);
    }
  });

  it('records extras under their decoded, lower-cased keys, one question per value', async () => {
    const authorizer = allowAll();
    const user = await run(
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Extra-Example.com%2FScopes', 'read'],
        ['impersonate-extra-example.com%2fscopes', 'write'],
        ['Impersonate-Extra-Reason', 'on call'],
      ],
      authorizer,
    );
    assert.deepEqual(user.extra, { 'example.com/scopes': ['read', 'write'], reason: ['on call'] });
    assert.deepEqual(questions(authorizer), [
      'impersonate /v1 users /bob',
      'impersonate authentication.k8s.io/v1 userextras/example.com/scopes /read',
      'impersonate authentication.k8s.io/v1 userextras/example.com/scopes /write',
      'impersonate authentication.k8s.io/v1 userextras/reason /on call',
    ]);
  });

  it('takes extra keys that name Object.prototype members as plain keys', async () => {
    const user = await run(
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Extra-Constructor', 'x'],
        ['Impersonate-Extra-__proto__', 'y'],
        ['Impersonate-Extra-toString', 'z'],
      ],
      allowAll(),
    );
    const extra = user.extra ?? {};
    assert.deepEqual(Object.keys(extra), ['constructor', '__proto__', 'tostring']);
    assert.deepEqual(extra['constructor'], ['x']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(extra, '__proto__')?.value, ['y']);
    assert.deepEqual(extra['tostring'], ['z']);
  });

  it('decodes extra keys as url.PathUnescape does', () => {
    assert.equal(unescapeExtraKey('plain'), 'plain');
    assert.equal(unescapeExtraKey('a%2fb%20c'), 'a/b c');
    assert.equal(unescapeExtraKey('a+b'), 'a+b');
    assert.equal(unescapeExtraKey('%e2%9c%93'), '\u2713');
    // Malformed: kept as it came.
    assert.equal(unescapeExtraKey('a%zzb'), 'a%zzb');
    assert.equal(unescapeExtraKey('a%2'), 'a%2');
  });

  it('asks in upstream order: user, groups, extras, uid', async () => {
    const authorizer = allowAll();
    const user = await run(
      [
        ['Impersonate-Uid', 'uid-7'],
        ['Impersonate-Extra-Scopes', 'view'],
        ['Impersonate-Group', 'g1'],
        ['Impersonate-User', 'bob'],
        ['Impersonate-Group', 'g2'],
      ],
      authorizer,
    );
    assert.deepEqual(questions(authorizer), [
      'impersonate /v1 users /bob',
      'impersonate /v1 groups /g1',
      'impersonate /v1 groups /g2',
      'impersonate authentication.k8s.io/v1 userextras/scopes /view',
      'impersonate authentication.k8s.io/v1 uids /uid-7',
    ]);
    assert.deepEqual(user, {
      name: 'bob',
      groups: ['g1', 'g2', 'system:authenticated'],
      uid: 'uid-7',
      extra: { scopes: ['view'] },
      impersonator: { name: 'alice', groups: ['devs', 'system:authenticated'] },
    });
  });

  it('uses the first Impersonate-User and Impersonate-Uid line, as Header.Get does', async () => {
    const user = await run([
      ['Impersonate-User', 'bob'],
      ['Impersonate-User', 'carol'],
      ['Impersonate-Uid', 'u1'],
      ['Impersonate-Uid', 'u2'],
    ]);
    assert.equal(user.name, 'bob');
    assert.equal(user.uid, 'u1');
  });

  it('leaves the caller as it is when the headers ask for nothing', async () => {
    const authorizer = allowAll();
    assert.equal(await run([['Impersonate-User', '']], authorizer), alice);
    assert.equal(authorizer.asked.length, 0);
  });

  it("refuses groups, extras or a uid without a user with upstream's 400", async () => {
    const cases: [[string, string][], string][] = [
      [[['Impersonate-Group', 'devs']], 'requested [{Group  devs    }] without impersonating a user'],
      [
        [['Impersonate-Uid', 'uid-1']],
        'requested [{UID  uid-1  authentication.k8s.io/v1  }] without impersonating a user',
      ],
      [
        [['Impersonate-Extra-Scopes', 'view']],
        'requested [{UserExtra  view  authentication.k8s.io/v1  scopes}] without impersonating a user',
      ],
      [
        [
          ['Impersonate-User', ''],
          ['Impersonate-Group', 'a'],
          ['Impersonate-Group', 'b'],
        ],
        'requested [{Group  a    } {Group  b    }] without impersonating a user',
      ],
    ];
    for (const [lines, message] of cases) {
      const authorizer = allowAll();
      const err = await refusal(lines, authorizer);
      assert.equal(err.code, 400);
      assert.equal(err.reason, 'BadRequest');
      assert.equal(err.message, message);
      assert.equal(authorizer.asked.length, 0, 'nothing is authorized');
    }
  });

  it("refuses with upstream's 403 at the first thing the caller may not impersonate", async () => {
    const denyOn = (resource: string, reason?: string): RecordingAuthorizer =>
      new RecordingAuthorizer((a) =>
        a.resource === resource ? { decision: 'deny', ...(reason ? { reason } : {}) } : { decision: 'allow' },
      );
    const full: [string, string][] = [
      ['Impersonate-User', 'bob'],
      ['Impersonate-Group', 'g1'],
      ['Impersonate-Extra-Scopes', 'view'],
      ['Impersonate-Uid', 'uid-7'],
    ];
    const users = denyOn('users');
    let err = await refusal(full, users);
    assert.equal(err.code, 403);
    assert.equal(
      err.message,
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    assert.deepEqual(err.details, { name: 'bob', kind: 'users' });
    assert.equal(users.asked.length, 1, 'nothing after the refusal is asked');

    err = await refusal(full, denyOn('groups', 'not a member'));
    assert.equal(
      err.message,
      'groups "g1" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope: not a member',
    );
    err = await refusal(full, denyOn('userextras'));
    assert.equal(
      err.message,
      'userextras.authentication.k8s.io "view" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    );
    err = await refusal(full, denyOn('uids'));
    assert.equal(
      err.message,
      'uids.authentication.k8s.io "uid-7" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    );
    err = await refusal(
      [['Impersonate-User', 'system:serviceaccount:ci:builder']],
      denyOn('serviceaccounts'),
    );
    assert.equal(
      err.message,
      'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ci"',
    );
    // No opinion is no permission.
    err = await refusal(
      [['Impersonate-User', 'bob']],
      new RecordingAuthorizer(() => ({ decision: 'no-opinion' })),
    );
    assert.equal(err.code, 403);
  });

  it('refuses when the authorizer fails, as upstream does', async () => {
    const failing: Authorizer = {
      authorize: () => {
        throw new Error('host unreachable');
      },
    };
    const err = await refusal([['Impersonate-User', 'bob']], failing);
    assert.equal(err.code, 403);
    const rejecting: Authorizer = { authorize: () => Promise.reject(new Error('host unreachable')) };
    assert.equal((await refusal([['Impersonate-User', 'bob']], rejecting)).code, 403);
  });

  it('waits for an authorizer that answers later, in order', async () => {
    const authorizer = new RecordingAuthorizer((a) =>
      Promise.resolve<AuthorizationResult>({ decision: a.resource === 'groups' ? 'deny' : 'allow' }),
    );
    const pending = impersonate(authorizer, scopeOf([['Impersonate-User', 'bob']]));
    assert.ok(pending instanceof Promise);
    assert.equal((await pending).name, 'bob');
    const err = await refusal(
      [
        ['Impersonate-User', 'bob'],
        ['Impersonate-Group', 'g1'],
        ['Impersonate-Uid', 'u'],
      ],
      authorizer,
    );
    assert.match(err.message, /^groups "g1" is forbidden/);
  });

  it('answers synchronously when the authorizer does', () => {
    const user = impersonate(allowAll(), scopeOf([['Impersonate-User', 'bob']]));
    assert.ok(!(user instanceof Promise));
    assert.equal(user.name, 'bob');
  });

  it('removes the impersonation headers once the request acts as the user', async () => {
    const scope = scopeOf([
      ['Accept', 'application/json'],
      ['Impersonate-User', 'bob'],
      ['Impersonate-Group', 'g1'],
      ['Impersonate-Extra-Scopes', 'view'],
      ['Impersonate-Uid', 'u'],
      ['User-Agent', 'kubectl'],
    ]);
    await impersonate(allowAll(), scope);
    assert.deepEqual(scope.req.rawHeaders, ['Accept', 'application/json', 'User-Agent', 'kubectl']);
    assert.deepEqual(Object.keys(scope.req.headers).sort(), ['accept', 'user-agent']);
    assert.deepEqual(Object.keys(scope.req.headersDistinct).sort(), ['accept', 'user-agent']);
    assert.equal(hasImpersonationHeaders(scope.req), false);
  });

  it('keeps the headers of a refused request (it is answered at once)', async () => {
    const scope = scopeOf([['Impersonate-User', 'bob']]);
    await assert.rejects(async () => await impersonate({ authorize: () => ({ decision: 'deny' }) }, scope));
    assert.deepEqual(scope.req.rawHeaders, ['Impersonate-User', 'bob']);
  });

  it("records the impersonated user in the audit event beside the caller's", async () => {
    const stored: Event[] = [];
    const audit = auditOf(stored);
    const scope: ImpersonationScope = {
      req: request([
        ['Impersonate-User', 'bob'],
        ['Impersonate-Group', 'g1'],
        ['Impersonate-Extra-Scopes', 'view'],
        ['Impersonate-Uid', 'uid-7'],
      ]),
      user: alice,
      audit,
    };
    await impersonate(allowAll(), scope);
    await audit.process('ResponseComplete');
    const event = stored[0];
    assert.ok(event);
    assert.deepEqual(event.user, { username: 'alice', groups: ['devs', 'system:authenticated'] });
    assert.deepEqual(event.impersonatedUser, {
      username: 'bob',
      uid: 'uid-7',
      groups: ['g1', 'system:authenticated'],
      extra: { scopes: ['view'] },
    });
    // In upstream's field order, after user.
    const json = JSON.stringify(snapshotEvent(event));
    assert.ok(json.indexOf('"impersonatedUser"') > json.indexOf('"user"'));
    assert.match(
      json,
      /"impersonatedUser":\{"username":"bob","uid":"uid-7","groups":\["g1","system:authenticated"\],"extra":\{"scopes":\["view"\]\}\}/,
    );
  });

  it('records nothing in the audit event of a refused impersonation', async () => {
    const audit = auditOf([]);
    await assert.rejects(
      async () =>
        await impersonate(
          { authorize: () => ({ decision: 'deny' }) },
          { req: request([['Impersonate-User', 'bob']]), user: alice, audit },
        ),
    );
    assert.equal(audit.event.impersonatedUser, undefined);
  });
});
