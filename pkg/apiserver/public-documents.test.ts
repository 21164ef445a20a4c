// The token issuer's documents through the HTTP layer: served to anyone (no
// credentials) under the root and under the management prefix, GET only.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { newApiHandler } from './api-handler.js';
import type { PublicDocumentSource } from './config.js';
import { call, fakeDocumentBuilders, startTestServer, type TestServer } from './testing/fakes.js';

/** Every path a source was asked about. */
const asked: string[] = [];

const source: PublicDocumentSource = {
  document: (path, base) => {
    asked.push(path);
    return Promise.resolve(
      path === '/.well-known/openid-configuration' || path.startsWith('/apis/') || path === '/api'
        ? {
            contentType: 'application/json',
            body: { jwks_uri: `${base}/openid/v1/jwks` },
            maxAgeSeconds: 300,
          }
        : undefined,
    );
  },
};

describe('public documents', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({
      createHandler: (config) =>
        newApiHandler({ ...config, publicDocuments: [source] }, fakeDocumentBuilders),
    });
  });
  after(() => server.close());

  it('are served without credentials under the root and the prefix, with the prefix in base', async () => {
    const host = new URL(server.url).host;
    for (const [path, base] of [
      ['/.well-known/openid-configuration', `https://${host}`],
      ['/kubernetes/management/.well-known/openid-configuration', `https://${host}/kubernetes/management`],
    ] as const) {
      const res = await call(server.url, path, { token: null });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers['cache-control'], 'public, max-age=300');
      assert.deepEqual(res.json(), { jwks_uri: `${base}/openid/v1/jwks` });
    }
  });

  it('check Impersonate-* headers as every other path does', async () => {
    server.authorizer.decide = (attrs) =>
      attrs.verb === 'impersonate' ? { decision: 'deny', reason: '' } : { decision: 'allow' };
    try {
      const res = await call(server.url, '/.well-known/openid-configuration', {
        token: null,
        headers: { 'Impersonate-User': 'x' },
      });
      assert.equal(res.status, 403);
      assert.equal(
        res.json<{ message: string }>().message,
        'users "x" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
    } finally {
      server.authorizer.decide = () => ({ decision: 'allow' });
    }
  });

  it('refuse writes, and leave every other path to authentication', async () => {
    const post = await call(server.url, '/.well-known/openid-configuration', { method: 'POST', token: null });
    assert.equal(post.status, 405);
    const other = await call(server.url, '/.well-known/other', { token: null });
    assert.equal(other.status, 401);
  });

  it('never stand in for the API: its paths are not looked up and still need credentials', async () => {
    asked.length = 0;
    for (const path of ['/apis/management.platform.dev/v1/teams', '/kubernetes/management/api']) {
      const res = await call(server.url, path, { token: null });
      assert.equal(res.status, 401, path);
    }
    assert.deepEqual(asked, []);
    // A path that only starts like one is not the API's.
    await call(server.url, '/apisx', { token: null });
    assert.deepEqual(asked, ['/apisx']);
  });
});
