// Impersonate-* headers on the paths served without credentials (probes, /version):
// kube-apiserver runs WithImpersonation on every request, so a caller (anonymous when
// it presents nothing) who may not impersonate is refused with upstream's 403 there
// too, and a request without such a header is served exactly as before.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';

import { call, startTestServer, type StatusBody, type TestServer } from './testing/fakes.js';

describe('impersonation on paths served without credentials', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });
  beforeEach(() => {
    s.authorizer.asked.length = 0;
    // Only alice (the fake's admin-token) may impersonate.
    s.authorizer.decide = (attrs) =>
      attrs.verb === 'impersonate' && attrs.user.name !== 'alice'
        ? { decision: 'deny', reason: '' }
        : { decision: 'allow' };
  });

  it('asks nothing and serves as before without an Impersonate header', async () => {
    for (const path of ['/healthz', '/readyz', '/livez/ping', '/version', '/kubernetes/management/healthz']) {
      const res = await call(s.url, path, { token: null });
      assert.equal(res.status, 200, path);
    }
    assert.equal((await call(s.url, '/healthz', { token: 'no-such-token' })).status, 200);
    assert.deepEqual(s.authorizer.asked, []);
  });

  it("refuses an anonymous caller with kube-apiserver's 403 for system:anonymous", async () => {
    for (const path of ['/healthz', '/readyz', '/livez/ping', '/version', '/kubernetes/management/livez']) {
      const res = await call(s.url, path, { token: null, headers: { 'Impersonate-User': 'x' } });
      assert.equal(res.status, 403, path);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const status = res.json<StatusBody>();
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'Forbidden');
      assert.equal(
        status.message,
        'users "x" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
      assert.deepEqual(status.details, { name: 'x', kind: 'users' });
    }
    const asked = s.authorizer.asked[0];
    assert.equal(asked?.user.name, 'system:anonymous');
    assert.deepEqual(asked?.user.groups, ['system:unauthenticated']);
  });

  it('refuses a caller with credentials who may not impersonate, in its own name', async () => {
    const res = await call(s.url, '/healthz', { token: 'bob-token', headers: { 'Impersonate-User': 'x' } });
    assert.equal(res.status, 403);
    assert.equal(
      res.json<StatusBody>().message,
      'users "x" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const group = await call(s.url, '/version', {
      token: 'bob-token',
      headers: { 'Impersonate-User': 'x', 'Impersonate-Group': 'g' },
    });
    assert.equal(group.status, 403);
  });

  it('answers a group without a user with the 400 it gets everywhere', async () => {
    const res = await call(s.url, '/healthz', { token: null, headers: { 'Impersonate-Group': 'g' } });
    assert.equal(res.status, 400);
    assert.equal(res.json<StatusBody>().message, 'requested [{Group  g    }] without impersonating a user');
  });

  it('serves a caller who may impersonate as the impersonated user', async () => {
    const res = await call(s.url, '/healthz', { token: 'admin-token', headers: { 'Impersonate-User': 'x' } });
    assert.equal(res.status, 200);
    assert.equal(res.text, 'ok');
    const version = await call(s.url, '/version', {
      token: 'admin-token',
      headers: { 'Impersonate-User': 'x' },
    });
    assert.equal(version.status, 200);
    assert.equal(version.json<{ gitVersion: string }>().gitVersion, 'v1.0.0');
    const logged = s.logger.lines.filter((l) => l.msg === 'request' && l.fields['path'] === '/healthz');
    assert.ok(
      logged.some((l) => l.fields['user'] === 'x' && l.fields['impersonatedBy'] === 'alice'),
      JSON.stringify(logged),
    );
  });
});
