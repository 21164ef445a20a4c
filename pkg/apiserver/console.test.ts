// The console's static files through the HTTP layer: served without credentials under
// the root and the management prefix, with the security headers on every answer, and
// nothing outside the console's directory, however the path is spelled.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { newApiHandler } from './api-handler.js';
import { CONSOLE_SECURITY_HEADERS } from './console.js';
import { call, fakeDocumentBuilders, GROUP, startTestServer, type TestServer } from './testing/fakes.js';

interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A GET with the path sent exactly as written (URL would normalise `..` away). */
function rawGet(base: string, path: string): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function assertSecurityHeaders(headers: IncomingHttpHeaders): void {
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) {
    assert.equal(headers[name.toLowerCase()], value, name);
  }
  const csp = String(headers['content-security-policy'] ?? '');
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
}

describe('console static files', () => {
  let server: TestServer;
  let root: string;
  let outside: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'console-test-'));
    const dir = join(root, 'console');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    mkdirSync(join(dir, 'nested'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Console</title>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'index-abc123.css'), 'body{}');
    // A file beside the console's directory that no path may reach.
    outside = 'not for the browser';
    writeFileSync(join(root, 'secret.txt'), outside);
    server = await startTestServer({
      createHandler: (config) => newApiHandler({ ...config, consoleDir: dir }, fakeDocumentBuilders),
    });
  });
  after(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves index.html for /console/ without credentials, under the root and the prefix', async () => {
    for (const path of ['/console/', '/kubernetes/management/console/']) {
      const res = await call(server.url, path, { token: null });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.text, '<!doctype html><title>Console</title>');
      assertSecurityHeaders(res.headers);
    }
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await call(server.url, '/console/', { method: 'HEAD', token: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.text, '');
    assertSecurityHeaders(res.headers);
  });

  it('redirects /console to /console/, keeping the prefix', async () => {
    for (const [path, location] of [
      ['/console', '/console/'],
      ['/kubernetes/management/console', '/kubernetes/management/console/'],
      ['/console?lang=en', '/console/?lang=en'],
    ] as const) {
      const res = await call(server.url, path, { token: null });
      assert.equal(res.status, 301);
      assert.equal(res.headers.location, location);
    }
  });

  it('serves hashed assets with their content types, cached for good', async () => {
    const js = await call(server.url, '/console/assets/index-abc123.js', { token: null });
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assertSecurityHeaders(js.headers);
    const css = await call(server.url, '/kubernetes/management/console/assets/index-abc123.css', {
      token: null,
    });
    assert.equal(css.status, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  });

  it('serves the API group the console talks to', async () => {
    const res = await call(server.url, '/console/config.json', { token: null });
    assert.equal(res.status, 200);
    // The test server's --api-group: the console reaches the API under it.
    assert.deepEqual(res.json(), { group: GROUP, version: 'v1' });
    assert.equal(res.headers['cache-control'], 'no-cache');
  });

  it('answers 404 for unknown console paths and directories, with the headers', async () => {
    for (const path of ['/console/nope.js', '/console/assets/', '/console/nested', '/console/assets']) {
      const res = await call(server.url, path, { token: null });
      assert.equal(res.status, 404, path);
      assertSecurityHeaders(res.headers);
    }
  });

  it('refuses every spelling of a path out of the console directory', async () => {
    for (const path of [
      '/console/../secret.txt',
      '/console/assets/../../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/%2E%2E%2Fsecret.txt',
      '/console/..%2fsecret.txt',
      '/console/..%5csecret.txt',
      '/console/%2fetc%2fpasswd',
      '/console//etc/passwd',
      '/console/index.html%00.js',
      '/console/%ff',
      '/kubernetes/management/console/../../secret.txt',
    ]) {
      const res = await rawGet(server.url, path);
      assert.notEqual(res.status, 200, path);
      assert.ok(!res.text.includes(outside), `${path} leaked a file outside the console`);
    }
  });

  it('answers 405 to writes, and leaves other paths to authentication', async () => {
    const post = await call(server.url, '/console/', { method: 'POST', token: null, body: '' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    const other = await call(server.url, '/consoles/', { token: null });
    assert.equal(other.status, 401);
  });
});
