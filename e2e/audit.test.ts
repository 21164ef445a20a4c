// The audit trail as an operator meets it, on each backend: a server started with a policy, a log file and a webhook
// (a real HTTPS receiver with its own CA and a bearer token) is driven with kubectl
// and raw requests; the log holds one audit.k8s.io/v1 Event a line with the IDs,
// stages, users, references and levels upstream writes, the webhook receives the same
// events as EventLists, and no secret value ever reaches either, at RequestResponse.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';

import { createAccessKey } from './access-keys.js';
import { eventually } from './eventually.js';
import { backends, GROUP, GROUP_VERSION, startServer, type TestServer } from './harness.js';
import { apiRequest } from './https-client.js';
import type { Event, EventList } from '../pkg/audit/types.js';
import { issueServingCertificate, newCertificateAuthority } from '../pkg/hostcluster/testing/pki.js';

const TEST = { timeout: 180_000 };
const V1 = `/apis/${GROUP_VERSION}`;
const ACCESS_KEY_EXTRA = `${GROUP}/access-key`;
const WEBHOOK_TOKEN = `hook-${randomBytes(8).toString('hex')}`;

/** Everything at RequestResponse but the probes the harness polls. */
const POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  rules: [
    { level: 'None', nonResourceURLs: ['/readyz*', '/healthz*', '/livez*'] },
    { level: 'Metadata', verbs: ['get'], nonResourceURLs: ['/version'] },
    { level: 'RequestResponse' },
  ],
};

/** A webhook receiver: what arrived, and the Authorization headers it came with. */
interface Receiver {
  readonly server: Server;
  readonly url: string;
  readonly ca: string;
  readonly bodies: string[];
  readonly authorizations: (string | undefined)[];
}

async function startReceiver(): Promise<Receiver> {
  const ca = newCertificateAuthority('audit-webhook-ca');
  const serving = issueServingCertificate(ca, { ipAddresses: ['127.0.0.1'] });
  const bodies: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      authorizations.push(req.headers.authorization);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `https://127.0.0.1:${port}/audit`, ca: ca.certPem, bodies, authorizations };
}

function webhookKubeconfig(receiver: Receiver): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'audit',
        cluster: {
          server: receiver.url,
          'certificate-authority-data': Buffer.from(receiver.ca).toString('base64'),
        },
      },
    ],
    users: [{ name: 'apiserver', user: { token: WEBHOOK_TOKEN } }],
    contexts: [{ name: 'audit', context: { cluster: 'audit', user: 'apiserver' } }],
    'current-context': 'audit',
  });
}

function readEvents(file: string): Event[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

for (const backend of backends()) {
  describe(`audit (${backend})`, () => {
    let s: TestServer;
    let receiver: Receiver;
    let workDir = '';
    let logFile = '';
    const events = (): Event[] => readEvents(logFile);
    const byID = (id: string): Event[] => events().filter((e) => e.auditID === id);

    before(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'audit-e2e-'));
      receiver = await startReceiver();
      const policyFile = join(workDir, 'policy.yaml');
      writeFileSync(policyFile, toYaml(POLICY));
      const hookConfig = join(workDir, 'webhook.kubeconfig');
      writeFileSync(hookConfig, webhookKubeconfig(receiver));
      logFile = join(workDir, 'log', 'audit.log');
      s = await startServer({
        backend,
        args: [
          '--audit-policy-file',
          policyFile,
          '--audit-log-path',
          logFile,
          '--audit-webhook-config-file',
          hookConfig,
          '--audit-webhook-batch-max-wait',
          '500ms',
          '--audit-webhook-initial-backoff',
          '100ms',
        ],
      });
    });

    after(async () => {
      await s?.stop();
      await new Promise((resolve) => receiver?.server.close(resolve));
      rmSync(workDir, { recursive: true, force: true });
    });

    it(
      'writes RequestReceived and ResponseComplete for a kubectl create, with ids, user and objectRef',
      TEST,
      async () => {
        const r = await s.kubectl(['create', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: GROUP_VERSION,
            kind: 'Team',
            metadata: { name: 'audited' },
            spec: {},
          }),
        });
        assert.equal(r.code, 0, r.stderr);
        const create = events().filter((e) => e.verb === 'create' && e.objectRef?.resource === 'teams');
        assert.deepEqual(
          create.map((e) => e.stage),
          ['RequestReceived', 'ResponseComplete'],
        );
        const [received, complete] = create as [Event, Event];
        assert.equal(received.auditID, complete.auditID);
        assert.match(received.auditID, /^[0-9a-f-]{36}$/);
        assert.equal(complete.level, 'RequestResponse');
        assert.equal(complete.requestURI.split('?')[0], `/kubernetes/management${V1}/teams`);
        assert.equal(complete.user.username, 'admin');
        assert.ok(complete.user.extra?.[ACCESS_KEY_EXTRA]?.[0], 'the access key is named in extra');
        assert.deepEqual(complete.sourceIPs, ['127.0.0.1']);
        assert.match(complete.userAgent ?? '', /^kubectl/);
        assert.deepEqual(complete.objectRef, {
          resource: 'teams',
          name: 'audited',
          apiGroup: GROUP,
          apiVersion: 'v1',
        });
        assert.deepEqual(complete.responseStatus, { metadata: {}, code: 201 });
        assert.equal((complete.requestObject as { metadata: { name: string } }).metadata.name, 'audited');
        assert.ok((complete.responseObject as { metadata: { uid: string } }).metadata.uid);
        assert.equal(complete.annotations?.['authorization.k8s.io/decision'], 'allow');
        assert.equal(received.requestReceivedTimestamp, received.stageTimestamp);
        assert.match(complete.stageTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
        assert.equal(received.requestObject, undefined, 'the body is read after RequestReceived');
      },
    );

    it('echoes an incoming Audit-ID, and gives every response one', TEST, async () => {
      const r = await s.api('GET', `${V1}/teams/audited`, undefined, { 'Audit-ID': 'operator-chosen-id' });
      assert.equal(r.status, 200);
      assert.equal(r.headers['audit-id'], 'operator-chosen-id');
      const get = byID('operator-chosen-id');
      assert.deepEqual(
        get.map((e) => [e.stage, e.verb]),
        [
          ['RequestReceived', 'get'],
          ['ResponseComplete', 'get'],
        ],
      );
      const missing = await s.api('GET', `${V1}/teams/nobody`);
      assert.equal(missing.status, 404);
      const id = missing.headers['audit-id'];
      assert.match(String(id), /^[0-9a-f-]{36}$/);
      const complete = byID(String(id)).find((e) => e.stage === 'ResponseComplete');
      assert.deepEqual(complete?.responseStatus, {
        metadata: {},
        status: 'Failure',
        message: `teams.${GROUP} "nobody" not found`,
        reason: 'NotFound',
        details: { name: 'nobody', group: GROUP, kind: 'teams' },
        code: 404,
      });
      // Probes are not audited by this policy, but still carry an ID; /version is, at Metadata.
      const ready = await apiRequest({ baseUrl: s.url, ca: s.ca, token: '' }, 'GET', '/readyz');
      assert.match(String(ready.headers['audit-id']), /^[0-9a-f-]{36}$/);
      assert.equal(byID(String(ready.headers['audit-id'])).length, 0);
      const version = await apiRequest({ baseUrl: s.url, ca: s.ca, token: '' }, 'GET', '/version');
      const versionEvents = byID(String(version.headers['audit-id']));
      assert.deepEqual(
        versionEvents.map((e) => [e.stage, e.level, e.verb, e.user.username]),
        [
          ['RequestReceived', 'Metadata', 'get', 'system:anonymous'],
          ['ResponseComplete', 'Metadata', 'get', 'system:anonymous'],
        ],
      );
      assert.equal(versionEvents[1]?.objectRef, undefined);
    });

    it('audits a failed authentication as one ResponseStarted event with an empty user', TEST, async () => {
      const r = await apiRequest({ baseUrl: s.apiBase, ca: s.ca, token: 'not-a-key' }, 'GET', `${V1}/teams`);
      assert.equal(r.status, 401);
      const got = byID(String(r.headers['audit-id']));
      assert.equal(got.length, 1);
      assert.equal(got[0]?.stage, 'ResponseStarted');
      assert.deepEqual(got[0]?.user, {});
      assert.deepEqual(got[0]?.responseStatus, {
        metadata: {},
        message: 'Authentication failed, attempted: bearer',
        code: 401,
      });
      assert.ok(!JSON.stringify(got).includes('not-a-key'));
    });

    it('notes a denial in the annotations, with the user of the key', TEST, async () => {
      const user = await s.api('POST', `${V1}/users`, {
        apiVersion: GROUP_VERSION,
        kind: 'User',
        metadata: { name: 'audit-bob' },
        spec: {},
      });
      assert.equal(user.status, 201, user.text);
      const key = await createAccessKey(s, 'audit-bob-key', { user: 'audit-bob' });
      // Bob may not delete a team. The new key reaches the authenticator through its watch.
      let r = await apiRequest({ baseUrl: s.apiBase, ca: s.ca, token: key }, 'DELETE', `${V1}/teams/audited`);
      await eventually(async () => {
        r = await apiRequest({ baseUrl: s.apiBase, ca: s.ca, token: key }, 'DELETE', `${V1}/teams/audited`);
        assert.equal(r.status, 403, r.text);
      });
      const complete = byID(String(r.headers['audit-id'])).find((e) => e.stage === 'ResponseComplete');
      assert.equal(complete?.annotations?.['authorization.k8s.io/decision'], 'forbid');
      assert.equal(complete?.user.username, 'audit-bob');
      assert.deepEqual(complete?.user.extra?.[ACCESS_KEY_EXTRA], ['audit-bob-key']);
      assert.equal(complete?.responseStatus?.reason, 'Forbidden');
      assert.equal(complete?.responseStatus?.code, 403);
      assert.ok(!readFileSync(logFile, 'utf8').includes(key), 'the key never reaches the log');
    });

    it('writes ResponseStarted for a watch, then ResponseComplete when it ends', TEST, async () => {
      const r = await s.api('GET', `${V1}/teams?watch=true&timeoutSeconds=1`);
      assert.equal(r.status, 200);
      const id = String(r.headers['audit-id']);
      await eventually(async () => {
        assert.deepEqual(
          byID(id).map((e) => [e.stage, e.verb]),
          [
            ['RequestReceived', 'watch'],
            ['ResponseStarted', 'watch'],
            ['ResponseComplete', 'watch'],
          ],
        );
      });
    });

    it('sends the same events to the webhook as EventLists, with its credentials', TEST, async () => {
      await eventually(async () => {
        const lists = receiver.bodies.map((b) => JSON.parse(b) as EventList);
        assert.ok(lists.length > 0, 'no batch arrived');
        for (const list of lists) {
          assert.equal(list.kind, 'EventList');
          assert.equal(list.apiVersion, 'audit.k8s.io/v1');
        }
        const ids = new Set(lists.flatMap((l) => l.items.map((e) => `${e.auditID}/${e.stage}`)));
        assert.ok(ids.has(`operator-chosen-id/ResponseComplete`), 'the get reached the webhook');
      }, 20_000);
      assert.ok(receiver.authorizations.every((a) => a === `Bearer ${WEBHOOK_TOKEN}`));
    });

    it('never writes a secret value to the log or the webhook, whatever the verb', TEST, async () => {
      const plain = `s3cr3t-${randomBytes(6).toString('hex')}`;
      const encoded = Buffer.from(plain).toString('base64');
      const patched = Buffer.from(`${plain}-patched`).toString('base64');
      const jsonPatched = Buffer.from(`${plain}-json`).toString('base64');
      const applied = Buffer.from(`${plain}-applied`).toString('base64');
      const secret = (data: Record<string, string>) =>
        JSON.stringify({
          apiVersion: GROUP_VERSION,
          kind: 'SharedSecret',
          metadata: { name: 'db', namespace: 'default' },
          spec: { data },
        });
      const ok = (r: { code: number | null; stderr: string }, what: string) =>
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      ok(await s.kubectl(['create', '-f', '-'], { input: secret({ password: encoded }) }), 'create');
      ok(await s.kubectl(['get', 'sharedsecrets', '-A', '-o', 'json']), 'list');
      ok(await s.kubectl(['get', 'sharedsecret', 'db', '-o', 'yaml']), 'get');
      const patch = async (type: string, body: unknown): Promise<void> =>
        ok(
          await s.kubectl(['patch', 'sharedsecret', 'db', '--type', type, '-p', JSON.stringify(body)]),
          `${type} patch`,
        );
      await patch('merge', { spec: { data: { password: patched } } });
      await patch('json', [{ op: 'replace', path: '/spec/data/password', value: jsonPatched }]);
      ok(
        await s.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
          input: secret({ password: applied }),
        }),
        'apply',
      );
      // Refused writes: their Status (copied to the audit event) names no value sent.
      const typo = Buffer.from(`${plain}-typo`).toString('base64');
      const typoApply = await s.kubectl(['apply', '--server-side', '-f', '-'], {
        input: JSON.stringify({ ...JSON.parse(secret({})), spec: { dataa: { password: typo } } }),
      });
      assert.match(typoApply.stderr, /\.spec\.dataa: field not declared in schema/);
      const typoMerge = await s.api(
        'PATCH',
        `${V1}/namespaces/default/sharedsecrets/db?fieldValidation=Strict`,
        JSON.stringify({ spec: { dataa: { password: typo } } }),
        { 'content-type': 'application/merge-patch+json' },
      );
      assert.equal(typoMerge.status, 422, typoMerge.text);
      assert.match(typoMerge.text, /strict decoding error: unknown field \\"spec\.dataa\\"/);
      for (const text of [typoApply.stderr, typoMerge.text]) assert.ok(!text.includes(typo), text);
      const current = await s.kubectl(['get', 'sharedsecret', 'db', '-o', 'json']);
      ok(current, 'get for replace');
      ok(await s.kubectl(['replace', '-f', '-'], { input: current.stdout }), 'replace');
      const watch = await s.api('GET', `${V1}/namespaces/default/sharedsecrets?watch=true&timeoutSeconds=1`);
      assert.equal(watch.status, 200);
      ok(await s.kubectl(['delete', 'sharedsecret', 'db']), 'delete');

      // A key, created plain and returned once; and a token.
      const key = await createAccessKey(s, 'audit-secret-key', { user: 'admin' });
      const token = await s.api('POST', `${V1}/directclusterendpointtokens`, {
        apiVersion: GROUP_VERSION,
        kind: 'DirectClusterEndpointToken',
        spec: { ttl: 600 },
      });
      assert.equal(token.status, 201, token.text);
      const jwt = token.json<{ status: { token: string } }>().status.token;
      ok(await s.kubectl(['get', 'ownedaccesskeys', '-o', 'json']), 'list keys');

      const forbidden = [plain, encoded, patched, jsonPatched, applied, key, jwt, s.token];
      await eventually(async () => {
        const webhook = receiver.bodies.join('\n');
        assert.ok(webhook.includes('"directclusterendpointtokens"'), 'the last writes reached the webhook');
      }, 20_000);
      const log = readFileSync(logFile, 'utf8');
      const webhook = receiver.bodies.join('\n');
      for (const value of forbidden) {
        assert.ok(!log.includes(value), `the audit log holds a secret (${value.slice(0, 6)}...)`);
        assert.ok(!webhook.includes(value), `the webhook got a secret (${value.slice(0, 6)}...)`);
      }
      // The refused writes' Status, copied into their events, names neither value.
      // (Their requestObject still holds a value sent under a mistyped field: the
      // redaction knows the kinds' secret fields only.)
      const statuses = JSON.stringify(events().map((e) => e.responseStatus));
      assert.match(statuses, /field not declared in schema/);
      assert.match(statuses, /strict decoding error/);
      assert.ok(!statuses.includes(typo), 'a refused write echoed its body into responseStatus');
      // And the writes were audited, with their keys and the marker.
      const writes = events().filter(
        (e) => e.objectRef?.resource === 'sharedsecrets' && e.stage === 'ResponseComplete',
      );
      assert.deepEqual([...new Set(writes.map((e) => e.verb))].sort(), [
        'create',
        'delete',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]);
      const jsonPatch = writes.find((e) => e.verb === 'patch' && Array.isArray(e.requestObject));
      assert.deepEqual(jsonPatch?.requestObject, [
        { op: 'replace', path: '/spec/data/password', value: '<redacted>' },
      ]);
      const create = writes.find((e) => e.verb === 'create');
      assert.deepEqual((create?.responseObject as { spec: { data: unknown } }).spec.data, {
        password: '<redacted>',
      });
    });
  });
}
