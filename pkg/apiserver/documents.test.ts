import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { AGGREGATED_DISCOVERY_CONTENT_TYPE } from './documents.js';
import { call, GROUP, startTestServer, type TestServer } from './testing/fakes.js';

const V2_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

describe('discovery and OpenAPI endpoints', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('serves APIGroupList by default and the aggregated v2 document when asked', async () => {
    const plain = await call(s.url, '/apis');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'application/json');
    assert.equal(plain.json<{ kind: string }>().kind, 'APIGroupList');

    for (const base of ['', '/kubernetes/management']) {
      const v2 = await call(s.url, `${base}/apis`, { headers: { accept: V2_ACCEPT } });
      assert.equal(v2.status, 200);
      assert.equal(v2.headers['content-type'], AGGREGATED_DISCOVERY_CONTENT_TYPE);
      assert.equal(v2.json<{ kind: string }>().kind, 'APIGroupDiscoveryList');
      assert.equal(v2.headers.vary, 'Accept');
      assert.ok(v2.headers.etag);
    }
  });

  it('answers 304 to a v2 request that already has the current ETag', async () => {
    const first = await call(s.url, '/apis', { headers: { accept: V2_ACCEPT } });
    const etag = first.headers.etag ?? '';
    const again = await call(s.url, '/apis', { headers: { accept: V2_ACCEPT, 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const stale = await call(s.url, '/apis', { headers: { accept: V2_ACCEPT, 'if-none-match': '"old"' } });
    assert.equal(stale.status, 200);
  });

  it('serves /api, /apis/<group> and /apis/<group>/<version>, with or without a trailing slash', async () => {
    assert.equal((await call(s.url, '/api')).json<{ kind: string }>().kind, 'APIVersions');
    assert.equal((await call(s.url, `/apis/${GROUP}/`)).json<{ kind: string }>().kind, 'APIGroup');
    const list = await call(s.url, `/kubernetes/management/apis/${GROUP}/v1`);
    assert.equal(list.status, 200);
    const body = list.json<{ kind: string; resources: { name: string }[] }>();
    assert.equal(body.kind, 'APIResourceList');
    assert.deepEqual(
      body.resources.map((r) => r.name),
      ['teams', 'sharedsecrets'],
    );
    assert.equal((await call(s.url, '/apis/other.io')).status, 404);
    assert.equal((await call(s.url, `/apis/${GROUP}/v2`)).status, 404);
  });

  it('requires a user for discovery and 405s writes to it', async () => {
    assert.equal((await call(s.url, '/apis', { token: null })).status, 401);
    assert.equal((await call(s.url, `/apis/${GROUP}/v1`, { token: null })).status, 401);
    const post = await call(s.url, '/apis', { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
  });

  it('serves discovery as YAML when asked', async () => {
    const res = await call(s.url, `/apis/${GROUP}/v1`, { headers: { accept: 'application/yaml' } });
    assert.equal(res.headers['content-type'], 'application/yaml');
    assert.match(res.text, /^kind: APIResourceList/m);
  });

  it('serves OpenAPI v2 and v3 with ETags and 304s', async () => {
    const v2 = await call(s.url, '/openapi/v2');
    assert.equal(v2.status, 200);
    assert.equal(v2.json<{ swagger: string }>().swagger, '2.0');
    const etag = v2.headers.etag ?? '';
    assert.ok(etag);
    assert.equal((await call(s.url, '/openapi/v2', { headers: { 'if-none-match': etag } })).status, 304);

    const root = await call(s.url, '/openapi/v3');
    const url = root.json<{ paths: Record<string, { serverRelativeURL: string }> }>().paths[
      `apis/${GROUP}/v1`
    ]?.serverRelativeURL;
    assert.ok(url);
    const doc = await call(s.url, url);
    assert.equal(doc.status, 200);
    assert.equal(doc.json<{ openapi: string }>().openapi, '3.0.0');
    assert.equal(doc.headers['cache-control'], 'public, immutable');
    assert.ok(doc.headers.expires);
    assert.equal(doc.headers.etag, `"${new URL(url, s.url).searchParams.get('hash')}"`);
    assert.equal(
      (await call(s.url, url, { headers: { 'if-none-match': doc.headers.etag ?? '' } })).status,
      304,
    );
  });

  it('redirects a stale hash to the current document, keeping the prefix', async () => {
    const res = await call(s.url, `/kubernetes/management/openapi/v3/apis/${GROUP}/v1?hash=STALE`);
    assert.equal(res.status, 301);
    const location = res.headers.location ?? '';
    assert.match(
      location,
      new RegExp(`^/kubernetes/management/openapi/v3/apis/${GROUP.replace(/\./g, '\\.')}/v1\\?hash=`),
    );
    const followed = await call(s.url, location);
    assert.equal(followed.status, 200);
    // Without a hash: served, but not marked immutable.
    const plain = await call(s.url, `/openapi/v3/apis/${GROUP}/v1`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['cache-control'], 'no-cache, private');
    assert.equal(
      (await call(s.url, `/openapi/v3/apis/${GROUP}/v1`, { headers: { accept: 'application/xml' } })).status,
      406,
    );
    assert.equal((await call(s.url, '/openapi/v3/apis/other.io/v1')).status, 404);
  });
});
