import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import type { RequestContext } from '../../registry/rest/interfaces.js';
import type { StorageDeadline } from '../../storage/deadline.js';
import { objectGetLabels, sample } from '../../metrics/testing.js';
import { call, GROUP, openWatch, startTestServer, type TestServer } from '../testing/fakes.js';
import { newRequestTimeout, requestedTimeoutMs } from './timeout.js';

describe('?timeout=', () => {
  it('is a Go duration; zero, negative or absent means the server default', () => {
    assert.equal(requestedTimeoutMs(new URLSearchParams('timeout=1.5s')), 1500);
    assert.equal(requestedTimeoutMs(new URLSearchParams('timeout=2m')), 120_000);
    assert.equal(requestedTimeoutMs(new URLSearchParams('timeout=0s')), undefined);
    assert.equal(requestedTimeoutMs(new URLSearchParams('timeout=-5s')), undefined);
    assert.equal(requestedTimeoutMs(new URLSearchParams('')), undefined);
    assert.throws(
      () => requestedTimeoutMs(new URLSearchParams('timeout=soon')),
      /^ApiError: invalid timeout specified in the request URL - time: invalid duration "soon"$/,
    );
  });
});

describe('the request timeout Status', () => {
  it("says the operation may have succeeded only when a write was out to storage at the deadline", () => {
    assert.equal(
      newRequestTimeout().message,
      'Timeout: request did not complete within requested timeout - context deadline exceeded',
    );
    assert.equal(
      newRequestTimeout(true).message,
      'Timeout: request did not complete within requested timeout - context deadline exceeded: the operation may have succeeded',
    );
  });
});

describe('--request-timeout', () => {
  let s: TestServer;
  /** Gets that take this long; each records whether its signal aborted. */
  let slowMs = 0;
  const aborted: boolean[] = [];
  const created: string[] = [];
  /** The storage deadline each get was handed, and whether it was abandoned once the get's wait was over. */
  const deadlines: (StorageDeadline | undefined)[] = [];
  const abandonedAfterWait: boolean[] = [];
  before(async () => {
    s = await startTestServer({
      requestTimeoutMs: 300,
      prepare: (teams) => {
        const get = teams.get.bind(teams);
        teams.get = async (ctx: RequestContext, name, options): Promise<KubeObject> => {
          deadlines.push(ctx.deadline);
          if (slowMs > 0) {
            await new Promise((r) => setTimeout(r, slowMs));
            aborted.push(ctx.signal?.aborted === true);
            abandonedAfterWait.push(ctx.deadline?.abandoned === true);
          }
          return get(ctx, name, options);
        };
        const create = teams.create.bind(teams);
        teams.create = async (ctx: RequestContext, body, options): Promise<KubeObject> => {
          await new Promise((r) => setTimeout(r, slowMs));
          const obj = await create(ctx, body, options);
          created.push(obj.metadata?.name ?? '');
          return obj;
        };
      },
    });
    s.teams.objects.set('a', {
      apiVersion: `${GROUP}/v1`,
      kind: 'Team',
      metadata: { name: 'a', resourceVersion: '1' },
    });
  });
  after(async () => {
    await s.close();
  });

  it("answers a request still running at the deadline with upstream's 504 Status and aborts its work", async () => {
    slowMs = 1500;
    const started = Date.now();
    const res = await call(s.url, `/apis/${GROUP}/v1/teams/a`);
    const elapsed = Date.now() - started;
    assert.equal(res.status, 504);
    assert.deepEqual(res.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
      reason: 'Timeout',
      details: {},
      code: 504,
    });
    // Answered at the deadline, not when the work would have ended (generous bound).
    assert.ok(elapsed < slowMs, `answered after ${elapsed} ms`);
    // The abandoned work finishes later, with its signal aborted, and its answer goes nowhere.
    await new Promise((r) => setTimeout(r, slowMs));
    assert.equal(aborted.at(-1), true);
  });

  it('counts a request cut off by its deadline in apiserver_request_terminations_total as a 504', async () => {
    const labels = objectGetLabels(GROUP, 'teams', '504');
    const count = async (): Promise<number> =>
      sample((await call(s.url, '/metrics')).text, 'apiserver_request_terminations_total', labels) ?? 0;
    const before = await count();
    slowMs = 600;
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/a`)).status, 504);
    await new Promise((r) => setTimeout(r, slowMs));
    slowMs = 0;
    // A request answered in time is no termination.
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/a`)).status, 200);
    assert.equal(await count(), before + 1);
  });

  it('keeps the connection usable for the next request after a timeout', async () => {
    slowMs = 0;
    const res = await call(s.url, `/apis/${GROUP}/v1/teams/a`);
    assert.equal(res.status, 200);
  });

  it('takes a shorter ?timeout= and refuses an unreadable one', async () => {
    slowMs = 1500;
    const res = await call(s.url, `/apis/${GROUP}/v1/teams/a?timeout=100ms`);
    assert.equal(res.status, 504);
    const bad = await call(s.url, `/apis/${GROUP}/v1/teams/a?timeout=whenever`);
    assert.equal(bad.status, 400);
    assert.match(bad.json<{ message: string }>().message, /^invalid timeout specified in the request URL/);
    await new Promise((r) => setTimeout(r, slowMs));
  });

  it("hands the registry the request's deadline for its storage calls, abandoned once the client has its 504", async () => {
    slowMs = 0;
    const started = Date.now();
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/a?timeout=200ms`)).status, 200);
    const deadline = deadlines.at(-1);
    assert.ok(deadline, 'the get was given a deadline');
    // Armed while the request was served: 200 ms from a moment between the two.
    assert.ok(deadline.deadlineAt >= started + 200 && deadline.deadlineAt <= Date.now() + 200);
    slowMs = 600;
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/a`)).status, 504);
    await new Promise((r) => setTimeout(r, slowMs));
    // Its later storage calls are refused (BoundedKV): the work was abandoned.
    assert.equal(abandonedAfterWait.at(-1), true);
  });

  it('says the write may still land: a timed-out create either commits whole or not at all', async () => {
    slowMs = 600;
    const body = JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'late' } });
    const res = await call(s.url, `/apis/${GROUP}/v1/teams`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 504);
    await new Promise((r) => setTimeout(r, slowMs + 200));
    // The abandoned create ran to its end: the object is there whole (as upstream, whose finisher lets it run).
    assert.deepEqual(created, ['late']);
    assert.equal(s.teams.objects.get('late')?.metadata?.name, 'late');
  });

  it('leaves watches alone: they are long-running', async () => {
    slowMs = 0;
    const watch = await openWatch(s.url, `/apis/${GROUP}/v1/teams?watch=true`);
    assert.equal(watch.status, 200);
    const watcher = s.teams.watchers.at(-1);
    await new Promise((r) => setTimeout(r, 600));
    watcher?.push({
      type: 'ADDED',
      object: { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'w' } },
    });
    assert.match((await watch.nextLine()) ?? '', /"ADDED"/);
    watch.abort();
  });
});
