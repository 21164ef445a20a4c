import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { sample } from '../../metrics/testing.js';
import { eventually } from '../../util/eventually.js';
import { newRequestInfo } from '../request-info.js';
import { call, GROUP, openWatch, startTestServer, type TestServer } from '../testing/fakes.js';
import { cleanDryRun, cleanScope, reportedVerb } from './metrics.js';

const NO_QUERY = (): URLSearchParams => new URLSearchParams();

function verbOf(method: string, path: string, query = '', contentType?: string): string {
  const info = newRequestInfo(method, path, () => new URLSearchParams(query));
  return reportedVerb(method, info, contentType);
}

describe('request labels, as k8s.io/apiserver endpoints/metrics cleans them', () => {
  const teams = `/apis/${GROUP}/v1/teams`;
  const secrets = `/apis/${GROUP}/v1/namespaces/ns/sharedsecrets`;

  it('reports GET of a collection as LIST and of one object as GET', () => {
    assert.equal(verbOf('GET', teams), 'LIST');
    assert.equal(verbOf('GET', `${teams}/a`), 'GET');
    assert.equal(verbOf('HEAD', `${teams}/a`), 'GET');
    assert.equal(verbOf('GET', secrets), 'LIST');
  });

  it('reports every watch as WATCH, by query or by the deprecated path', () => {
    assert.equal(verbOf('GET', teams, 'watch=true'), 'WATCH');
    assert.equal(verbOf('GET', teams, 'watch=1'), 'WATCH');
    assert.equal(verbOf('GET', teams, 'watch=false'), 'LIST');
    assert.equal(verbOf('GET', `/apis/${GROUP}/v1/watch/teams`), 'WATCH');
  });

  it('reports the HTTP method for writes, APPLY for server-side apply, other for unknown methods', () => {
    assert.equal(verbOf('POST', teams), 'POST');
    assert.equal(verbOf('PUT', `${teams}/a`), 'PUT');
    assert.equal(verbOf('PATCH', `${teams}/a`, '', 'application/merge-patch+json'), 'PATCH');
    assert.equal(verbOf('PATCH', `${teams}/a`, '', 'application/apply-patch+yaml'), 'APPLY');
    // A deletecollection is a DELETE upstream too: the label is the method, not the verb.
    assert.equal(verbOf('DELETE', teams), 'DELETE');
    assert.equal(verbOf('BREW', `${teams}/a`), 'other');
  });

  it('scopes one object (and a create) as resource, else namespace or cluster, and nothing off the API', () => {
    const scope = (method: string, path: string): string =>
      cleanScope(newRequestInfo(method, path, NO_QUERY));
    assert.equal(scope('GET', `${teams}/a`), 'resource');
    assert.equal(scope('POST', teams), 'resource');
    assert.equal(scope('GET', secrets), 'namespace');
    assert.equal(scope('GET', teams), 'cluster');
    assert.equal(scope('GET', '/version'), '');
  });

  it('keeps dry_run to a few values', () => {
    assert.equal(cleanDryRun(''), '');
    assert.equal(cleanDryRun('fieldManager=x'), '');
    assert.equal(cleanDryRun('dryRun=All'), 'All');
    assert.equal(cleanDryRun('dryRun=All&dryRun=All'), 'All');
    assert.equal(cleanDryRun('dryRun=Everything'), 'invalid');
  });
});

describe('GET /metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  async function scrape(): Promise<string> {
    const res = await call(s.url, '/metrics');
    assert.equal(res.status, 200, res.text);
    return res.text;
  }

  it('serves the Prometheus text format with the process metrics', async () => {
    const res = await call(s.url, '/metrics');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.ok(sample(res.text, 'process_cpu_user_seconds_total') !== undefined, 'process metrics');
    assert.ok(sample(res.text, 'nodejs_heap_size_used_bytes') !== undefined, 'Node metrics');
  });

  it('is authorized as get on the non-resource URL /metrics', async () => {
    let asked: { verb: string; path: string; isResourceRequest: boolean } | undefined;
    s.authorizer.decide = (attrs) => {
      if (attrs.user.name === 'bob') {
        asked = { verb: attrs.verb, path: attrs.path, isResourceRequest: attrs.isResourceRequest };
        return { decision: 'no-opinion' };
      }
      return { decision: 'allow' };
    };
    try {
      const res = await call(s.url, '/metrics', { token: 'bob-token' });
      assert.equal(res.status, 403);
      assert.deepEqual(asked, { verb: 'get', path: '/metrics', isResourceRequest: false });
      assert.equal((await call(s.url, '/metrics', { token: null })).status, 401);
    } finally {
      s.authorizer.decide = () => ({ decision: 'allow' });
    }
  });

  it('counts requests with upstream labels, code, duration and response size', async () => {
    const list = {
      verb: 'LIST',
      dry_run: '',
      group: GROUP,
      version: 'v1',
      resource: 'teams',
      subresource: '',
      scope: 'cluster',
      component: 'apiserver',
    };
    const before = await scrape();
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams`)).status, 200);
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams`)).status, 200);
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/missing`)).status, 404);
    const afterText = await scrape();
    const delta = (name: string, labels: Record<string, string>): number =>
      (sample(afterText, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    assert.equal(delta('apiserver_request_total', { ...list, code: '200' }), 2);
    assert.equal(delta('apiserver_request_duration_seconds_count', list), 2);
    const { dry_run: _d, ...sized } = list;
    assert.equal(delta('apiserver_response_sizes_count', sized), 2);
    assert.ok(delta('apiserver_response_sizes_sum', sized) > 0);
    assert.equal(
      delta('apiserver_request_total', { verb: 'GET', resource: 'teams', scope: 'resource', code: '404' }),
      1,
    );
    // Buckets are upstream's: the first is 5 ms, the last 60 s.
    assert.match(afterText, /apiserver_request_duration_seconds_bucket\{[^}]*le="0\.005"/);
    assert.match(afterText, /apiserver_request_duration_seconds_bucket\{[^}]*le="60"/);
  });

  it('records a write with its dry_run value and a create as scope resource', async () => {
    const body = JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'dry' } });
    const labels = { verb: 'POST', dry_run: 'All', resource: 'teams', scope: 'resource', code: '201' };
    const before = sample(await scrape(), 'apiserver_request_total', labels) ?? 0;
    const res = await call(s.url, `/apis/${GROUP}/v1/teams?dryRun=All`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(sample(await scrape(), 'apiserver_request_total', labels), before + 1);
  });

  it('does not make series of paths it does not serve', async () => {
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/made-up-thing`)).status, 404);
    assert.equal((await call(s.url, '/no/such/page')).status, 404);
    // Any caller may name a subresource under an object: only served ones are label values.
    assert.equal((await call(s.url, `/apis/${GROUP}/v1/teams/a/made-up-sub`)).status, 404);
    const text = await scrape();
    assert.equal(sample(text, 'apiserver_request_total', { resource: 'made-up-thing' }), undefined);
    assert.equal(sample(text, 'apiserver_request_total', { subresource: '/no/such/page' }), undefined);
    assert.equal(sample(text, 'apiserver_request_total', { subresource: 'made-up-sub' }), undefined);
  });

  it('tracks a watch as long-running while it is open and counts the events it sends', async () => {
    const labels = { verb: 'WATCH', group: GROUP, version: 'v1', resource: 'teams', scope: 'cluster' };
    const eventsBefore = sample(await scrape(), 'apiserver_watch_events_total', { resource: 'teams' }) ?? 0;
    const watcherStarted = s.teams.nextWatcher();
    const watch = await openWatch(s.url, `/apis/${GROUP}/v1/teams?watch=true`);
    assert.equal(watch.status, 200);
    const watcher = await watcherStarted;
    assert.equal(sample(await scrape(), 'apiserver_longrunning_requests', labels), 1);
    watcher.push({
      type: 'ADDED',
      object: { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'w' } },
    });
    assert.match((await watch.nextLine()) ?? '', /"ADDED"/);
    assert.equal(
      sample(await scrape(), 'apiserver_watch_events_total', { resource: 'teams' }),
      eventsBefore + 1,
    );
    const doneBefore = sample(await scrape(), 'apiserver_request_total', { ...labels, code: '200' }) ?? 0;
    watcher.finish();
    await watch.ended;
    // The stream's close reaches the server a moment after the client sees the end.
    await eventually(async () => {
      const text = await scrape();
      assert.equal(sample(text, 'apiserver_longrunning_requests', labels), 0);
      assert.equal(sample(text, 'apiserver_request_total', { ...labels, code: '200' }), doneBefore + 1);
    }, 5000);
  });

  it('reports the highest in-flight count by request kind', async () => {
    const text = await scrape();
    // The scrape itself is a read in flight.
    assert.ok((sample(text, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }) ?? 0) >= 1);
    assert.ok(
      sample(text, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) !== undefined,
    );
  });
});
