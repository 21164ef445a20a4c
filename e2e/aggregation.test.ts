// The server behind a host cluster's aggregator, as the chart installs it: a serving
// certificate for <service>.<namespace>.svc whose CA is the APIService caBundle, and
// front-proxy settings read from the host's kube-system/extension-apiserver-authentication
// ConfigMap (the host is the host cluster double) - and once more with the settings
// from --requestheader-* flags and no host. The aggregator is the kube-aggregator
// double (pkg/hostcluster/testing/aggregator.ts) in front of the started server.
//
// Proves: the aggregator's availability probe passes; the discovery and OpenAPI
// documents it fetches are what it expects; proxied requests act as the proxied user
// (admin can do everything, a user without rights gets Kubernetes' 403 naming them);
// identity headers without the front-proxy certificate count for nothing; and real
// kubectl pointed at the aggregator works.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import type { Event } from '../pkg/audit/types.js';
import { AggregatorDouble } from '../pkg/hostcluster/testing/aggregator.js';
import { ACCEPT_DISCOVERY_V2 } from '../pkg/hostcluster/testing/aggregator-wire.js';
import { HostClusterDouble } from '../pkg/hostcluster/testing/host-double.js';
import {
  issueClientCertificate,
  issueServingCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
  type IssuedCertificate,
} from '../pkg/hostcluster/testing/pki.js';
import { hashAccessKey, keyRevisionAnnotation } from '../pkg/apis/management/v1/owned-access-key.js';
import { accessKeyDigest } from '../pkg/authentication/access-key-digest.js';
import { certificateBindingGroup } from '../pkg/authentication/certificate-binding.js';
import { runCommand } from './commands.js';
import type { CommandResult } from './commands.js';
import { backends, GROUP, GROUP_VERSION, kubectlBinary, startServer } from './harness.js';
import type { TestServer } from './harness.js';
import { apiRequest, openWatch } from './https-client.js';
import type { HttpsTarget } from './https-client.js';
import { parseTable } from './kubectl-table.js';
import { replayHostGarbageCollector } from './host-collector-replay.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;
const SERVICE = { namespace: 'platform-system', name: 'platform-apiserver', port: 443 };
const SERVICE_HOST = `${SERVICE.name}.${SERVICE.namespace}.svc`;
const ADMIN = { token: 'admin-token', username: 'kubernetes-admin', groups: ['system:masters'] };
const ALICE = { token: 'alice-token', username: 'alice', groups: ['developers'] };
const BOB = { token: 'bob-token', username: 'bob', groups: ['operators'] };
/** Upstream's hex SHA-512 ETag, quoted. */
const ETAG = /^"[0-9A-Fa-f]{128}"$/;

interface DiscoveryResource {
  resource: string;
  responseKind?: { group: string; version: string; kind: string };
  scope: string;
  verbs: string[];
}

interface ResourceListEntry {
  name: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
}

interface KubeObject {
  metadata: { name?: string; uid?: string; annotations?: Record<string, string> };
}

interface WatchedObject {
  metadata?: { name?: string };
}

function ok(r: CommandResult, what: string): void {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function team(name: string): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'Team',
    metadata: { name },
    spec: { displayName: `Team ${name}`, users: ['alice'] },
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const backend = backends()[0] ?? 'sqlite';

/**
 * Where the server reads its front-proxy settings: the host's ConfigMap (what the
 * chart deploys), or the --requestheader-* flags (a server with no host cluster).
 */
type FrontProxySource = 'host ConfigMap' | 'flags';

for (const source of ['host ConfigMap', 'flags'] as const satisfies readonly FrontProxySource[])
  describe(`the server behind the aggregator double (${backend}, front-proxy settings from ${source})`, () => {
    let dir: string;
    let host: HostClusterDouble | undefined;
    let frontProxyCa: CertificateAuthority;
    let proxyClient: IssuedCertificate;
    let server: TestServer;
    let agg: AggregatorDouble;
    const servingCa = newCertificateAuthority('platform-apiserver-ca');
    const asAdmin = (): HttpsTarget => ({ baseUrl: agg.url, ca: agg.ca.certPem, token: ADMIN.token });
    const asAlice = (): HttpsTarget => ({ baseUrl: agg.url, ca: agg.ca.certPem, token: ALICE.token });

    /** kubectl with a kube config for the aggregator and the user's token. */
    function kubectl(user: { token: string; username: string }, args: string[], input?: string) {
      const kubeconfig = join(dir, `${user.username}.kubeconfig`);
      writeFileSync(kubeconfig, agg.kubeconfig(user.token), { mode: 0o600 });
      const base = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, `cache-${user.username}`)];
      return runCommand(kubectlBinary(), [...base, ...args], input === undefined ? {} : { input });
    }

    /** A request straight to the server (not through the aggregator), optionally with a client certificate. */
    function direct(
      path: string,
      headers: Record<string, string>,
      client?: { certPem: string; keyPem: string },
      post?: unknown,
    ): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
      return new Promise((resolve, reject) => {
        const req = request(
          new URL(server.url + path),
          {
            ...(post === undefined ? {} : { method: 'POST' }),
            headers: {
              Accept: 'application/json',
              ...(post === undefined ? {} : { 'Content-Type': 'application/json' }),
              ...headers,
            },
            ca: servingCa.certPem,
            servername: SERVICE_HOST,
            agent: false,
            ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        );
        req.on('error', reject);
        req.end(post === undefined ? undefined : JSON.stringify(post));
      });
    }

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'platform-e2e-aggregation-'));
      // The chart's serving certificate: the Service's DNS names (and loopback, where the test reaches it).
      const serving = issueServingCertificate(servingCa, {
        dnsNames: [SERVICE_HOST, `${SERVICE_HOST}.cluster.local`],
        ipAddresses: ['127.0.0.1'],
      });
      writeFileSync(join(dir, 'tls.crt'), serving.certPem + servingCa.certPem);
      writeFileSync(join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
      const args = ['--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')];
      // The audit trail records the identity the front proxy passed on.
      writeFileSync(
        join(dir, 'audit-policy.yaml'),
        'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n',
      );
      args.push(
        '--audit-policy-file',
        join(dir, 'audit-policy.yaml'),
        '--audit-log-path',
        join(dir, 'audit.log'),
      );
      if (source === 'host ConfigMap') {
        // kube-apiserver publishes its front-proxy CA and allowed names; the server watches them.
        host = await HostClusterDouble.start();
        frontProxyCa = host.frontProxyCa;
        proxyClient = host.frontProxyClient;
        args.push('--host-kubeconfig', host.writeKubeconfig(join(dir, 'host.kubeconfig')));
        // bob may manage teams by the host's RBAC (a SubjectAccessReview), alice by nothing.
        host.grant({
          users: [BOB.username],
          verbs: ['get', 'list', 'watch', 'create', 'delete'],
          apiGroups: [GROUP],
          resources: ['teams'],
        });
      } else {
        frontProxyCa = newCertificateAuthority('front-proxy-ca');
        proxyClient = issueClientCertificate(frontProxyCa, 'front-proxy-client');
        writeFileSync(join(dir, 'front-proxy-ca.crt'), frontProxyCa.certPem);
        args.push(
          '--requestheader-client-ca-file',
          join(dir, 'front-proxy-ca.crt'),
          '--requestheader-allowed-names',
          'front-proxy-client',
        );
      }
      server = await startServer({ backend, args });
      agg = await AggregatorDouble.start({
        apiService: {
          group: GROUP,
          version: 'v1',
          service: SERVICE,
          caBundle: servingCa.certPem,
          groupPriorityMinimum: 1000,
          versionPriority: 15,
        },
        endpoint: { host: '127.0.0.1', port: Number(new URL(server.url).port) },
        // kube-apiserver's --proxy-client-cert-file, signed by the front-proxy CA.
        proxyClient,
      });
      for (const u of [ADMIN, ALICE, BOB]) agg.addToken(u.token, { username: u.username, groups: u.groups });
    });

    after(async () => {
      await agg?.stop();
      await server?.stop();
      await host?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('passes the availability probe, and is not proxied before it', TEST, async () => {
      const early = await apiRequest(asAdmin(), 'GET', `${V1}/teams`);
      assert.equal(early.status, 503);
      assert.equal(early.text, 'service unavailable\n');

      const condition = await agg.checkAvailability();
      assert.deepEqual(
        {
          type: condition.type,
          status: condition.status,
          reason: condition.reason,
          message: condition.message,
        },
        { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' },
      );
      const probes = agg.fetches.filter((f) => f.controller === 'availability');
      assert.equal(probes.length, 5);
      for (const p of probes) {
        assert.equal(p.path, V1);
        assert.equal(p.status, 200, `probe answered ${p.status}: ${p.body}`);
        assert.equal(p.headers['content-type'], 'application/json');
      }
    });

    it(
      'serves the aggregated discovery the aggregator fetches, with an ETag it can revalidate',
      TEST,
      async () => {
        const first = await agg.syncDiscovery();
        assert.equal(first.error, undefined, first.error);
        const fetch = agg.fetches.filter((f) => f.controller === 'discovery').at(-1);
        assert.ok(fetch);
        assert.equal(fetch.path, '/apis');
        assert.equal(fetch.status, 200, fetch.body);
        assert.equal(fetch.headers['content-type'], ACCEPT_DISCOVERY_V2);
        assert.match(String(fetch.headers.etag), ETAG);
        assert.equal(first.entry.version, 'v1');
        assert.equal(first.entry.freshness, 'Current');

        // Every resource of the group version, as the legacy document the aggregator
        // falls back to describes it (fetched as that fallback does: no groups).
        const fallback = await agg.fetchLegacyDiscovery();
        assert.equal(fallback.error, undefined, fallback.error);
        const legacy = agg.fetches.at(-1);
        assert.equal(legacy?.path, V1);
        assert.deepEqual(legacy?.user.groups, []);
        assert.equal(legacy?.status, 200, legacy?.body);
        assert.equal(legacy?.headers['content-type'], 'application/json');
        const list = JSON.parse(legacy?.body ?? '{}') as {
          kind: string;
          groupVersion: string;
          resources: ResourceListEntry[];
        };
        assert.equal(list.kind, 'APIResourceList');
        assert.equal(list.groupVersion, GROUP_VERSION);
        assert.deepEqual(
          fallback.entry?.resources?.map((r) => [r.resource, r.scope, r.verbs.join(',')]),
          (first.entry.resources ?? []).map((r) => [r.resource, r.scope, r.verbs.join(',')]),
          'the fallback document converts to the same resources as the aggregated one',
        );
        const topLevel = list.resources.filter((r) => !r.name.includes('/'));
        const published = (first.entry.resources ?? []) as DiscoveryResource[];
        assert.deepEqual(published.map((r) => r.resource).sort(), topLevel.map((r) => r.name).sort());
        for (const r of topLevel) {
          const p = published.find((x) => x.resource === r.name);
          assert.ok(p, r.name);
          assert.deepEqual(
            p.responseKind,
            { group: GROUP, version: 'v1', kind: r.kind },
            `${r.name} responseKind`,
          );
          assert.equal(p.scope, r.namespaced ? 'Namespaced' : 'Cluster', `${r.name} scope`);
          assert.deepEqual(p.verbs, r.verbs, `${r.name} verbs`);
        }
        for (const [name, scope] of [
          ['teams', 'Cluster'],
          ['users', 'Cluster'],
          ['sharedsecrets', 'Namespaced'],
          ['ownedaccesskeys', 'Cluster'],
        ] as const) {
          const p = published.find((x) => x.resource === name);
          assert.equal(p?.scope, scope, `${name} is published ${scope}`);
          assert.ok(
            p?.verbs.includes('watch') && p.verbs.includes('delete'),
            `${name} verbs: ${p?.verbs.join(',')}`,
          );
        }

        // A minute later the aggregator asks again with the ETag: nothing changed, 304.
        const second = await agg.syncDiscovery();
        const revalidation = agg.fetches.filter((f) => f.controller === 'discovery').at(-1);
        assert.equal(revalidation?.requestHeaders['If-None-Match'], fetch.headers.etag);
        assert.equal(revalidation?.status, 304);
        assert.equal(second.entry.freshness, 'Current');
        assert.deepEqual(second.entry.resources, first.entry.resources);
      },
    );

    it('serves the OpenAPI documents the aggregator downloads, v2 with ETag revalidation', TEST, async () => {
      const first = await agg.syncOpenAPI();
      assert.equal(first.v2.error, undefined, first.v2.error);
      assert.equal(first.v2.status, 200);
      assert.match(first.v2.etag, ETAG, 'the server sends its own ETag (no locally made-up one)');
      assert.deepEqual(first.v3, { status: 200, legacy: false });
      const v2 = agg.fetches.filter((f) => f.controller === 'openapi-v2').at(-1);
      assert.equal(v2?.headers['content-type'], 'application/json');
      const swagger = JSON.parse(v2?.body ?? '{}') as { swagger?: string; paths?: Record<string, unknown> };
      assert.equal(swagger.swagger, '2.0');
      assert.ok(swagger.paths?.[`${V1}/teams`], 'v2 has the teams path');
      // The host's kube-apiserver publishes its built-in groups itself: the reviews this
      // server also answers are not handed to the aggregator to merge.
      assert.ok(
        !Object.keys(swagger.paths ?? {}).some((p) => p.startsWith('/apis/authorization.k8s.io/')),
        'v2 for the aggregator holds the API group only',
      );

      const again = await agg.syncOpenAPI();
      assert.equal(again.v2.status, 304);
      assert.equal(
        agg.fetches.filter((f) => f.controller === 'openapi-v2').at(-1)?.requestHeaders['If-None-Match'],
        first.v2.etag,
      );

      // The v3 root the aggregator merges points at the group document alone, which it proxies.
      assert.deepEqual(Object.keys(agg.openAPIV3RootPaths ?? {}), [`apis/${GROUP}/v1`]);
      const entry = agg.openAPIV3RootPaths?.[`apis/${GROUP}/v1`] as
        { serverRelativeURL?: string } | undefined;
      assert.match(
        entry?.serverRelativeURL ?? '',
        new RegExp(`^/openapi/v3/apis/${GROUP.replace(/\./g, '\\.')}/v1\\?hash=[0-9A-F]+$`),
      );
      const doc = await apiRequest(asAlice(), 'GET', entry?.serverRelativeURL ?? '');
      assert.equal(doc.status, 200, doc.text);
      assert.equal(doc.headers['content-type'], 'application/json');
      assert.equal(doc.headers['cache-control'], 'public, immutable');
      const schemas = doc.json<{
        components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown }> };
      }>().components.schemas;
      assert.ok(
        Object.values(schemas).some((s) =>
          JSON.stringify(s['x-kubernetes-group-version-kind'] ?? []).includes(`"kind":"Team"`),
        ),
        'a schema carries the Team GVK',
      );
    });

    it('acts as the proxied admin: create, get, list, watch and delete', TEST, async () => {
      const watch = await openWatch(asAdmin(), `${V1}/teams?watch=true&resourceVersion=0`);
      try {
        assert.equal(watch.status, 200);
        const created = await apiRequest(asAdmin(), 'POST', `${V1}/teams`, team('agg-admin'));
        assert.equal(created.status, 201, created.text);
        const got = await apiRequest(asAdmin(), 'GET', `${V1}/teams/agg-admin`);
        assert.equal(got.status, 200, got.text);
        assert.equal(got.json<{ kind: string }>().kind, 'Team');
        const list = await apiRequest(asAdmin(), 'GET', `${V1}/teams`);
        assert.ok(
          list.json<{ items: WatchedObject[] }>().items.some((t) => t.metadata?.name === 'agg-admin'),
          list.text,
        );
        const named = (type: string) => () =>
          watch.events.some(
            (e) => e.type === type && (e.object as WatchedObject).metadata?.name === 'agg-admin',
          );
        await until('the ADDED event through the proxy', named('ADDED'));
        const deleted = await apiRequest(asAdmin(), 'DELETE', `${V1}/teams/agg-admin`);
        assert.equal(deleted.status, 200, deleted.text);
        await until('the DELETED event through the proxy', named('DELETED'));
        assert.deepEqual(watch.badLines, []);
        assert.equal((await apiRequest(asAdmin(), 'GET', `${V1}/teams/agg-admin`)).status, 404);
      } finally {
        watch.close();
      }
    });

    if (source === 'host ConfigMap')
      it(
        "serves every request of the host cluster's garbage collector, whose work it leaves to it",
        TEST,
        async () => {
          await agg.checkAvailability();
          const collector = 'system:serviceaccount:kube-system:generic-garbage-collector';
          agg.addToken('gc-token', { username: collector, groups: ['system:serviceaccounts'] });
          // kube-controller-manager's RBAC for its collector: get, list, watch, patch, update, delete on everything.
          host?.grant({
            users: [collector],
            verbs: ['get', 'list', 'watch', 'patch', 'update', 'delete'],
            apiGroups: ['*'],
            resources: ['*'],
          });
          await replayHostGarbageCollector(asAdmin(), {
            baseUrl: agg.url,
            ca: agg.ca.certPem,
            token: 'gc-token',
          });
        },
      );

    it("audits a proxied call as the aggregator's user, under the Audit-ID it brought", TEST, async () => {
      const auditID = `agg-${Date.now()}`;
      const r = await apiRequest(asAdmin(), 'GET', `${V1}/teams`, undefined, { 'Audit-ID': auditID });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers['audit-id'], auditID);
      const events = readFileSync(join(dir, 'audit.log'), 'utf8')
        .split('\n')
        .filter((line) => line.includes(auditID))
        .map((line) => JSON.parse(line) as Event);
      assert.deepEqual(
        events.map((e) => e.stage),
        ['RequestReceived', 'ResponseComplete'],
      );
      assert.equal(events[1]?.user.username, ADMIN.username);
      assert.ok(events[1]?.user.groups?.includes('system:masters'), JSON.stringify(events[1]?.user));
      assert.deepEqual(events[1]?.objectRef, { resource: 'teams', apiGroup: GROUP, apiVersion: 'v1' });
    });

    it('answers a user without rights with Kubernetes 403 wording naming that user', TEST, async () => {
      // Identity headers the client sends itself are dropped by the aggregator.
      const r = await apiRequest(asAlice(), 'POST', `${V1}/teams`, team('agg-alice'), {
        'X-Remote-User': ADMIN.username,
        'X-Remote-Group': 'system:masters',
      });
      assert.equal(r.status, 403, r.text);
      const status = r.json<{ reason: string; message: string; code: number }>();
      assert.equal(status.reason, 'Forbidden');
      assert.equal(
        status.message,
        `teams.${GROUP} is forbidden: User "alice" cannot create resource "teams" in API group "${GROUP}" at the cluster scope`,
      );
      assert.equal((await apiRequest(asAdmin(), 'GET', `${V1}/teams/agg-alice`)).status, 404);
    });

    if (source === 'host ConfigMap')
      it(
        "lets a user the host's RBAC allows manage teams (delegated SubjectAccessReview)",
        TEST,
        async () => {
          const target: HttpsTarget = { baseUrl: agg.url, ca: agg.ca.certPem, token: BOB.token };
          const created = await apiRequest(target, 'POST', `${V1}/teams`, team('agg-bob'));
          assert.equal(created.status, 201, created.text);
          assert.equal((await apiRequest(target, 'DELETE', `${V1}/teams/agg-bob`)).status, 200);
          const review = host?.subjectAccessReviews.find((s) => s.user === BOB.username);
          assert.equal(review?.resourceAttributes?.['resource'], 'teams');
          assert.ok(review?.groups?.includes('operators'), 'the groups the aggregator sent reach the review');
        },
      );

    it('ignores identity headers sent without the front-proxy certificate (401)', TEST, async () => {
      const forged = { 'X-Remote-User': ADMIN.username, 'X-Remote-Group': 'system:masters' };
      const expectUnauthorized = (r: { status: number; body: string }, what: string): void => {
        assert.equal(r.status, 401, `${what}: ${r.status} ${r.body}`);
        assert.equal((JSON.parse(r.body) as { reason?: string }).reason, 'Unauthorized', what);
      };
      expectUnauthorized(await direct(`${V1}/teams`, forged), 'no client certificate');
      const strangerCa = newCertificateAuthority('stranger-ca');
      expectUnauthorized(
        await direct(`${V1}/teams`, forged, issueClientCertificate(strangerCa, 'front-proxy-client')),
        'a certificate from another CA',
      );
      expectUnauthorized(
        await direct(`${V1}/teams`, forged, issueClientCertificate(frontProxyCa, 'not-the-aggregator')),
        'a front-proxy CA certificate with a name not allowed',
      );
      // The same headers with the aggregator's certificate are believed.
      const believed = await direct(`${V1}/teams`, forged, proxyClient);
      assert.equal(believed.status, 200, believed.body);
    });

    it(
      'refuses an identity the aggregator forwards while its platform User is disabled (401)',
      TEST,
      async () => {
        const name = `agg-dora-${source === 'flags' ? 'f' : 'h'}`;
        const created = await apiRequest(asAdmin(), 'POST', `${V1}/users`, {
          apiVersion: GROUP_VERSION,
          kind: 'User',
          metadata: { name },
          spec: {},
        });
        assert.equal(created.status, 201, created.text);
        // Any host credential of that name, as the aggregator forwards it (no certificate binding).
        const forwarded = { 'X-Remote-User': name, 'X-Remote-Group': 'system:authenticated' };
        // Authenticated: the list is filtered down to what the User may see.
        const before = await direct(`${V1}/teams`, forwarded, proxyClient);
        assert.equal(before.status, 200, before.body);
        const disabled = await apiRequest(
          asAdmin(),
          'PATCH',
          `${V1}/users/${name}`,
          { spec: { disabled: true } },
          { 'Content-Type': 'application/merge-patch+json' },
        );
        assert.equal(disabled.status, 200, disabled.text);
        const deadline = Date.now() + 20_000;
        let after = await direct(`${V1}/teams`, forwarded, proxyClient);
        while (after.status !== 401 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          after = await direct(`${V1}/teams`, forwarded, proxyClient);
        }
        assert.equal(after.status, 401, after.body);
        assert.match(after.body, new RegExp(`the user \\\\"${name}\\\\" is disabled`));
        // A host identity that is no platform User is the host's business, as before.
        const stranger = await direct(
          `${V1}/teams`,
          { 'X-Remote-User': 'agg-host-only', 'X-Remote-Group': 'system:authenticated' },
          proxyClient,
        );
        assert.notEqual(stranger.status, 401, stranger.body);
      },
    );

    it(
      'refuses, through the aggregator, any credential minted with a key-bound certificate (403)',
      TEST,
      async () => {
        const name = `agg-erin-${source === 'flags' ? 'f' : 'h'}`;
        const user = await apiRequest(asAdmin(), 'POST', `${V1}/users`, {
          apiVersion: GROUP_VERSION,
          kind: 'User',
          metadata: { name },
          spec: {},
        });
        assert.equal(user.status, 201, user.text);
        const made = await apiRequest(asAdmin(), 'POST', `${V1}/ownedaccesskeys`, {
          apiVersion: GROUP_VERSION,
          kind: 'OwnedAccessKey',
          metadata: { name: `${name}-key` },
          spec: { user: name },
        });
        assert.equal(made.status, 201, made.text);
        const key = made.json<KubeObject & { spec: { key: string } }>();
        // The stored form the server digests: the hash of the value, under the key's revision.
        const stored = { ...key, spec: { ...key.spec, key: hashAccessKey(key.spec.key) } };
        const binding = certificateBindingGroup(GROUP, {
          user: { uid: user.json<KubeObject>().metadata.uid ?? '', tokenGeneration: 0 },
          accessKey: {
            name: `${name}-key`,
            uid: key.metadata.uid ?? '',
            digest: accessKeyDigest(stored, keyRevisionAnnotation(GROUP)),
          },
        });
        // What the aggregator forwards for the certificate: its CN and O (the binding among them).
        const forwarded = { 'X-Remote-User': name, 'X-Remote-Group': binding };
        const read = await direct(`${V1}/users/${name}`, forwarded, proxyClient);
        assert.equal(read.status, 200, read.body);
        const minting: Array<[string, unknown]> = [
          [
            `${V1}/ownedaccesskeys`,
            { apiVersion: GROUP_VERSION, kind: 'OwnedAccessKey', spec: { user: name } },
          ],
          [
            `${V1}/directclusterendpointtokens`,
            { apiVersion: GROUP_VERSION, kind: 'DirectClusterEndpointToken', spec: {} },
          ],
        ];
        for (const [path, body] of minting) {
          const r = await direct(path, forwarded, proxyClient, body);
          assert.equal(r.status, 403, `${path}: ${r.body}`);
          assert.match(r.body, /a client certificate made with an access key cannot mint credentials/);
        }
      },
    );

    it('works with kubectl pointed at the aggregator', TEST, async () => {
      const resources = await kubectl(ADMIN, ['api-resources', '--api-group', GROUP]);
      ok(resources, 'kubectl api-resources');
      const names = parseTable(resources.stdout).rows.map((r) => r['NAME']);
      for (const n of ['teams', 'users', 'sharedsecrets', 'ownedaccesskeys'])
        assert.ok(names.includes(n), `api-resources lacks ${n}:\n${resources.stdout}`);

      const apiservice = await kubectl(ADMIN, ['get', 'apiservice', `v1.${GROUP}`]);
      ok(apiservice, 'kubectl get apiservice');
      const row = parseTable(apiservice.stdout).rows[0];
      assert.equal(row?.['NAME'], `v1.${GROUP}`);
      assert.equal(row?.['SERVICE'], `${SERVICE.namespace}/${SERVICE.name}`);
      assert.equal(row?.['AVAILABLE'], 'True');

      const created = await kubectl(ADMIN, ['create', '-f', '-'], toYaml(team('agg-kubectl')));
      ok(created, 'kubectl create -f -');
      assert.match(
        created.stdout,
        new RegExp(`^team\\.${GROUP.replace(/\./g, '\\.')}/agg-kubectl created$`, 'm'),
      );

      const got = await kubectl(ADMIN, ['get', 'teams']);
      ok(got, 'kubectl get teams');
      const table = parseTable(got.stdout);
      assert.ok(
        table.headers.includes('DISPLAY NAME'),
        `server-side table columns: ${table.headers.join(', ')}`,
      );
      assert.equal(table.rows.find((r) => r['NAME'] === 'agg-kubectl')?.['DISPLAY NAME'], 'Team agg-kubectl');

      const explain = await kubectl(ADMIN, ['explain', 'team.spec']);
      ok(explain, 'kubectl explain team.spec');
      assert.match(explain.stdout, /KIND:\s+Team/);
      assert.match(explain.stdout, /displayName\s+<string>/);

      const denied = await kubectl(ALICE, ['create', '-f', '-'], toYaml(team('agg-kubectl-alice')));
      assert.notEqual(denied.code, 0, `alice's create should fail:\n${denied.stdout}`);
      assert.match(denied.stderr, /\(Forbidden\).*User "alice" cannot create resource "teams"/);

      ok(await kubectl(ADMIN, ['delete', 'team', 'agg-kubectl']), 'kubectl delete team');
    });
  });
