import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { newApiHandler } from '../api-handler.js';
import { IgnoreErrorsBackend, type AuditBackend } from '../../audit/backend.js';
import { BufferedBackend } from '../../audit/buffered.js';
import { LOG_BATCH_CONFIG, type AuditConfig } from '../../audit/options.js';
import { PolicyChecker } from '../../audit/policy.js';
import type { Event, Policy } from '../../audit/types.js';
import { registry } from '../../metrics/registry.js';
import { sample } from '../../metrics/testing.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import {
  call,
  FakeAuthenticator,
  fakeDocumentBuilders,
  startTestServer,
  GROUP,
  type TestServer,
} from '../testing/fakes.js';

const TEAMS = `/apis/${GROUP}/v1/teams`;
const EVERYTHING: Policy = { rules: [{ level: 'RequestResponse' }] };

/** A backend that keeps what it gets, answers `ok`, and may never answer at all. */
class RecordingBackend implements AuditBackend {
  readonly events: Event[] = [];
  constructor(
    private readonly ok = true,
    private readonly hang = false,
  ) {}
  processEvents(events: readonly Event[]): Promise<boolean> {
    this.events.push(...events);
    return this.hang ? new Promise<boolean>(() => undefined) : Promise.resolve(this.ok);
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function serverWith(
  audit: AuditConfig | undefined,
  prepare?: Parameters<typeof startTestServer>[0],
): Promise<TestServer> {
  return startTestServer({
    ...prepare,
    createHandler: (config) =>
      newApiHandler({ ...config, ...(audit ? { audit } : {}) }, fakeDocumentBuilders),
  });
}

async function rejected(): Promise<number> {
  return sample(await registry.metrics(), 'apiserver_audit_requests_rejected_total') ?? 0;
}

describe('the audit filter', () => {
  it('gives every response an Audit-ID, keeps one the client sent, and logs it', async () => {
    const s = await serverWith(undefined);
    try {
      const fresh = await call(s.url, TEAMS);
      assert.match(
        String(fresh.headers['audit-id']),
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      const kept = await call(s.url, TEAMS, { headers: { 'Audit-ID': 'from-the-aggregator' } });
      assert.equal(kept.headers['audit-id'], 'from-the-aggregator');
      const denied = await call(s.url, TEAMS, { token: 'wrong' });
      assert.equal(denied.status, 401);
      assert.ok(denied.headers['audit-id']);
      const logged = s.logger.lines.filter((l) => l.msg === 'request').map((l) => l.fields.auditID);
      assert.ok(logged.includes('from-the-aggregator'));
      assert.ok(logged.includes(fresh.headers['audit-id']));
    } finally {
      await s.close();
    }
  });

  it('blocking-strict: a RequestReceived that cannot be stored fails the request with 500, before any work', async () => {
    const backend = new RecordingBackend(false);
    const s = await serverWith({ policy: new PolicyChecker(EVERYTHING), backend });
    try {
      const before = await rejected();
      const r = await call(s.url, TEAMS);
      assert.equal(r.status, 500);
      assert.equal(r.json().message, 'Internal error occurred: failed to store audit event');
      assert.equal(s.teams.calls.length, 0, 'the handler never ran');
      assert.deepEqual(
        backend.events.filter((e) => e.auditID === r.headers['audit-id']).map((e) => e.stage),
        ['RequestReceived'],
        'no later stage is audited',
      );
      assert.equal(await rejected(), before + 1);
    } finally {
      await s.close();
    }
  });

  it('blocking: a failing backend never fails the request', async () => {
    const backend = new IgnoreErrorsBackend(new RecordingBackend(false));
    const s = await serverWith({ policy: new PolicyChecker(EVERYTHING), backend });
    try {
      assert.equal((await call(s.url, TEAMS)).status, 200);
    } finally {
      await s.close();
    }
  });

  it('batch: a backend that never answers never holds a request', async () => {
    const stuck = new RecordingBackend(true, true);
    const backend = new BufferedBackend(stuck, { ...LOG_BATCH_CONFIG, bufferSize: 2 }, () => undefined);
    const s = await serverWith({ policy: new PolicyChecker(EVERYTHING), backend });
    try {
      for (let i = 0; i < 5; i++) assert.equal((await call(s.url, TEAMS)).status, 200);
    } finally {
      await s.close();
    }
  });

  it('ends a request that fails unexpectedly with a Panic event, never the error text', async () => {
    const backend = new RecordingBackend();
    const s = await serverWith(
      { policy: new PolicyChecker(EVERYTHING), backend },
      {
        prepare: (teams) => {
          teams.list = () => Promise.reject(new TypeError('secret detail in a message'));
        },
      },
    );
    try {
      const r = await call(s.url, TEAMS);
      assert.equal(r.status, 500);
      const id = r.headers['audit-id'];
      const stages = backend.events.filter((e) => e.auditID === id);
      assert.deepEqual(
        stages.map((e) => e.stage),
        ['RequestReceived', 'Panic'],
      );
      assert.deepEqual(stages[1]?.responseStatus, {
        metadata: {},
        status: 'Failure',
        message: "APIServer panic'd: TypeError",
        reason: 'InternalError',
        code: 500,
      });
      assert.ok(!JSON.stringify(backend.events).includes('secret detail'));
    } finally {
      await s.close();
    }
  });

  it("records the user as authenticated (uid, groups, the front proxy's extra) and the access key's name", async () => {
    const backend = new RecordingBackend();
    const carol: AuthenticatedUser = {
      name: 'carol',
      uid: 'u-42',
      groups: ['dev', 'system:authenticated'],
      extra: { 'example.com/team': ['blue'] },
      accessKeyName: 'carol-ci',
    };
    const s = await startTestServer({
      createHandler: (config) =>
        newApiHandler(
          {
            ...config,
            authenticator: new FakeAuthenticator({ 'carol-token': carol }),
            audit: { policy: new PolicyChecker(EVERYTHING), backend },
          },
          fakeDocumentBuilders,
        ),
    });
    try {
      const r = await call(s.url, TEAMS, {
        token: 'carol-token',
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      assert.equal(r.status, 200);
      const event = backend.events.find((e) => e.auditID === r.headers['audit-id']);
      assert.deepEqual(event?.user, {
        username: 'carol',
        uid: 'u-42',
        groups: ['dev', 'system:authenticated'],
        extra: { [`${GROUP}/access-key`]: ['carol-ci'], 'example.com/team': ['blue'] },
      });
      assert.deepEqual(event?.sourceIPs, ['203.0.113.9', '127.0.0.1']);
    } finally {
      await s.close();
    }
  });

  it('stores nothing at level None, and leaves out the stages the policy omits', async () => {
    const backend = new RecordingBackend();
    const policy = new PolicyChecker({
      omitStages: ['RequestReceived'],
      rules: [
        { level: 'None', resources: [{ group: GROUP, resources: ['sharedsecrets'] }] },
        { level: 'Metadata' },
      ],
    });
    const s = await serverWith({ policy, backend });
    try {
      const none = await call(s.url, `/apis/${GROUP}/v1/namespaces/default/sharedsecrets`);
      assert.equal(none.status, 200);
      const metadata = await call(s.url, TEAMS);
      assert.equal(backend.events.filter((e) => e.auditID === none.headers['audit-id']).length, 0);
      const got = backend.events.filter((e) => e.auditID === metadata.headers['audit-id']);
      assert.deepEqual(
        got.map((e) => [e.stage, e.level, e.verb]),
        [['ResponseComplete', 'Metadata', 'list']],
      );
      assert.equal(got[0]?.responseObject, undefined, 'Metadata records no objects');
      assert.equal(got[0]?.user.username, 'alice');
    } finally {
      await s.close();
    }
  });
});
