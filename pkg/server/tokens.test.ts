// Issue 5 through the whole server in this process: the issuer's documents without
// credentials (the default issuer found by OIDC discovery from a token's iss), a
// direct cluster endpoint token verified by a standard library against the
// published keys and accepted by the platform itself (until the user
// bumps tokenGeneration), the key kept across a restart, virtual cluster instances,
// and the new flags.

import assert from 'node:assert/strict';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRemoteJWKSet, customFetch as joseFetch, decodeJwt, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import { customFetch as oidcFetch, discovery as oidcDiscovery } from 'openid-client';

import { KEY_SET_FILE } from '../tokens/key-store.js';
import { parseFlags } from '../apiserver/options/flags.js';
import { JsonLogger } from '../util/log/index.js';
import { ServerOptions, type ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { run, type RunningServer } from './serve.js';
import { adminCredentials, httpsCall, type Answer } from './testing.js';
import { eventually } from '../util/eventually.js';

const GROUP = 'management.platform.dev';

/** A request as these tests make it: a content-type only with a body. */
function call(
  method: string,
  url: string,
  ca: string,
  token?: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  return httpsCall(url, ca, { method, token, body, contentType: body === undefined ? undefined : contentType });
}

async function start(dataDir: string, given: Partial<ServerOptionValues> = {}): Promise<RunningServer> {
  const options = new ServerOptions({ dataDir, securePort: 0, ...given }).complete();
  assert.deepEqual(options.validate(), []);
  const logger = new JsonLogger('error', { write: () => true });
  return run(options, logger, { shutdownTimeoutMs: 5000 });
}

interface Jwks {
  keys: (JsonWebKey & { kid: string; alg: jwt.Algorithm })[];
}

/** An issuer an operator names (--token-issuer): tokens keep it across restarts and port changes. */
const NAMED_ISSUER = 'https://platform.example.com/kubernetes/management';

function verifyWith(jwks: Jwks, token: string, issuer = NAMED_ISSUER): jwt.JwtPayload {
  const kid = jwt.decode(token, { complete: true })?.header.kid;
  const jwk = jwks.keys.find((k) => k.kid === kid);
  assert.ok(jwk, `key ${kid ?? ''} is published`);
  const payload = jwt.verify(token, createPublicKey({ key: jwk, format: 'jwk' }), {
    algorithms: [jwk.alg],
    issuer,
    audience: GROUP,
  });
  assert.ok(typeof payload === 'object');
  return payload;
}

test('direct cluster endpoint tokens through the server: published keys, platform bearer use, revocation, restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tokens-server-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await start(dataDir, { maxTokenTtlMs: 3600_000, tokenIssuer: NAMED_ISSUER });
  t.after(() => server.stop());
  const { ca, token: admin } = adminCredentials(dataDir);
  const api = (s: RunningServer): string => `${s.url}/kubernetes/management/apis/${GROUP}/v1`;

  // The issuer's documents: no credentials, under the root and under the prefix,
  // naming the issuer the operator gave and the keys under it.
  for (const prefix of ['', '/kubernetes/management']) {
    const config = await call('GET', `${server.url}${prefix}/.well-known/openid-configuration`, ca);
    assert.equal(config.status, 200, config.text);
    const doc = JSON.parse(config.text) as { issuer: string; jwks_uri: string };
    assert.equal(doc.issuer, NAMED_ISSUER);
    assert.equal(doc.jwks_uri, `${NAMED_ISSUER}/openid/v1/jwks`);
  }
  const jwksResponse = await call('GET', `${server.url}/kubernetes/management/openid/v1/jwks`, ca);
  assert.equal(jwksResponse.headers['content-type'], 'application/jwk-set+json');
  const jwks = JSON.parse(jwksResponse.text) as Jwks;

  const issued = await call('POST', `${api(server)}/directclusterendpointtokens`, ca, admin, {
    apiVersion: `${GROUP}/v1`,
    kind: 'DirectClusterEndpointToken',
    spec: { ttl: 600 },
  });
  assert.equal(issued.status, 201, issued.text);
  const token = (JSON.parse(issued.text) as { status: { token: string } }).status.token;
  const claims = verifyWith(jwks, token);
  assert.equal(claims.sub, 'admin');
  assert.equal(Number(claims.exp) - Number(claims.iat), 600);
  assert.equal(claims['tokenGeneration'], 0);

  for (const ttl of [0, -1, 3601]) {
    const refused = await call('POST', `${api(server)}/directclusterendpointtokens`, ca, admin, {
      spec: { ttl },
    });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /must be between 1 and 3600, inclusive/);
  }
  const dryRun = await call('POST', `${api(server)}/directclusterendpointtokens?dryRun=All`, ca, admin, {
    spec: { ttl: 60 },
  });
  assert.equal(dryRun.status, 201, dryRun.text);
  assert.deepEqual((JSON.parse(dryRun.text) as { status: unknown }).status, {});
  assert.equal((await call('GET', `${api(server)}/directclusterendpointtokens`, ca, admin)).status, 405);

  // The platform accepts the token as a bearer token, as the user it was issued to.
  const asToken = await call('GET', `${api(server)}/users/admin`, ca, token);
  assert.equal(asToken.status, 200, asToken.text);

  // Restarted on the same data: the same key signs, and the token still works.
  await server.stop();
  const keyFile = join(dataDir, 'tokens', KEY_SET_FILE);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  server = await start(dataDir, { maxTokenTtlMs: 3600_000, tokenIssuer: NAMED_ISSUER });
  const jwksAgain = JSON.parse((await call('GET', `${server.url}/openid/v1/jwks`, ca)).text) as Jwks;
  assert.deepEqual(jwksAgain, jwks);
  assert.equal((await call('GET', `${api(server)}/users/admin`, ca, token)).status, 200);

  // Bumping tokenGeneration revokes it.
  const patch = await call(
    'PATCH',
    `${api(server)}/users/admin`,
    ca,
    admin,
    { spec: { tokenGeneration: 1 } },
    'application/merge-patch+json',
  );
  assert.equal(patch.status, 200, patch.text);
  await eventually(async () => {
    const revoked = await call('GET', `${api(server)}/users/admin`, ca, token);
    assert.equal(revoked.status, 401, revoked.text);
    assert.match(revoked.text, /revoked/);
  });
});

/** fetch() for the OIDC libraries, trusting the server's generated CA. */
function fetchTrusting(
  ca: string,
): (
  url: string,
  init: { method?: string; headers?: Headers | Record<string, string> },
) => Promise<globalThis.Response> {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const headers =
        init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : init.headers;
      const req = request(url, { method: init.method ?? 'GET', ca, agent: false, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            for (const value of Array.isArray(v) ? v : v === undefined ? [] : [v]) out.append(k, value);
          }
          resolve(
            new globalThis.Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: out }),
          );
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
}

test('by default the issuer is where the server serves its documents: OIDC discovery from the iss claim verifies the token', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tokens-issuer-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await start(dataDir);
  t.after(() => server.stop());
  const { ca, token: admin } = adminCredentials(dataDir);
  const issued = await call(
    'POST',
    `${server.url}/kubernetes/management/apis/${GROUP}/v1/directclusterendpointtokens`,
    ca,
    admin,
    { apiVersion: `${GROUP}/v1`, kind: 'DirectClusterEndpointToken', spec: { ttl: 600 } },
  );
  assert.equal(issued.status, 201, issued.text);
  const token = (JSON.parse(issued.text) as { status: { token: string } }).status.token;

  // Bound to 127.0.0.1 with --secure-port 0: the issuer names the address and the port the server got.
  const iss = decodeJwt(token).iss ?? '';
  assert.equal(iss, `${server.url}/kubernetes/management`);

  // What a connected cluster does knowing nothing but the token's issuer: discovery
  // (the library requires the document's issuer to equal the URL it asked), then the keys it names.
  const fetchImpl = fetchTrusting(ca);
  const discovered = await oidcDiscovery(new URL(iss), 'connected-cluster', undefined, undefined, {
    [oidcFetch]: fetchImpl,
  });
  const metadata = discovered.serverMetadata();
  assert.equal(metadata.issuer, iss);
  assert.equal(metadata.jwks_uri, `${iss}/openid/v1/jwks`);
  const keys = createRemoteJWKSet(new URL(metadata.jwks_uri ?? ''), { [joseFetch]: fetchImpl });
  const { payload } = await jwtVerify(token, keys, { issuer: metadata.issuer, audience: GROUP });
  assert.equal(payload.sub, 'admin');

  // A token naming another issuer does not pass the same check.
  await assert.rejects(
    jwtVerify(token, keys, { issuer: 'https://platform.example.com/kubernetes/management', audience: GROUP }),
    /iss/,
  );
});

test('virtual cluster instances through the server, and their kube config without a host cluster', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tokens-server-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await start(dataDir, {
    projectNamespacePrefix: 'project-',
    ingressSuffix: 'vc.example.com',
  });
  t.after(() => server.stop());
  const { ca, token: admin } = adminCredentials(dataDir);
  const api = `${server.url}/kubernetes/management/apis/${GROUP}/v1`;

  const wrongNamespace = await call('POST', `${api}/namespaces/p-web/virtualclusterinstances`, ca, admin, {
    metadata: { name: 'dev' },
    spec: {},
  });
  assert.equal(wrongNamespace.status, 422, wrongNamespace.text);

  const created = await call('POST', `${api}/namespaces/project-web/virtualclusterinstances`, ca, admin, {
    metadata: { name: 'dev' },
    spec: { clusterRef: { namespace: 'vc-dev' }, template: { accessPoint: { ingress: { enabled: true } } } },
  });
  assert.equal(created.status, 201, created.text);
  const obj = JSON.parse(created.text) as { status: { virtualCluster: unknown } };
  assert.deepEqual(obj.status.virtualCluster, { accessPoint: { ingress: { enabled: true } } });

  const list = await call('GET', `${api}/virtualclusterinstances`, ca, admin);
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    (JSON.parse(list.text) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
    ['dev'],
  );

  const kubeconfig = await call(
    'POST',
    `${api}/namespaces/project-web/virtualclusterinstances/dev/kubeconfig`,
    ca,
    admin,
    {
      spec: {},
    },
  );
  assert.equal(kubeconfig.status, 503, kubeconfig.text);
  assert.match(kubeconfig.text, /no host cluster is configured/);
  const missing = await call(
    'POST',
    `${api}/namespaces/project-web/virtualclusterinstances/nope/kubeconfig`,
    ca,
    admin,
    {
      spec: {},
    },
  );
  assert.equal(missing.status, 404, missing.text);

  const discovery = JSON.parse((await call('GET', api, ca, admin)).text) as {
    resources: { name: string; verbs: string[] }[];
  };
  const names = discovery.resources.map((r) => r.name);
  for (const name of [
    'directclusterendpointtokens',
    'virtualclusterinstances',
    'virtualclusterinstances/kubeconfig',
  ]) {
    assert.ok(names.includes(name), `${name} in discovery`);
  }
});

test('the flags of issue 5 parse and validate', () => {
  const parsed = parseFlags([
    '--signing-key-secret=platform/signing-key',
    '--project-namespace-prefix=p-',
    '--csr-signer-name=example.com/signer',
    '--ingress-suffix=vc.example.com',
    '--max-token-ttl=2h',
    '--token-issuer=https://platform.example.com/kubernetes/management',
    '--signing-key-rotation-period=0',
    '--csr-timeout=45s',
  ]);
  assert.deepEqual(parsed.problems, []);
  assert.equal(parsed.values.maxTokenTtlMs, 7_200_000);
  assert.equal(parsed.values.signingKeyRotationPeriodMs, 0);
  assert.equal(parsed.values.csrTimeoutMs, 45_000);
  assert.deepEqual(new ServerOptions({ ...parsed.values, dataDir: tmpdir() }).validate(), []);

  const bad = new ServerOptions({
    dataDir: tmpdir(),
    signingKeySecret: 'no-slash',
    tokenIssuer: 'http://plain',
    maxTokenTtlMs: 0,
    ingressSuffix: 'Not A Domain',
    csrSignerName: 'nope',
    projectNamespacePrefix: 'P_',
  }).validate();
  for (const flag of [
    '--signing-key-secret',
    '--token-issuer',
    '--max-token-ttl',
    '--ingress-suffix',
    '--csr-signer-name',
    '--project-namespace-prefix',
  ]) {
    assert.ok(
      bad.some((p) => p.startsWith(flag)),
      `${flag} in ${bad.join('; ')}`,
    );
  }
  assert.deepEqual(parseFlags(['--max-token-ttl=soon']).problems.length, 1);
});

test('plain users get tokens for themselves, never wider than their key, and kube configs of instances they may read', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tokens-server-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await start(dataDir, { ingressSuffix: 'vc.example.com' });
  t.after(() => server.stop());
  const { ca, token: admin } = adminCredentials(dataDir);
  const api = `${server.url}/kubernetes/management/apis/${GROUP}/v1`;

  assert.equal(
    (await call('POST', `${api}/users`, ca, admin, { metadata: { name: 'bob' }, spec: {} })).status,
    201,
  );
  const keyOf = async (name: string, scope?: unknown): Promise<string> => {
    const r = await call('POST', `${api}/ownedaccesskeys`, ca, admin, {
      metadata: { name },
      spec: { user: 'bob', type: 'User', ...(scope ? { scope } : {}) },
    });
    assert.equal(r.status, 201, r.text);
    return (JSON.parse(r.text) as { spec: { key: string } }).spec.key;
  };
  const bob = await keyOf('bob-key');
  const scopedScope = { projects: [{ project: 'web' }] };
  const scoped = await keyOf('bob-scoped', scopedScope);

  const issued = await eventually(async () => {
    const r = await call('POST', `${api}/directclusterendpointtokens`, ca, bob, { spec: { ttl: 300 } });
    assert.equal(r.status, 201, r.text);
    return JSON.parse(r.text) as { status: { token: string } };
  });
  // The token is bob, with bob's rights on the platform: his own User, not others'.
  assert.equal((await call('GET', `${api}/users/bob`, ca, issued.status.token)).status, 200);
  assert.equal((await call('GET', `${api}/users/admin`, ca, issued.status.token)).status, 403);

  const fromScoped = await eventually(async () => {
    const r = await call('POST', `${api}/directclusterendpointtokens`, ca, scoped, { spec: { ttl: 300 } });
    assert.equal(r.status, 201, r.text);
    return JSON.parse(r.text) as { spec: { scope: unknown } };
  });
  assert.deepEqual(fromScoped.spec.scope, scopedScope);
  const wider = await call('POST', `${api}/directclusterendpointtokens`, ca, scoped, {
    spec: { ttl: 300, scope: { projects: [{ project: '*' }] } },
  });
  assert.equal(wider.status, 403, wider.text);

  // A kube config needs get (or an access rule) on the instance: 403 without, then past authorization.
  const instance = await call('POST', `${api}/namespaces/p-web/virtualclusterinstances`, ca, admin, {
    metadata: { name: 'dev' },
    spec: { template: { accessPoint: { ingress: { enabled: true } } } },
  });
  assert.equal(instance.status, 201, instance.text);
  const path = `${api}/namespaces/p-web/virtualclusterinstances/dev/kubeconfig`;
  const refused = await call('POST', path, ca, bob, { spec: {} });
  assert.equal(refused.status, 403, refused.text);
  const shared = await call(
    'PATCH',
    `${api}/namespaces/p-web/virtualclusterinstances/dev`,
    ca,
    admin,
    { spec: { access: [{ verbs: ['get'], users: ['bob'] }] } },
    'application/merge-patch+json',
  );
  assert.equal(shared.status, 200, shared.text);
  await eventually(async () => {
    const r = await call('POST', path, ca, bob, { spec: {} });
    // No host cluster here: authorization passed, and the subresource says what is missing.
    assert.equal(r.status, 503, r.text);
  });
});
