// A server whose identity cache (users, teams, access keys) is slow to load: /readyz
// says so by name, in upstream's format, until it has loaded, and a request that
// arrives meanwhile is answered promptly with a 503 and Retry-After instead of being
// held until the cache loads (it used to wait up to 10 s). The slow source is the
// real cache whose start the test holds back, as a slow or unreachable storage would.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ServerOptions, type ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { IDENTITY_SYNC_WAIT_MS } from '../authentication/access-key-usability.js';
import { AggregatorDouble } from '../hostcluster/testing/aggregator.js';
import {
  issueClientCertificate,
  issueServingCertificate,
  newCertificateAuthority,
} from '../hostcluster/testing/pki.js';
import { eventually } from '../util/eventually.js';
import { JsonLogger } from '../util/log/index.js';
import { buildServerConfig } from './config.js';
import { startServer, type RunningServer } from './serve.js';
import { callServer, httpsCall, startWithAdmin } from './testing.js';

const USERS = '/kubernetes/management/apis/management.platform.dev/v1/users';
/** Far below the 10 s a request used to be held, far above the wait's bound on a busy machine. */
const HELD_AT_MOST_MS = IDENTITY_SYNC_WAIT_MS + 4_000;

/** A server over `dataDir` whose identity cache starts loading only when `release` is called. */
async function startWithHeldIdentities(
  dataDir: string,
  given: Partial<ServerOptionValues> = {},
): Promise<{ server: RunningServer; release: () => void }> {
  const options = new ServerOptions({ dataDir, securePort: 0, logLevel: 'error', ...given }).complete();
  assert.deepEqual(options.validate(), []);
  const config = await buildServerConfig(options, new JsonLogger('error', { write: () => true }));
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const startIdentity = config.accessKeys.start.bind(config.accessKeys);
  config.accessKeys.start = () => void released.then(startIdentity);
  const server = await startServer(config, { shutdownTimeoutMs: 5000 });
  return { server, release };
}

test('until the identity cache has loaded, /readyz names it and requests get a prompt 503 with Retry-After', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'startup-readiness-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // A first start bootstraps the admin (and waits for its key to be loaded).
  const first = await startWithAdmin(dataDir);
  const { ca, token } = first;
  await first.server.stop();

  const { server, release } = await startWithHeldIdentities(dataDir);
  t.after(async () => {
    release();
    await server.stop();
  });

  const verbose = await httpsCall(`${server.url}/readyz?verbose`, ca);
  assert.equal(verbose.status, 500, verbose.text);
  assert.match(verbose.text, /^\[\+\]ping ok$/m);
  assert.match(verbose.text, /^\[-\]identity-cache failed: reason withheld$/m);
  assert.match(verbose.text, /^\[\+\]storage ok$/m);
  assert.match(verbose.text, /readyz check failed\n$/);
  const one = await httpsCall(`${server.url}/readyz/identity-cache`, ca);
  assert.equal(one.status, 500);
  assert.equal(one.text, 'internal server error: users, teams and access keys not loaded yet\n');
  assert.equal((await httpsCall(`${server.url}/readyz/storage`, ca)).status, 200);
  // Liveness is not readiness: the process is fine.
  assert.equal((await httpsCall(`${server.url}/livez`, ca)).status, 200);

  const early = await callServer(`${server.url}${USERS}`, ca, token);
  assert.equal(early.status, 503, early.text);
  assert.ok(early.ms < HELD_AT_MOST_MS, `held ${early.ms} ms`);
  assert.ok(Number(early.headers['retry-after']) >= 1, `Retry-After: ${early.headers['retry-after']}`);
  const status = JSON.parse(early.text) as {
    reason?: string;
    message?: string;
    details?: { retryAfterSeconds?: number };
  };
  assert.equal(status.reason, 'ServiceUnavailable');
  assert.match(status.message ?? '', /not ready yet, please try again/);
  assert.equal(String(status.details?.retryAfterSeconds), early.headers['retry-after']);
  assert.ok(!early.text.includes(token), 'the key is not echoed');

  release();
  await eventually(
    async () => assert.equal((await httpsCall(`${server.url}/readyz`, ca)).status, 200),
    15_000,
    50,
  );
  const served = await callServer(`${server.url}${USERS}`, ca, token);
  assert.equal(served.status, 200, served.text);
});

test("the host aggregator's availability probe fails promptly (503, not a timeout) until the identity cache has loaded", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'startup-aggregated-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // As the chart installs it: the Service's serving certificate, the front-proxy CA.
  const service = { namespace: 'platform-system', name: 'platform-apiserver', port: 443 };
  const servingCa = newCertificateAuthority('startup-serving-ca');
  const serving = issueServingCertificate(servingCa, {
    dnsNames: [`${service.name}.${service.namespace}.svc`],
    ipAddresses: ['127.0.0.1'],
  });
  writeFileSync(join(dataDir, 'tls.crt'), serving.certPem + servingCa.certPem);
  writeFileSync(join(dataDir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  const frontProxyCa = newCertificateAuthority('startup-front-proxy-ca');
  writeFileSync(join(dataDir, 'front-proxy-ca.crt'), frontProxyCa.certPem);
  const first = await startWithAdmin(dataDir);
  await first.server.stop();

  const { server, release } = await startWithHeldIdentities(dataDir, {
    tlsCertFile: join(dataDir, 'tls.crt'),
    tlsPrivateKeyFile: join(dataDir, 'tls.key'),
    requestheaderClientCaFile: join(dataDir, 'front-proxy-ca.crt'),
    requestheaderAllowedNames: ['front-proxy-client'],
  });
  t.after(async () => {
    release();
    await server.stop();
  });
  const agg = await AggregatorDouble.start({
    apiService: {
      group: 'management.platform.dev',
      version: 'v1',
      service,
      caBundle: servingCa.certPem,
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
    endpoint: { host: '127.0.0.1', port: server.port },
    proxyClient: issueClientCertificate(frontProxyCa, 'front-proxy-client'),
  });
  t.after(() => agg.stop());

  const started = Date.now();
  const unavailable = await agg.checkAvailability();
  const probeMs = Date.now() - started;
  assert.equal(unavailable.status, 'False');
  assert.equal(unavailable.reason, 'FailedDiscoveryCheck');
  // Answered (a 503), not left to the probe's 5 s timeout as the 10 s wait was.
  assert.match(unavailable.message, /bad status from .*: 503$/);
  assert.ok(probeMs < HELD_AT_MOST_MS, `the probe took ${probeMs} ms`);

  release();
  await eventually(async () => assert.equal((await agg.checkAvailability()).status, 'True'), 15_000, 100);
});
