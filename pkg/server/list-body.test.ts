// A list served from the watch cache is written in chunks from each object's memoized
// JSON: what a client receives must be exactly the compact JSON of the list (the bytes
// JSON.stringify gives, apiVersion and kind first in every item), newline-terminated,
// with a Content-Length that counts UTF-8 bytes, the first time and from the memos.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { sample } from '../metrics/testing.js';
import { callServer, startWithAdmin } from './testing.js';

const GROUP = 'management.platform.dev';
const V1 = `/kubernetes/management/apis/${GROUP}/v1`;

interface Raw {
  readonly status: number;
  readonly contentLength: number;
  readonly body: Buffer;
}

/** The response as bytes (a multi-byte character may span two chunks). */
function getRaw(url: string, ca: string, token: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentLength: Number(res.headers['content-length']),
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface UserList {
  readonly kind: string;
  readonly metadata: { readonly continue?: string };
  readonly items: { readonly metadata: { readonly name: string } }[];
}

/** Checks the wire form and returns the parsed list. */
function exactList(raw: Raw): UserList {
  assert.equal(raw.status, 200, raw.body.toString('utf8').slice(0, 300));
  assert.equal(raw.contentLength, raw.body.length, 'Content-Length counts UTF-8 bytes');
  const text = raw.body.toString('utf8');
  assert.ok(text.endsWith('}\n'));
  const parsed = JSON.parse(text) as UserList;
  assert.equal(text, `${JSON.stringify(parsed)}\n`, 'compact JSON, as JSON.stringify gives it');
  return parsed;
}

test('a list from the watch cache is exact compact JSON with the right length, also from the memos', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'list-body-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { server, ca, token } = await startWithAdmin(dataDir);
  t.after(() => server.stop());
  const base = server.url;

  // Enough Users for a body of several chunks, with 2-, 3- and 4-byte characters.
  const count = 120;
  for (let i = 0; i < count; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, async (_, j) => {
        const name = `u-${i + j}`;
        const created = await callServer(`${base}${V1}/users`, ca, token, 'POST', {
          apiVersion: `${GROUP}/v1`,
          kind: 'User',
          metadata: { name },
          spec: { username: name, description: `Zoë ✓ 🚀 ${'x'.repeat(900)}` },
        });
        assert.equal(created.status, 201, created.text);
      }),
    );
  }

  const first = exactList(await getRaw(`${base}${V1}/users`, ca, token));
  assert.equal(first.kind, 'UserList');
  const names = first.items.map((u) => u.metadata.name);
  for (let i = 0; i < count; i++) assert.ok(names.includes(`u-${i}`), `u-${i} listed`);
  const itemText = JSON.stringify(first.items.find((u) => u.metadata.name === 'u-0'));
  assert.ok(itemText.startsWith(`{"apiVersion":"${GROUP}/v1","kind":"User",`), itemText.slice(0, 80));
  assert.ok(itemText.includes('Zoë ✓ 🚀'));

  // The same list again, now built from the memos: the same items, the same bytes.
  const again = exactList(await getRaw(`${base}${V1}/users`, ca, token));
  assert.deepEqual(again.items, first.items);

  // Pages (limit/continue) add up to the whole list.
  const paged: string[] = [];
  let next: string | undefined = '';
  while (next !== undefined) {
    const page: UserList = exactList(
      await getRaw(
        `${base}${V1}/users?limit=50${next ? `&continue=${encodeURIComponent(next)}` : ''}`,
        ca,
        token,
      ),
    );
    paged.push(...page.items.map((u) => u.metadata.name));
    next = page.metadata.continue;
  }
  assert.deepEqual(paged, names);

  // The response size metric still sees the list's size.
  const metrics = await callServer(`${base}/metrics`, ca, token);
  const sizes = sample(metrics.text, 'apiserver_response_sizes_sum', { verb: 'LIST', resource: 'users' });
  assert.ok(sizes !== undefined && sizes > 2 * count * 900, `response sizes ${sizes}`);
});
