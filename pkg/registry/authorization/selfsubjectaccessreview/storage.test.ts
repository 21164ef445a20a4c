import assert from 'node:assert/strict';
import { test } from 'node:test';

import protobuf from 'protobufjs';

import { ApiError } from '../../../apis/meta/errors.js';
import type { Attributes, AuthorizationResult, Authorizer } from '../../../authorization/interfaces.js';
import type { CreateOptions, RequestContext } from '../../rest/interfaces.js';
import { selfSubjectAccessReviewProtobuf } from '../../../apis/authorization/v1/types.js';
import { SelfSubjectAccessReviewStorage } from './storage.js';

const CREATE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };
const ctx: RequestContext = {
  user: { name: 'alice', groups: ['system:authenticated'] },
  namespace: '',
  warnings: [],
};

/** Answers from a table keyed by verb, and remembers what it was asked. */
class TableAuthorizer implements Authorizer {
  readonly asked: Attributes[] = [];
  constructor(private readonly answers: Record<string, AuthorizationResult>) {}
  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    this.asked.push(attrs);
    return Promise.resolve(this.answers[attrs.verb] ?? { decision: 'deny' });
  }
}

function review(
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata, spec };
}

async function statusOf(
  storage: SelfSubjectAccessReviewStorage,
  spec: Record<string, unknown>,
): Promise<unknown> {
  return (await storage.create(ctx, review(spec), CREATE))['status'];
}

test('allowed, explicitly denied (with the reason) and nobody-allowed read as upstream reports them', async () => {
  const authorizer = new TableAuthorizer({
    get: { decision: 'allow' },
    delete: { decision: 'deny', reason: 'the scope of access key "k" does not allow this request' },
  });
  const storage = new SelfSubjectAccessReviewStorage(authorizer);
  const attrs = (verb: string) => ({
    resourceAttributes: { verb, group: 'g', resource: 'teams', name: 'x' },
  });
  assert.deepEqual(await statusOf(storage, attrs('get')), { allowed: true });
  assert.deepEqual(await statusOf(storage, attrs('delete')), {
    allowed: false,
    denied: true,
    reason: 'the scope of access key "k" does not allow this request',
  });
  // The chain's default denial has no reason: no opinion, not an explicit denial.
  assert.deepEqual(await statusOf(storage, attrs('update')), { allowed: false });
  assert.equal(authorizer.asked[0]?.user, ctx.user, 'asked as the caller, the very identity object');
  assert.equal(authorizer.asked[0]?.name, 'x');
});

test("a cluster-scoped resource is asked about without kubectl's current namespace", async () => {
  const authorizer = new TableAuthorizer({ get: { decision: 'allow' } });
  const storage = new SelfSubjectAccessReviewStorage(authorizer, (_g, r) =>
    r === 'teams' ? 'Cluster' : 'Namespaced',
  );
  await statusOf(storage, {
    resourceAttributes: { namespace: 'default', verb: 'get', group: 'g', resource: 'teams' },
  });
  await statusOf(storage, {
    resourceAttributes: { namespace: 'ci', verb: 'get', group: 'g', resource: 'sharedsecrets' },
  });
  assert.deepEqual(
    authorizer.asked.map((a) => a.namespace),
    ['', 'ci'],
  );
});

test('a path is a non-resource question', async () => {
  const authorizer = new TableAuthorizer({ get: { decision: 'allow' } });
  const storage = new SelfSubjectAccessReviewStorage(authorizer);
  assert.deepEqual(await statusOf(storage, { nonResourceAttributes: { path: '/healthz', verb: 'get' } }), {
    allowed: true,
  });
  assert.equal(authorizer.asked[0]?.isResourceRequest, false);
  assert.equal(authorizer.asked[0]?.path, '/healthz');
});

test("invalid reviews are 422 with upstream's field errors; another kind is a 400", async () => {
  const storage = new SelfSubjectAccessReviewStorage(new TableAuthorizer({}));
  const invalid = async (body: unknown, message: RegExp): Promise<void> => {
    await assert.rejects(
      storage.create(ctx, body, CREATE),
      (err: unknown) => err instanceof ApiError && err.code === 422 && message.test(err.message),
    );
  };
  await invalid(
    review({}),
    /^SelfSubjectAccessReview\.authorization\.k8s\.io "" is invalid: spec\.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified$/,
  );
  await invalid(
    review({ resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/' } }),
    /spec\.nonResourceAttributes: Invalid value: .*cannot be specified in combination with resourceAttributes/,
  );
  await invalid(
    review({ resourceAttributes: { verb: 'get' } }, { name: 'x' }),
    /metadata: Invalid value: .*must be empty/,
  );
  // JSON clients send creationTimestamp: null, which is empty.
  await storage.create(
    ctx,
    review({ resourceAttributes: { verb: 'get' } }, { creationTimestamp: null }),
    CREATE,
  );
  await assert.rejects(
    storage.create(ctx, { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1' }, CREATE),
    (err: unknown) =>
      err instanceof ApiError && err.code === 400 && /not a SelfSubjectAccessReview/.test(err.message),
  );
});

test('returns the selectors it was asked about, as upstream returns the spec, and decides as without them', async () => {
  const authorizer = new TableAuthorizer({ list: { decision: 'allow' } });
  const storage = new SelfSubjectAccessReviewStorage(authorizer);
  const fieldSelector = { requirements: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] };
  const labelSelector = { rawSelector: 'team=dev' };
  const answer = await storage.create(
    ctx,
    review({ resourceAttributes: { verb: 'list', resource: 'teams', fieldSelector, labelSelector } }),
    CREATE,
  );
  assert.deepEqual(answer['spec'], {
    resourceAttributes: { verb: 'list', resource: 'teams', fieldSelector, labelSelector },
  });
  assert.deepEqual(answer['status'], { allowed: true });
  // Anything but an object is no selector (upstream's decoding would refuse it).
  const bare = await storage.create(
    ctx,
    review({ resourceAttributes: { verb: 'list', resource: 'teams', fieldSelector: 'x' } }),
    CREATE,
  );
  assert.deepEqual(bare['spec'], { resourceAttributes: { verb: 'list', resource: 'teams' } });
});

test('decodes the selectors from the protobuf a client sends', async () => {
  const root = protobuf.Root.fromJSON({
    nested: {
      Unknown: {
        fields: { typeMeta: { type: 'TypeMeta', id: 1 }, raw: { type: 'bytes', id: 2 } },
      },
      TypeMeta: { fields: { apiVersion: { type: 'string', id: 1 }, kind: { type: 'string', id: 2 } } },
      ObjectMeta: { fields: { name: { type: 'string', id: 1 } } },
      ...selfSubjectAccessReviewProtobuf.messages,
    },
  });
  const fieldSelector = { requirements: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] };
  const labelSelector = { rawSelector: 'team=dev' };
  const spec = { resourceAttributes: { verb: 'list', resource: 'teams', fieldSelector, labelSelector } };
  const ssar = root.lookupType('SelfSubjectAccessReview');
  const unknown = root.lookupType('Unknown');
  const raw = Buffer.concat([
    Buffer.from('k8s\x00', 'latin1'),
    unknown
      .encode({
        typeMeta: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview' },
        raw: ssar.encode(ssar.fromObject({ spec })).finish(),
      })
      .finish(),
  ]);
  const storage = new SelfSubjectAccessReviewStorage(new TableAuthorizer({ list: { decision: 'allow' } }));
  const body = storage.decodeProtobuf(raw);
  assert.deepEqual((body as Record<string, unknown>)['spec'], spec);
  assert.deepEqual((await storage.create(ctx, body, CREATE))['spec'], spec);
});
