import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { call, startTestServer, type TestServer } from './testing/fakes.js';

describe('health and version endpoints', () => {
  let s: TestServer;
  let storageHealthy = true;
  before(async () => {
    s = await startTestServer({
      readyChecks: [
        {
          name: 'storage',
          check: async () => {
            if (!storageHealthy) throw new Error('etcd unreachable at 10.0.0.1');
          },
        },
      ],
      liveChecks: [{ name: 'loop', check: () => undefined }],
    });
  });
  after(async () => {
    await s.close();
  });

  it('answers ok without credentials, under the root and the prefix', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/kubernetes/management/readyz']) {
      const res = await call(s.url, path, { token: null });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.text, 'ok');
    }
    assert.equal(s.authorizer.asked.length, 0);
  });

  it('lists every check with ?verbose', async () => {
    const ready = await call(s.url, '/readyz?verbose', { token: null });
    assert.equal(ready.text, '[+]ping ok\n[+]loop ok\n[+]storage ok\n[+]shutdown ok\nreadyz check passed\n');
    const live = await call(s.url, '/livez?verbose', { token: null });
    assert.equal(live.text, '[+]ping ok\n[+]loop ok\nlivez check passed\n');
  });

  it('fails with 500 and withholds the reason, except on the check’s own path', async () => {
    storageHealthy = false;
    try {
      const ready = await call(s.url, '/readyz', { token: null });
      assert.equal(ready.status, 500);
      assert.equal(
        ready.text,
        '[+]ping ok\n[+]loop ok\n[-]storage failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n',
      );
      assert.doesNotMatch(ready.text, /10\.0\.0\.1/);
      assert.equal((await call(s.url, '/livez', { token: null })).status, 200);

      const one = await call(s.url, '/readyz/storage', { token: null });
      assert.equal(one.status, 500);
      assert.equal(one.text, 'internal server error: etcd unreachable at 10.0.0.1\n');

      const excluded = await call(s.url, '/readyz?exclude=storage&exclude=nosuch&verbose', { token: null });
      assert.equal(excluded.status, 200);
      assert.equal(
        excluded.text,
        '[+]ping ok\n[+]loop ok\n[+]storage excluded: ok\n[+]shutdown ok\n' +
          'warn: some health checks cannot be excluded: no matches for "nosuch"\nreadyz check passed\n',
      );
    } finally {
      storageHealthy = true;
    }
  });

  it('serves single checks and 404s unknown ones', async () => {
    const ping = await call(s.url, '/readyz/ping', { token: null });
    assert.equal(ping.status, 200);
    assert.equal(ping.text, 'ok');
    const missing = await call(s.url, '/readyz/nosuch', { token: null });
    assert.equal(missing.status, 404);
    assert.equal((await call(s.url, '/livez/shutdown', { token: null })).status, 404);
  });

  it('serves /version without credentials, indented', async () => {
    const res = await call(s.url, '/version', { token: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.match(res.text, /^\{\n {2}"major": "1",/);
    assert.equal(res.json<{ gitVersion: string }>().gitVersion, 'v1.0.0');
    assert.equal((await call(s.url, '/version', { method: 'POST', token: null })).status, 405);
  });
});
