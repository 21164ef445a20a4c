// The aggregator double against a scripted HTTPS backend: what it sends (TLS
// identity, SNI, proxy headers) and how it judges the answers, so the e2e test's
// conclusions about the real server rest on a double that behaves like kube-aggregator.

import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, afterEach, before, describe, it } from 'node:test';
import { AggregatorDouble, type APIServiceSpec } from './aggregator.js';
import { ACCEPT_DISCOVERY_V2 } from './aggregator-wire.js';
import {
  issueClientCertificate,
  issueServingCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
  type IssuedCertificate,
} from './pki.js';

const GROUP = 'example.test';
const SERVICE_HOST = 'api.platform.svc';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  servername: string | false;
  clientCN: string;
}

type Responder = (req: IncomingMessage, res: ServerResponse) => void;

class Backend {
  readonly seen: Seen[] = [];
  responder: Responder = (_req, res) => json(res, 200, {});
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(serving: IssuedCertificate, clientCa: CertificateAuthority): Promise<Backend> {
    const server = createServer({
      cert: serving.certPem,
      key: serving.keyPem,
      ca: [clientCa.certPem],
      requestCert: true,
      rejectUnauthorized: false,
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const backend = new Backend(server, (server.address() as AddressInfo).port);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket as TLSSocket;
      backend.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        servername: socket.servername ?? false,
        clientCN: String(socket.getPeerCertificate().subject?.CN ?? ''),
      });
      backend.responder(req, res);
    });
    return backend;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(text);
}

function get(
  agg: AggregatorDouble,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(agg.url + path), { headers, ca: agg.ca.certPem, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const discoveryDoc = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  metadata: {},
  items: [
    {
      metadata: { name: GROUP },
      versions: [
        {
          version: 'v1',
          freshness: 'Current',
          resources: [
            {
              resource: 'widgets',
              responseKind: { group: GROUP, version: 'v1', kind: 'Widget' },
              scope: 'Namespaced',
              singularResource: 'widget',
              verbs: ['get', 'list'],
            },
          ],
        },
      ],
    },
    { metadata: { name: 'other.test' }, versions: [{ version: 'v1', resources: [] }] },
  ],
};

describe('aggregator double', () => {
  const servingCa = newCertificateAuthority('serving-ca');
  const frontProxyCa = newCertificateAuthority('front-proxy-ca');
  const proxyClient = issueClientCertificate(frontProxyCa, 'front-proxy-client');
  let backend: Backend;
  let wrongNameBackend: Backend;
  const doubles: AggregatorDouble[] = [];

  const spec = (overrides: Partial<APIServiceSpec> = {}): APIServiceSpec => ({
    group: GROUP,
    version: 'v1',
    service: { namespace: 'platform', name: 'api', port: 443 },
    caBundle: servingCa.certPem,
    groupPriorityMinimum: 1000,
    versionPriority: 15,
    ...overrides,
  });

  async function aggregator(
    overrides: Partial<APIServiceSpec> = {},
    port = backend.port,
  ): Promise<AggregatorDouble> {
    const agg = await AggregatorDouble.start({
      apiService: spec(overrides),
      endpoint: { host: '127.0.0.1', port },
      proxyClient,
    });
    agg.addToken('admin-token', { username: 'admin', groups: ['system:masters'] });
    agg.addToken('alice-token', {
      username: 'alice',
      groups: ['dev'],
      extra: { 'example.org/scope': ['a b'] },
    });
    doubles.push(agg);
    return agg;
  }

  before(async () => {
    backend = await Backend.start(
      issueServingCertificate(servingCa, { dnsNames: [SERVICE_HOST] }),
      frontProxyCa,
    );
    wrongNameBackend = await Backend.start(
      issueServingCertificate(servingCa, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }),
      frontProxyCa,
    );
  });
  afterEach(async () => {
    for (const d of doubles.splice(0)) await d.stop();
    backend.seen.length = 0;
    backend.responder = (_req, res) => json(res, 200, {});
  });
  after(async () => {
    await backend.stop();
    await wrongNameBackend.stop();
  });

  it('refuses proxying with 503 "service unavailable" until the availability probe passes', async () => {
    const agg = await aggregator();
    const before = await get(agg, `/apis/${GROUP}/v1/widgets`, { Authorization: 'Bearer admin-token' });
    assert.equal(before.status, 503);
    assert.equal(before.body, 'service unavailable\n');
    assert.equal(before.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(backend.seen.length, 0, 'nothing reached the backend');

    const condition = await agg.checkAvailability();
    assert.deepEqual(
      { status: condition.status, reason: condition.reason, message: condition.message },
      { status: 'True', reason: 'Passed', message: 'all checks passed' },
    );
    // Five probes of the group version, as system:kube-aggregator in system:masters, with the
    // front-proxy certificate and the Service's name as SNI.
    assert.equal(backend.seen.length, 5);
    for (const s of backend.seen) {
      assert.equal(s.url, `/apis/${GROUP}/v1`);
      assert.equal(s.headers['x-remote-user'], 'system:kube-aggregator');
      assert.equal(s.headers['x-remote-group'], 'system:masters');
      assert.equal(s.servername, SERVICE_HOST);
      assert.equal(s.clientCN, 'front-proxy-client');
    }
    const after = await get(agg, `/apis/${GROUP}/v1/widgets`, { Authorization: 'Bearer admin-token' });
    assert.equal(after.status, 200);
  });

  it('counts 3xx as available and 4xx/5xx as FailedDiscoveryCheck with the status', async () => {
    const agg = await aggregator();
    backend.responder = (_req, res) => {
      res.writeHead(302, { Location: '/elsewhere' });
      res.end();
    };
    assert.equal((await agg.checkAvailability()).status, 'True');
    const since = agg.availableCondition?.lastTransitionTime;

    backend.responder = (_req, res) => json(res, 403, { kind: 'Status' });
    const failed = await agg.checkAvailability();
    assert.equal(failed.status, 'False');
    assert.equal(failed.reason, 'FailedDiscoveryCheck');
    assert.match(
      failed.message,
      new RegExp(`bad status from https://127\\.0\\.0\\.1:\\d+/apis/${GROUP}/v1: 403$`),
    );
    assert.ok(since !== undefined);
    const proxied = await get(agg, `/apis/${GROUP}/v1`, { Authorization: 'Bearer admin-token' });
    assert.equal(proxied.status, 503, 'an unavailable APIService is not proxied');
  });

  it('fails the probe when the serving certificate does not chain to the caBundle or lacks the Service name', async () => {
    const otherCa = newCertificateAuthority('other-ca');
    const wrongCa = await aggregator({ caBundle: otherCa.certPem });
    const c1 = await wrongCa.checkAvailability();
    assert.equal(c1.reason, 'FailedDiscoveryCheck');
    assert.match(c1.message, /certificate/i);

    const wrongName = await aggregator({}, wrongNameBackend.port);
    const c2 = await wrongName.checkAvailability();
    assert.equal(c2.reason, 'FailedDiscoveryCheck');
    assert.match(c2.message, new RegExp(SERVICE_HOST.replace(/\./g, '\\.')));
    assert.equal(wrongNameBackend.seen.length, 0, 'no request is sent over an unverified connection');
  });

  it('authenticates clients itself and sets only its own identity headers on proxied requests', async () => {
    const agg = await aggregator();
    await agg.checkAvailability();
    backend.seen.length = 0;
    assert.equal((await get(agg, `/apis/${GROUP}/v1/widgets`)).status, 401);
    assert.equal((await get(agg, '/apis', { Authorization: 'Bearer nope' })).status, 401);

    const r = await get(agg, `/apis/${GROUP}/v1/namespaces/n/widgets?watch=true&labelSelector=a%3Db&b=1`, {
      Authorization: 'Bearer alice-token',
      'X-Remote-User': 'system:admin',
      'X-Remote-Group': 'system:masters',
      'X-Remote-Extra-Scopes': 'all',
      'Impersonate-User': 'root',
      Accept: 'application/json',
    });
    assert.equal(r.status, 200);
    const seen = backend.seen[0];
    assert.ok(seen);
    assert.equal(seen.url, `/apis/${GROUP}/v1/namespaces/n/widgets?b=1&labelSelector=a%3Db&watch=true`);
    assert.equal(seen.headers.authorization, undefined, 'the client credential is not passed on');
    assert.equal(seen.headers['impersonate-user'], undefined);
    assert.equal(seen.headers['x-remote-extra-scopes'], undefined);
    assert.equal(seen.headers.accept, 'application/json');
    const lines = (name: string): string[] =>
      seen.rawHeaders.filter((_, i) => i % 2 === 1 && seen.rawHeaders[i - 1]?.toLowerCase() === name);
    assert.deepEqual(lines('x-remote-user'), ['alice']);
    assert.deepEqual(lines('x-remote-group'), ['dev', 'system:authenticated']);
    assert.deepEqual(lines('x-remote-extra-example.org%2fscope'), ['a b']);
    assert.equal(seen.clientCN, 'front-proxy-client');
  });

  it('streams a response as the backend writes it (watch)', async () => {
    const agg = await aggregator();
    await agg.checkAvailability();
    let finish: (() => void) | undefined;
    backend.responder = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
      finish = () => res.end('{"type":"DELETED","object":{}}\n');
    };
    const firstLine = await new Promise<string>((resolve, reject) => {
      const req = request(
        new URL(`${agg.url}/apis/${GROUP}/v1/widgets?watch=true`),
        { headers: { Authorization: 'Bearer admin-token' }, ca: agg.ca.certPem, agent: false },
        (res) => {
          res.setEncoding('utf8');
          res.once('data', (c: string) => resolve(c));
        },
      );
      req.on('error', reject);
      req.end();
    });
    // The first event arrived while the backend still holds the stream open.
    assert.equal(firstLine, '{"type":"ADDED","object":{}}\n');
    assert.ok(finish, 'the backend has not ended the response');
    finish();
  });

  it('fetches /apis as kube-aggregator does, uses the ETag, and publishes only its group version', async () => {
    const agg = await aggregator();
    await agg.checkAvailability();
    backend.responder = (req, res) => {
      if (req.headers['if-none-match'] === '"abc"') {
        res.writeHead(304);
        res.end();
      } else json(res, 200, discoveryDoc, { 'Content-Type': ACCEPT_DISCOVERY_V2, ETag: '"abc"' });
    };
    const first = await agg.syncDiscovery();
    assert.equal(first.error, undefined);
    assert.equal(first.entry.freshness, 'Current');
    assert.deepEqual(
      first.entry.resources?.map((r) => r.resource),
      ['widgets'],
    );
    const second = await agg.syncDiscovery();
    assert.equal(second.entry.freshness, 'Current');
    const fetches = agg.fetches.filter((f) => f.controller === 'discovery');
    assert.equal(fetches.length, 2);
    assert.equal(fetches[0]?.requestHeaders['Accept'], ACCEPT_DISCOVERY_V2);
    assert.equal(fetches[0]?.requestHeaders['If-None-Match'], undefined);
    assert.equal(fetches[1]?.requestHeaders['If-None-Match'], '"abc"');
    assert.equal(fetches[1]?.status, 304);
    assert.deepEqual(fetches[0]?.user, { name: 'system:kube-aggregator', groups: ['system:masters'] });

    // What clients of the double then see: the group, and not the other one the backend listed.
    const apis = await get(agg, '/apis', {
      Authorization: 'Bearer alice-token',
      Accept: ACCEPT_DISCOVERY_V2,
    });
    assert.equal(apis.headers['content-type'], ACCEPT_DISCOVERY_V2);
    const names = (JSON.parse(apis.body) as typeof discoveryDoc).items.map((i) => i.metadata.name);
    assert.deepEqual(names, ['apiregistration.k8s.io', GROUP]);
    const again = await get(agg, '/apis', {
      Authorization: 'Bearer alice-token',
      Accept: ACCEPT_DISCOVERY_V2,
      'If-None-Match': String(apis.headers.etag),
    });
    assert.equal(again.status, 304);
  });

  it('falls back to the legacy group version document, and marks the version Stale on 503', async () => {
    const agg = await aggregator();
    await agg.checkAvailability();
    backend.responder = (req, res) => {
      if (req.url === '/apis') json(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
      else
        json(res, 200, {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: `${GROUP}/v1`,
          resources: [
            { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get'] },
          ],
        });
    };
    const legacy = await agg.syncDiscovery();
    assert.equal(legacy.entry.freshness, 'Current');
    assert.equal(legacy.entry.resources?.[0]?.responseKind?.kind, 'Widget');
    const fallback = agg.fetches.filter((f) => f.controller === 'discovery')[1];
    assert.equal(fallback?.path, `/apis/${GROUP}/v1`);
    assert.deepEqual(fallback?.user, { name: 'system:kube-aggregator', groups: [] });
    assert.equal(fallback?.requestHeaders['Accept'], 'application/json');

    backend.responder = (_req, res) => json(res, 503, {});
    const stale = await agg.syncDiscovery();
    assert.equal(stale.entry.freshness, 'Stale');
    assert.deepEqual(stale.entry.resources, undefined);
    assert.match(stale.error ?? '', /non-success response code: 503/);
  });

  it('downloads OpenAPI v2 with If-None-Match and the v3 root without Accept, as system:aggregator', async () => {
    const agg = await aggregator();
    await agg.checkAvailability();
    backend.responder = (req, res) => {
      if (req.url === '/openapi/v2') {
        if (req.headers['if-none-match'] === '"v2tag"') {
          res.writeHead(304);
          res.end();
        } else json(res, 200, { swagger: '2.0', paths: {} }, { ETag: '"v2tag"' });
      } else json(res, 404, {});
    };
    const first = await agg.syncOpenAPI();
    assert.deepEqual(first.v2, { status: 200, etag: '"v2tag"' });
    assert.deepEqual(first.v3, { status: 404, legacy: true });
    const second = await agg.syncOpenAPI();
    assert.equal(second.v2.status, 304);
    const v2 = agg.fetches.filter((f) => f.controller === 'openapi-v2');
    assert.equal(v2[0]?.requestHeaders['Accept'], 'application/json');
    assert.equal(v2[1]?.requestHeaders['If-None-Match'], '"v2tag"');
    const v3 = agg.fetches.find((f) => f.controller === 'openapi-v3');
    assert.deepEqual(v3?.requestHeaders, {});
    assert.deepEqual(v3?.user, { name: 'system:aggregator', groups: [] });
  });

  it('shows the APIService and its condition to kubectl get (Table)', async () => {
    const agg = await aggregator();
    backend.responder = (_req, res) => json(res, 500, {});
    await agg.checkAvailability();
    const table = await get(agg, `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`, {
      Authorization: 'Bearer alice-token',
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    const doc = JSON.parse(table.body) as { rows: { cells: string[] }[] };
    assert.deepEqual(doc.rows[0]?.cells.slice(0, 3), [
      `v1.${GROUP}`,
      'platform/api',
      'False (FailedDiscoveryCheck)',
    ]);
    const obj = await get(agg, `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`, {
      Authorization: 'Bearer alice-token',
    });
    const parsed = JSON.parse(obj.body) as {
      spec: { caBundle: string };
      status: { conditions: { type: string }[] };
    };
    assert.equal(Buffer.from(parsed.spec.caBundle, 'base64').toString(), servingCa.certPem);
    assert.equal(parsed.status.conditions[0]?.type, 'Available');
  });
});
