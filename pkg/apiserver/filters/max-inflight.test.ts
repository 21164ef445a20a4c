import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { exposition } from '../../metrics/registry.js';
import { objectGetLabels, sample } from '../../metrics/testing.js';
import type { RequestContext } from '../../registry/rest/interfaces.js';
import { eventually } from '../../util/eventually.js';
import { call, GROUP, openWatch, startTestServer, type TestServer } from '../testing/fakes.js';

const TEAMS = `/apis/${GROUP}/v1/teams`;

/** A gate the slow gets wait on: `open()` lets every waiting one through. */
class Gate {
  private waiting: (() => void)[] = [];
  entered = 0;

  wait(): Promise<void> {
    this.entered++;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  open(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}

/** A sample of the read limit's flow (`global-default` in `readOnly`), 0 when none. */
async function readOnlySample(name: string, labels: Record<string, string>): Promise<number> {
  const { body } = await exposition();
  return sample(body, name, { priority_level: 'readOnly', flow_schema: 'global-default', ...labels }) ?? 0;
}

const rejected = (reason: string): Promise<number> =>
  readOnlySample('apiserver_flowcontrol_rejected_requests_total', { reason });

/** Reads that got a seat (`'true'`) or gave up waiting, as the wait-duration histogram counts them. */
const waits = (execute: 'true' | 'false'): Promise<number> =>
  readOnlySample('apiserver_flowcontrol_request_wait_duration_seconds_count', { execute });

function team(name: string): KubeObject {
  return { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name, resourceVersion: '1' } };
}

describe('--max-requests-inflight and fair queuing', () => {
  let s: TestServer;
  const gate = new Gate();
  before(async () => {
    s = await startTestServer({
      maxRequestsInflight: 1,
      maxMutatingRequestsInflight: 1,
      // Requests wait a quarter of this for a seat: 500 ms.
      requestTimeoutMs: 2000,
      prepare: (teams) => {
        const get = teams.get.bind(teams);
        teams.get = async (ctx: RequestContext, name, options): Promise<KubeObject> => {
          if (name === 'slow') await gate.wait();
          return get(ctx, name, options);
        };
      },
    });
    s.teams.objects.set('slow', team('slow'));
    s.teams.objects.set('fast', team('fast'));
  });
  after(async () => {
    gate.open();
    await s.close();
  });

  /** /metrics, read as system:masters: exempt from the limit it reads about. */
  async function scrape(): Promise<string> {
    const res = await call(s.url, '/metrics', { token: 'root-token' });
    assert.equal(res.status, 200);
    return res.text;
  }

  /**
   * Alice's get that holds the one read seat until the gate opens; returns its
   * answer wrapped (an async function returning the bare promise would wait for it).
   */
  async function holdTheReadSeat(): Promise<{ done: Promise<unknown> }> {
    const entered = gate.entered;
    const done = call(s.url, `${TEAMS}/slow`);
    await eventually(async () => assert.equal(gate.entered, entered + 1));
    return { done };
  }

  it("answers a read that found no seat in time 429 with Retry-After and upstream's text in a Status", async () => {
    const before = await rejected('time-out');
    const gaveUp = await waits('false');
    const holding = await holdTheReadSeat();
    const res = await call(s.url, `${TEAMS}/fast`, { token: 'bob-token' });
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.deepEqual(res.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Too many requests, please try again later.',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
      code: 429,
    });
    assert.equal(await rejected('time-out'), before + 1);
    assert.equal(await waits('false'), gaveUp + 1);
    gate.open();
    await holding.done;
  });

  it('counts a refused request in apiserver_request_total as a 429, labelled as upstream, on /metrics', async () => {
    const labels = { ...objectGetLabels(GROUP, 'teams', '429'), dry_run: '' };
    const before = await scrape();
    const holding = await holdTheReadSeat();
    assert.equal((await call(s.url, `${TEAMS}/fast`, { token: 'bob-token' })).status, 429);
    assert.equal((await call(s.url, `${TEAMS}?dryRun=All`, { token: 'bob-token' })).status, 429);
    // A subresource the server does not serve is no label value, refused or not.
    assert.equal((await call(s.url, `${TEAMS}/fast/made-up-sub`, { token: 'bob-token' })).status, 429);
    gate.open();
    await holding.done;
    const after = await scrape();
    const count = (text: string, extra: Record<string, string> = {}): number =>
      sample(text, 'apiserver_request_total', { ...labels, ...extra }) ?? 0;
    assert.equal(count(after), count(before) + 1);
    assert.equal(
      count(after, { verb: 'LIST', scope: 'cluster', dry_run: 'All' }),
      count(before, { verb: 'LIST', scope: 'cluster', dry_run: 'All' }) + 1,
    );
    assert.equal(sample(after, 'apiserver_request_total', { subresource: 'made-up-sub' }), undefined);
    const dropped = (text: string): number =>
      sample(text, 'apiserver_dropped_requests_total', { request_kind: 'readOnly' }) ?? 0;
    assert.equal(dropped(after), dropped(before) + 3);
  });

  it('counts a refused request in apiserver_request_terminations_total as a 429, for served paths only', async () => {
    const labels = objectGetLabels(GROUP, 'teams', '429');
    const count = (text: string, extra: Record<string, string> = {}): number =>
      sample(text, 'apiserver_request_terminations_total', { ...labels, ...extra }) ?? 0;
    const before = await scrape();
    // Each refusal waits 500 ms for a seat: two holds, each well inside the held get's 2 s deadline.
    let holding = await holdTheReadSeat();
    assert.equal((await call(s.url, `${TEAMS}/fast`, { token: 'bob-token' })).status, 429);
    assert.equal((await call(s.url, `${TEAMS}?dryRun=All`, { token: 'bob-token' })).status, 429);
    gate.open();
    await holding.done;
    holding = await holdTheReadSeat();
    // Off the API: the path is the subresource, as upstream, when it is a document served here.
    assert.equal((await call(s.url, '/openapi/v2', { token: 'bob-token' })).status, 429);
    // An unserved subresource does not become a label value.
    assert.equal((await call(s.url, `${TEAMS}/fast/made-up-sub`, { token: 'bob-token' })).status, 429);
    gate.open();
    await holding.done;
    const after = await scrape();
    assert.equal(count(after), count(before) + 1);
    // No dry_run label on this counter, as upstream's.
    assert.equal(count(after, { verb: 'LIST', scope: 'cluster' }), count(before, { verb: 'LIST', scope: 'cluster' }) + 1);
    const offApi = { group: '', version: '', resource: '', subresource: '/openapi/v2', scope: '' };
    assert.equal(count(after, offApi), count(before, offApi) + 1);
    assert.equal(sample(after, 'apiserver_request_terminations_total', { subresource: 'made-up-sub' }), undefined);
    assert.match(after, /# HELP apiserver_request_terminations_total Number of requests which apiserver terminated in self-defense\./);
  });

  it('serves a waiting read once the seat is free', async () => {
    const executed = await waits('true');
    const holding = await holdTheReadSeat();
    const waiting = call(s.url, `${TEAMS}/fast`, { token: 'bob-token' });
    await eventually(async () => {
      const { body } = await exposition();
      assert.equal(sample(body, 'apiserver_flowcontrol_current_inqueue_requests', { priority_level: 'readOnly' }), 1);
    });
    gate.open();
    assert.equal((await waiting).status, 200);
    await holding.done;
    // Both reads' waits are recorded, the one that got a seat at once and the one that queued.
    assert.equal(await waits('true'), executed + 2);
  });

  it('exempts system:masters, watches and writes from the read limit', async () => {
    const holding = await holdTheReadSeat();
    assert.equal((await call(s.url, `${TEAMS}/fast`, { token: 'root-token' })).status, 200);
    const watch = await openWatch(s.url, `${TEAMS}?watch=true`, { token: 'bob-token' });
    assert.equal(watch.status, 200);
    watch.abort();
    const created = await call(s.url, TEAMS, {
      method: 'POST',
      token: 'bob-token',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'written' } }),
    });
    assert.equal(created.status, 201);
    gate.open();
    await holding.done;
  });

  it('drops a waiting request whose client went away (cancelled), and the seat is not lost', async () => {
    const before = await rejected('cancelled');
    const holding = await holdTheReadSeat();
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${s.url}${TEAMS}/fast`, { headers: { authorization: 'Bearer bob-token' }, agent: false });
      req.on('error', () => resolve());
      req.end();
      // Gone while queued.
      setTimeout(() => req.destroy(), 100);
    });
    await eventually(async () => assert.equal(await rejected('cancelled'), before + 1));
    gate.open();
    await holding.done;
    assert.equal((await call(s.url, `${TEAMS}/fast`, { token: 'bob-token' })).status, 200);
  });
});

describe('--max-requests-inflight=0', () => {
  it('turns the limit off: every read runs at once', async () => {
    const gate = new Gate();
    const s = await startTestServer({
      maxRequestsInflight: 0,
      maxMutatingRequestsInflight: 0,
      prepare: (teams) => {
        const get = teams.get.bind(teams);
        teams.get = async (ctx: RequestContext, name, options): Promise<KubeObject> => {
          await gate.wait();
          return get(ctx, name, options);
        };
      },
    });
    try {
      s.teams.objects.set('a', team('a'));
      const reads = Array.from({ length: 5 }, () => call(s.url, `${TEAMS}/a`, { token: 'bob-token' }));
      await eventually(async () => assert.equal(gate.entered, 5));
      gate.open();
      for (const res of await Promise.all(reads)) assert.equal(res.status, 200);
    } finally {
      await s.close();
    }
  });
});
