import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { createApiHandler } from './server.js';
import { call, GROUP, startTestServer, type TestServer } from './testing/fakes.js';

// The handler as options wires it: real discovery and OpenAPI documents.
describe('createApiHandler with the real document builders', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ createHandler: createApiHandler });
  });
  after(async () => {
    await s.close();
  });

  it('serves aggregated discovery that client-go accepts', async () => {
    const res = await call(s.url, '/apis', {
      headers: {
        accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
      },
    });
    assert.equal(res.status, 200);
    assert.equal(
      res.headers['content-type'],
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    const doc = res.json<{
      items: {
        metadata: { name: string };
        versions: { version: string; resources: { resource: string; responseKind: { kind: string } }[] }[];
      }[];
    }>();
    const group = doc.items.find((i) => i.metadata.name === GROUP);
    const resources = group?.versions[0]?.resources ?? [];
    assert.deepEqual(resources.map((r) => [r.resource, r.responseKind.kind]).sort(), [
      ['sharedsecrets', 'SharedSecret'],
      ['teams', 'Team'],
    ]);
    const etag = res.headers.etag ?? '';
    assert.match(etag, /^"[0-9A-F]{128}"$/);
  });

  it('serves the APIResourceList under the prefix', async () => {
    const res = await call(s.url, `/kubernetes/management/apis/${GROUP}/v1`);
    assert.equal(res.status, 200);
    const list = res.json<{
      kind: string;
      groupVersion: string;
      resources: { name: string; namespaced: boolean }[];
    }>();
    assert.equal(list.kind, 'APIResourceList');
    assert.equal(list.groupVersion, `${GROUP}/v1`);
    assert.deepEqual(list.resources.map((r) => [r.name, r.namespaced]).sort(), [
      ['sharedsecrets', true],
      ['teams', false],
    ]);
  });

  it('links the OpenAPI v3 root to a hash-pinned group document', async () => {
    const root = await call(s.url, '/openapi/v3');
    assert.equal(root.status, 200);
    const url = root.json<{ paths: Record<string, { serverRelativeURL: string }> }>().paths[
      `apis/${GROUP}/v1`
    ]?.serverRelativeURL;
    assert.ok(url);
    const doc = await call(s.url, url);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers['cache-control'], 'public, immutable');
    assert.ok(doc.json<{ paths: Record<string, unknown> }>().paths[`/apis/${GROUP}/v1/teams`]);
    const v2 = await call(s.url, '/openapi/v2');
    assert.equal(v2.status, 200);
  });
});
