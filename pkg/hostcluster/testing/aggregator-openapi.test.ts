import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

import { negotiateOpenAPIV2, serveMergedOpenAPIV2 } from './aggregator-openapi.js';

const PB = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PB_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

test('negotiates /openapi/v2 as kube-openapi does', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['*', 'json'],
    ['application/json', 'json'],
    ['application/*', 'json'],
    // kubectl up to 1.2x.
    [PB_DEPRECATED, 'protobuf'],
    [`${PB}, application/json`, 'protobuf'],
    [`application/json;q=0.5, ${PB}`, 'protobuf'],
    [`${PB};q=0.9, application/json`, 'json'],
    // A concrete type before a wildcard of the same q, whatever the order.
    [`*/*, ${PB}`, 'protobuf'],
    ['text/html', undefined],
    ['application/yaml', undefined],
    ['not a media type', undefined],
  ];
  for (const [accept, want] of cases) assert.equal(negotiateOpenAPIV2(accept), want, String(accept));
});

test('serves JSON or protobuf with an ETag each, 304 on a match and 406 for nothing acceptable', async (t) => {
  const body = JSON.stringify({ swagger: '2.0', info: { title: 't', version: 'v' }, paths: {} });
  const doc = { body, served: '"abc"' };
  const server = createServer((req, res) => serveMergedOpenAPIV2(req, res, doc));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const get = (headers: Record<string, string>): Promise<{ status: number; type?: string; etag?: string; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', path: '/openapi/v2', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers['content-type'] ? { type: res.headers['content-type'] } : {}),
            ...(typeof res.headers.etag === 'string' ? { etag: res.headers.etag } : {}),
            body: Buffer.concat(chunks),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });

  const json = await get({ accept: 'application/json' });
  assert.equal(json.status, 200);
  assert.equal(json.type, 'application/json');
  assert.equal(json.etag, '"abc"');
  assert.equal(json.body.toString(), body);

  const pb = await get({ accept: PB_DEPRECATED });
  assert.equal(pb.status, 200);
  assert.equal(pb.type, PB, 'the deprecated subtype is answered with the dotted one');
  assert.notEqual(pb.etag, json.etag);
  assert.ok(pb.body.length > 0);
  assert.notEqual(pb.body.toString(), body);

  assert.equal((await get({ accept: PB, 'if-none-match': pb.etag ?? '' })).status, 304);
  assert.equal((await get({ accept: 'application/json', 'if-none-match': pb.etag ?? '' })).status, 200);
  assert.equal((await get({ accept: 'text/html' })).status, 406);
});
