// Requests from a host cluster, as a table: one real server (options -> config ->
// HTTPS, SQLite) configured with --host-kubeconfig pointing at the in-process host
// double, which publishes the front-proxy CA in its ConfigMap, answers TokenReviews
// and SubjectAccessReviews, and receives the bootstrap admin key in a Secret.
// Each row is one request: which client certificate, which bearer token, which
// identity headers, and what must come back (and as whom).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions, type ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { buildServerConfig } from '../server/config.js';
import { startServer, type RunningServer } from '../server/serve.js';
import { ADMIN_KUBECONFIG_FILE } from '../server/bootstrap.js';
import {
  HostClusterDouble,
  issueCertificate,
  issueClientCertificate,
  newCertificateAuthority,
  type IssuedCertificate,
  type ReceivedSubjectAccessReview,
  type SubjectAccessReviewAnswer,
} from '../hostcluster/testing/index.js';
import { OID } from '../hostcluster/x509-names.js';
import { FrontProxyAuthenticator } from './front-proxy.js';
import { compileSettings } from './front-proxy-config.js';

const GROUP = 'management.platform.dev';
const API = `/apis/${GROUP}/v1`;
const BOOTSTRAP_SECRET = { namespace: 'platform-system', name: 'platform-apiserver-bootstrap' };

interface Response {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

interface Target {
  readonly url: string;
  readonly ca: string;
}

function call(
  target: Target,
  method: string,
  path: string,
  options: { cert?: IssuedCertificate; token?: string; headers?: Record<string, string | string[]> } = {},
): Promise<Response> {
  const body = method === 'POST' ? JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Self' }) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${path}`,
      {
        method,
        ca: target.ca,
        ...(options.cert ? { cert: options.cert.certPem, key: options.cert.keyPem } : {}),
        headers: {
          Accept: 'application/json',
          ...(body ? { 'Content-Type': 'application/json' } : {}),
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
          ...options.headers,
        },
        // A fresh connection per request: certificates are per connection.
        agent: false,
      },
      (res: IncomingMessage) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            parsed = { text };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A JSON request with a bearer token (for setting up objects as the admin). */
function send(method: string, path: string, token: string, body: unknown): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${path}`,
      {
        method,
        ca: target.ca,
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        agent: false,
      },
      (res: IncomingMessage) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

let double: HostClusterDouble;
let server: RunningServer;
let target: Target;
let adminKey: string;
let dataDir: string;
let certs: Record<string, IssuedCertificate>;

/** The host's policy: host-viewer may read teams, blocked is explicitly denied, everyone else no opinion. */
function hostPolicy(spec: ReceivedSubjectAccessReview): SubjectAccessReviewAnswer {
  if (spec.user === 'blocked') return { allowed: false, denied: true, reason: 'blocked by host policy' };
  const a = spec.resourceAttributes;
  // May get any team by name (no resourceNames), but not list them.
  if (spec.user === 'team-getter' && a?.resource === 'teams' && a.verb === 'get') return { allowed: true };
  if (
    (spec.user === 'host-viewer' || (spec.groups ?? []).includes('host-viewers')) &&
    a?.group === GROUP &&
    a.resource === 'teams' &&
    ['get', 'list', 'watch'].includes(a.verb ?? '')
  )
    return { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "viewers"' };
  return { allowed: false };
}

async function startPlatform(dir: string, values: Partial<ServerOptionValues>): Promise<RunningServer> {
  const options = new ServerOptions({ dataDir: dir, securePort: 0, ...values }).complete();
  assert.deepEqual(options.validate(), []);
  const logger = new JsonLogger('error', { write: () => true });
  const config = await buildServerConfig(options, logger);
  return startServer(config, { shutdownTimeoutMs: 5000 });
}

before(async () => {
  double = await HostClusterDouble.start();
  double.setSubjectAccessReviewer(hostPolicy);
  double.addToken('host-token-jane', { username: 'jane', groups: ['host-viewers'], uid: 'jane-uid' });
  dataDir = mkdtempSync(join(tmpdir(), 'front-proxy-test-'));
  server = await startPlatform(dataDir, {
    hostKubeconfig: double.writeKubeconfig(join(dataDir, 'host.kubeconfig')),
    bootstrapSecret: `${BOOTSTRAP_SECRET.namespace}/${BOOTSTRAP_SECRET.name}`,
  });
  target = { url: server.url, ca: readCa(dataDir) };
  adminKey = double.secretData(BOOTSTRAP_SECRET.namespace, BOOTSTRAP_SECRET.name)?.['accessKey'] ?? '';

  const evilCa = newCertificateAuthority('front-proxy-ca');
  const yearAgo = new Date(Date.now() - 365 * 24 * 3600_000);
  certs = {
    good: double.frontProxyClient,
    wrongName: issueClientCertificate(double.frontProxyCa, 'someone-else'),
    otherCa: issueClientCertificate(evilCa, 'front-proxy-client'),
    expired: issueClientCertificate(double.frontProxyCa, 'front-proxy-client', {
      notBefore: yearAgo,
      notAfter: new Date(yearAgo.getTime() + 3600_000),
    }),
    serverOnly: issueCertificate(double.frontProxyCa, {
      commonName: 'front-proxy-client',
      extKeyUsage: [OID.serverAuth],
    }),
    // Signed by the host's client CA (kubectl users' certificates), not the request-header CA.
    clientCa: issueClientCertificate(double.clientCa, 'front-proxy-client'),
    // x509 client certificates of host users: CN = user, O = groups.
    certAlice: issueClientCertificate(double.clientCa, 'cert-alice', { organizations: ['devs', 'ops'] }),
    certMasters: issueClientCertificate(double.clientCa, 'cert-root', { organizations: ['system:masters'] }),
    certViewer: issueClientCertificate(double.clientCa, 'cert-viewer', { organizations: ['host-viewers'] }),
    certOtherCa: issueClientCertificate(evilCa, 'cert-alice', { organizations: ['system:masters'] }),
    certExpired: issueClientCertificate(double.clientCa, 'cert-alice', {
      notBefore: yearAgo,
      notAfter: new Date(yearAgo.getTime() + 3600_000),
    }),
    certServerOnly: issueCertificate(double.clientCa, {
      commonName: 'cert-alice',
      extKeyUsage: [OID.serverAuth],
    }),
    certBlocked: issueClientCertificate(double.clientCa, 'blocked'),
    certNoName: issueClientCertificate(double.clientCa, '', { organizations: ['system:masters'] }),
  };
});

after(async () => {
  await server?.stop();
  await double?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function readCa(dir: string): string {
  return readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
}

interface Row {
  readonly name: string;
  readonly cert?: keyof typeof certs | 'none';
  /** A bearer token: `admin` means the bootstrap admin key. */
  readonly token?: string;
  readonly headers?: Record<string, string | string[]>;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  readonly status: number;
  /** For POST selves: who the server says the caller is. */
  readonly subject?: string;
  readonly groups?: readonly string[];
  readonly message?: RegExp;
}

const asAlice = { 'X-Remote-User': 'alice', 'X-Remote-Group': ['devs', 'ops'] };
const SELVES = `${API}/selves`;

const ROWS: readonly Row[] = [
  // ---- forged headers ----
  {
    name: 'forged headers without a certificate or credentials',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'forged system:masters headers without a certificate',
    headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' },
    path: `${API}/teams`,
    status: 401,
  },
  {
    name: 'forged headers beside an access key: the key decides',
    token: 'admin',
    headers: { 'X-Remote-User': 'mallory', 'X-Remote-Group': 'system:masters' },
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'admin',
  },
  // ---- certificates that do not make the headers trusted ----
  {
    name: 'a certificate with a common name not allowed',
    cert: 'wrongName',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'a certificate from another CA with the right name',
    cert: 'otherCa',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'an expired front-proxy certificate',
    cert: 'expired',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'a certificate for server auth only',
    cert: 'serverOnly',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: "a certificate from the host's client CA is its own identity: the headers beside it mean nothing",
    cert: 'clientCa',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'front-proxy-client',
    groups: ['system:authenticated'],
  },
  {
    name: 'a wrong-name certificate beside an access key: the key decides',
    cert: 'wrongName',
    token: 'admin',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'admin',
  },
  // ---- the aggregator's certificate ----
  {
    name: 'the front-proxy certificate and headers authenticate the user with groups',
    cert: 'good',
    headers: asAlice,
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'alice',
    groups: ['devs', 'ops', 'system:authenticated'],
  },
  {
    name: 'the front-proxy certificate without a user header authenticates nobody',
    cert: 'good',
    headers: { 'X-Remote-Group': 'devs' },
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'the front-proxy certificate alone authenticates nobody',
    cert: 'good',
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  // ---- SubjectAccessReview ----
  {
    name: 'SAR allows: host-viewer lists teams',
    cert: 'good',
    headers: { 'X-Remote-User': 'host-viewer' },
    path: `${API}/teams`,
    status: 200,
  },
  {
    name: 'SAR has no opinion and the platform denies: host-viewer deletes a team',
    cert: 'good',
    headers: { 'X-Remote-User': 'host-viewer' },
    method: 'DELETE',
    path: `${API}/teams/t1`,
    status: 403,
    message: new RegExp(
      `^teams\\.${GROUP.replace(/\./g, '\\.')} "t1" is forbidden: User "host-viewer" cannot delete resource "teams" in API group "${GROUP.replace(/\./g, '\\.')}" at the cluster scope`,
    ),
  },
  {
    name: 'SAR denies explicitly, with the host reason in the message',
    cert: 'good',
    headers: { 'X-Remote-User': 'blocked' },
    path: `${API}/teams`,
    status: 403,
    message: /cannot list resource "teams".*blocked by host policy/,
  },
  {
    name: 'system:masters from the front proxy is always allowed',
    cert: 'good',
    headers: { 'X-Remote-User': 'root', 'X-Remote-Group': 'system:masters' },
    path: `${API}/teams/no-such-team`,
    status: 404,
  },
  // ---- x509 client certificates signed by the host's client CA ----
  {
    name: 'a client certificate authenticates as CN with O as groups',
    cert: 'certAlice',
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'cert-alice',
    groups: ['devs', 'ops', 'system:authenticated'],
  },
  {
    name: 'a client certificate beside forged system:masters headers: the certificate decides',
    cert: 'certAlice',
    headers: { 'X-Remote-User': 'root', 'X-Remote-Group': 'system:masters' },
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'cert-alice',
    groups: ['devs', 'ops', 'system:authenticated'],
  },
  {
    name: 'a client certificate with O=system:masters is always allowed',
    cert: 'certMasters',
    path: `${API}/teams/no-such-team`,
    status: 404,
  },
  {
    name: 'a client certificate identity is authorized by SAR through its groups',
    cert: 'certViewer',
    path: `${API}/teams`,
    status: 200,
  },
  {
    name: 'SAR has no opinion and the platform denies: a certificate user deletes a team',
    cert: 'certViewer',
    method: 'DELETE',
    path: `${API}/teams/t1`,
    status: 403,
    message: /User "cert-viewer" cannot delete resource "teams"/,
  },
  {
    name: 'a client certificate of user "blocked" meets the host explicit deny',
    cert: 'certBlocked',
    path: `${API}/teams`,
    status: 403,
    message: /blocked by host policy/,
  },
  {
    name: 'a client certificate from another CA authenticates nobody',
    cert: 'certOtherCa',
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'an expired client certificate authenticates nobody',
    cert: 'certExpired',
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'a client-CA certificate for server auth only authenticates nobody',
    cert: 'certServerOnly',
    method: 'POST',
    path: SELVES,
    status: 401,
  },
  {
    name: 'a client certificate without a common name authenticates nobody',
    cert: 'certNoName',
    path: `${API}/teams`,
    status: 401,
  },
  {
    name: 'a foreign client certificate beside an access key: the key decides',
    cert: 'certOtherCa',
    token: 'admin',
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'admin',
  },
  // ---- TokenReview ----
  {
    name: 'TokenReview authenticates a host token',
    token: 'host-token-jane',
    method: 'POST',
    path: SELVES,
    status: 201,
    subject: 'jane',
    groups: ['host-viewers', 'system:authenticated'],
  },
  {
    name: 'a TokenReview identity is authorized by SAR through its groups',
    token: 'host-token-jane',
    path: `${API}/teams`,
    status: 200,
  },
  {
    name: 'TokenReview denies an unknown token',
    token: 'not-a-host-token',
    method: 'POST',
    path: SELVES,
    status: 401,
  },
];

describe('requests from the host cluster', () => {
  for (const row of ROWS) {
    test(row.name, async () => {
      const cert = row.cert && row.cert !== 'none' ? certs[row.cert] : undefined;
      const token = row.token === 'admin' ? adminKey : row.token;
      const res = await call(target, row.method ?? 'GET', row.path, {
        ...(cert ? { cert } : {}),
        ...(token ? { token } : {}),
        ...(row.headers ? { headers: row.headers } : {}),
      });
      assert.equal(res.status, row.status, JSON.stringify(res.body));
      if (row.subject !== undefined) {
        const status = res.body['status'] as { subject?: string; groups?: string[] };
        assert.equal(status.subject, row.subject);
        if (row.groups) assert.deepEqual(status.groups, row.groups);
      }
      if (row.message) assert.match(String(res.body['message']), row.message);
    });
  }
});

describe('host delegation details', () => {
  test('the bootstrap admin key went to the host Secret, not to a kube config file', async () => {
    assert.ok(adminKey.length > 20);
    assert.equal(double.secretData(BOOTSTRAP_SECRET.namespace, BOOTSTRAP_SECRET.name)?.['username'], 'admin');
    assert.equal(existsSync(join(dataDir, ADMIN_KUBECONFIG_FILE)), false);
    const res = await call(target, 'POST', SELVES, { token: adminKey });
    assert.equal((res.body['status'] as { subject?: string }).subject, 'admin');
  });

  test('platform credentials are never sent to the host: no TokenReview for keys, no SAR for platform users', async () => {
    const before = { ...double.calls };
    assert.equal((await call(target, 'GET', `${API}/teams`, { token: adminKey })).status, 200);
    assert.equal((await call(target, 'GET', `${API}/users/nobody`, { token: adminKey })).status, 404);
    assert.deepEqual(double.calls, before);
  });

  test('TokenReview answers are cached: a burst from one token costs the host one review', async () => {
    double.addToken('burst-token', { username: 'burst' });
    const before = double.calls.tokenReviews;
    for (let i = 0; i < 3; i++)
      assert.equal((await call(target, 'POST', SELVES, { token: 'burst-token' })).status, 201);
    assert.equal(double.calls.tokenReviews - before, 1);
  });

  test('extras reach the SubjectAccessReview, their keys percent-decoded and lower-cased', async () => {
    const res = await call(target, 'GET', `${API}/teams`, {
      cert: certs['good'],
      headers: {
        'X-Remote-User': 'eve',
        'X-Remote-Extra-Scopes': ['read', 'write'],
        'X-Remote-Extra-Acme.com%2FProject': 'p1',
      },
    });
    // Every caller may list; the host had no opinion, so eve sees only what the platform lets her see.
    assert.equal(res.status, 200);
    assert.deepEqual(res.body['items'], []);
    const spec = double.subjectAccessReviews.find(
      (r) => r.user === 'eve' && r.resourceAttributes?.verb === 'list',
    );
    assert.equal(spec?.user, 'eve');
    assert.deepEqual(spec?.groups, ['system:authenticated']);
    assert.deepEqual(spec?.extra, { 'acme.com/project': ['p1'], scopes: ['read', 'write'] });
    assert.deepEqual(spec?.resourceAttributes, {
      verb: 'list',
      group: GROUP,
      version: 'v1',
      resource: 'teams',
    });
  });

  test('a filtered list costs the host a bounded number of SubjectAccessReviews, not one per object', async () => {
    const N = 30;
    for (let i = 0; i < N; i++) {
      const res = await send('POST', `${API}/teams`, adminKey, {
        apiVersion: `${GROUP}/v1`,
        kind: 'Team',
        metadata: { name: `many-${i}` },
        spec: { users: i === 7 ? ['lister'] : [] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const listTeams = async (user: string): Promise<string[]> => {
      const res = await call(target, 'GET', `${API}/teams`, {
        cert: certs['good'],
        headers: { 'X-Remote-User': user },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body['items'] as { metadata: { name: string } }[]).map((t) => t.metadata.name);
    };
    // The host has no opinion: the platform's rules show lister the one team naming it.
    let before = double.calls.subjectAccessReviews;
    assert.deepEqual(await listTeams('lister'), ['many-7']);
    const first = double.calls.subjectAccessReviews - before;
    assert.ok(first <= 3, `${first} reviews for one list of ${N}+ teams`);
    // Asked again within the cache's lifetime: no review at all.
    before = double.calls.subjectAccessReviews;
    assert.deepEqual(await listTeams('lister'), ['many-7']);
    assert.equal(double.calls.subjectAccessReviews - before, 0);
    // The host lets team-getter get every team (no resourceNames): the list holds them all.
    before = double.calls.subjectAccessReviews;
    const all = await listTeams('team-getter');
    for (let i = 0; i < N; i++) assert.ok(all.includes(`many-${i}`));
    assert.ok(double.calls.subjectAccessReviews - before <= 3);
    // Every review was about the collection (no name), never about one team.
    assert.ok(double.subjectAccessReviews.every((r) => !r.resourceAttributes?.name?.startsWith('many-')));
  });

  test('rotating the front-proxy CA in the host ConfigMap retires the old certificate and trusts the new one', async () => {
    const old = certs['good']!;
    const fresh = double.rotateFrontProxyCa();
    await eventually(async () => {
      const oldRes = await call(target, 'POST', SELVES, { cert: old, headers: asAlice });
      const newRes = await call(target, 'POST', SELVES, { cert: fresh, headers: asAlice });
      return oldRes.status === 401 && newRes.status === 201;
    });
    // With the ConfigMap gone, the host has no front proxy: the headers mean nothing again.
    double.deleteConfigMap('kube-system', 'extension-apiserver-authentication');
    await eventually(
      async () => (await call(target, 'POST', SELVES, { cert: fresh, headers: asAlice })).status === 401,
    );
    double.publishAuthenticationConfigMap();
    await eventually(
      async () => (await call(target, 'POST', SELVES, { cert: fresh, headers: asAlice })).status === 201,
    );
  });
});

describe('front-proxy settings from flags', () => {
  test('--requestheader-client-ca-file and --requestheader-allowed-names, with no host cluster', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'front-proxy-flags-'));
    const ca = newCertificateAuthority('flags-front-proxy-ca');
    const caFile = join(dir, 'front-proxy-ca.crt');
    writeFileSync(caFile, ca.certPem);
    const flagsServer = await startPlatform(join(dir, 'data'), {
      requestheaderClientCaFile: caFile,
      requestheaderAllowedNames: ['aggregator'],
      requestheaderUsernameHeaders: ['X-Who'],
    });
    t.after(async () => {
      await flagsServer.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const flagsTarget = { url: flagsServer.url, ca: readCa(join(dir, 'data')) };
    const aggregator = issueClientCertificate(ca, 'aggregator');
    const res = await call(flagsTarget, 'POST', SELVES, { cert: aggregator, headers: { 'X-Who': 'zoe' } });
    assert.equal(res.status, 201);
    assert.equal((res.body['status'] as { subject?: string }).subject, 'zoe');
    // The default header is not configured here, so it identifies nobody.
    assert.equal(
      (await call(flagsTarget, 'POST', SELVES, { cert: aggregator, headers: asAlice })).status,
      401,
    );
    const other = issueClientCertificate(ca, 'front-proxy-client');
    assert.equal(
      (await call(flagsTarget, 'POST', SELVES, { cert: other, headers: { 'X-Who': 'zoe' } })).status,
      401,
    );
    // No host cluster: an unknown bearer token is simply not authenticated, and the key is in the file.
    assert.equal((await call(flagsTarget, 'POST', SELVES, { token: 'whatever' })).status, 401);
    assert.ok(existsSync(join(dir, 'data', ADMIN_KUBECONFIG_FILE)));
  });
});

describe('CA files are read again when they change, without a restart', () => {
  test('--requestheader-client-ca-file and --client-ca-file: after rotation the old CA is refused and the new accepted', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ca-file-rotation-'));
    const proxyCaFile = join(dir, 'front-proxy-ca.crt');
    const clientCaFile = join(dir, 'client-ca.crt');
    const oldProxyCa = newCertificateAuthority('old-front-proxy-ca');
    const oldClientCa = newCertificateAuthority('old-client-ca');
    writeFileSync(proxyCaFile, oldProxyCa.certPem);
    writeFileSync(clientCaFile, oldClientCa.certPem);
    const rotating = await startPlatform(join(dir, 'data'), {
      requestheaderClientCaFile: proxyCaFile,
      clientCaFile,
    });
    t.after(async () => {
      await rotating.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const rotatingTarget = { url: rotating.url, ca: readCa(join(dir, 'data')) };
    const whoami = async (cert: IssuedCertificate, headers?: Record<string, string>): Promise<string> => {
      const res = await call(rotatingTarget, 'POST', SELVES, { cert, ...(headers ? { headers } : {}) });
      return res.status === 201
        ? String((res.body['status'] as { subject?: string }).subject)
        : `${res.status}`;
    };
    const oldProxy = issueClientCertificate(oldProxyCa, 'front-proxy-client');
    const oldUser = issueClientCertificate(oldClientCa, 'old-user');
    assert.equal(await whoami(oldProxy, { 'X-Remote-User': 'via-proxy' }), 'via-proxy');
    assert.equal(await whoami(oldUser), 'old-user');

    const newProxyCa = newCertificateAuthority('new-front-proxy-ca');
    const newClientCa = newCertificateAuthority('new-client-ca');
    const newProxy = issueClientCertificate(newProxyCa, 'front-proxy-client');
    const newUser = issueClientCertificate(newClientCa, 'new-user');
    assert.equal(await whoami(newProxy, { 'X-Remote-User': 'via-proxy' }), '401');
    assert.equal(await whoami(newUser), '401');
    // One file rewritten in place, the other replaced by a rename (as a mounted Secret is).
    writeFileSync(proxyCaFile, newProxyCa.certPem);
    writeFileSync(`${clientCaFile}.tmp`, newClientCa.certPem);
    renameSync(`${clientCaFile}.tmp`, clientCaFile);
    await eventually(
      async () =>
        (await whoami(newProxy, { 'X-Remote-User': 'via-proxy' })) === 'via-proxy' &&
        (await whoami(newUser)) === 'new-user',
    );
    assert.equal(await whoami(oldProxy, { 'X-Remote-User': 'via-proxy' }), '401');
    assert.equal(await whoami(oldUser), '401');

    // A file that stops holding a CA keeps the bundle in force.
    writeFileSync(clientCaFile, 'not a certificate');
    writeFileSync(proxyCaFile, '');
    assert.equal(await whoami(newUser), 'new-user');
    assert.equal(await whoami(newProxy, { 'X-Remote-User': 'via-proxy' }), 'via-proxy');
  });
});

describe('header stripping', () => {
  const fakeRequest = (headers: [string, string][]): IncomingMessage => {
    const raw = headers.flat();
    const req = {
      rawHeaders: raw,
      headers: Object.fromEntries(headers.map(([k, v]) => [k.toLowerCase(), v])),
      headersDistinct: Object.fromEntries(headers.map(([k, v]) => [k.toLowerCase(), [v]])),
      socket: {},
    };
    return req as unknown as IncomingMessage;
  };

  test('identity headers are removed from every request, verified or not, configured or not', async () => {
    const configured = new FrontProxyAuthenticator({
      current: () =>
        compileSettings({
          caPem: double.frontProxyCa.certPem,
          allowedNames: [],
          usernameHeaders: ['X-Who'],
          groupHeaders: ['X-Teams'],
          extraHeaderPrefixes: ['X-Bag-'],
          uidHeaders: [],
        }),
    });
    const off = new FrontProxyAuthenticator({ current: () => undefined });
    for (const authn of [configured, off]) {
      const req = fakeRequest([
        ['X-Remote-User', 'admin'],
        ['X-Remote-Group', 'system:masters'],
        ['X-Remote-Extra-Scopes', 'all'],
        ['X-Remote-Uid', '0'],
        ['X-Who', 'admin'],
        ['X-Teams', 'system:masters'],
        ['X-Bag-Thing', 'x'],
        ['Authorization', 'Bearer k'],
      ]);
      assert.equal(await authn.authenticate(req), null);
      const left = Object.keys(req.headers);
      assert.deepEqual(
        left,
        authn === configured ? ['authorization'] : ['x-who', 'x-teams', 'x-bag-thing', 'authorization'],
      );
      assert.ok(!req.rawHeaders.some((h) => /^x-remote-/i.test(h)));
      assert.ok(!Object.keys(req.headersDistinct).some((h) => h.startsWith('x-remote-')));
    }
  });
});

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 15s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
