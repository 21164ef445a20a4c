// The status subresource as kubectl 1.32 and a plain HTTPS client use it, on each
// storage backend (through the watch cache, the server's default): discovery and
// OpenAPI list it, `kubectl get/patch --subresource=status` read and write status
// alone, and writes to the main resource leave status as stored. Debian's kubectl 1.20
// has no --subresource (1.24+): with it, status goes through `kubectl get --raw` and
// `kubectl replace --raw` (a PUT) on the same path.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import type { CommandResult } from './commands.js';
import { parseTable } from './kubectl-table.js';
import {
  backends,
  GROUP,
  GROUP_VERSION,
  kubectlMinorVersion,
  startServer,
  type TestServer,
} from './harness.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;
const NS = 'p-e2e-status';
const VCI_PATH = `${V1}/namespaces/${NS}/virtualclusterinstances/dev`;

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  subresource?: string;
}

interface Instance {
  metadata: {
    resourceVersion: string;
    generation: number;
    labels?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  spec: { displayName?: string };
  status?: { phase?: string; message?: string; virtualCluster?: unknown };
}

/** Polls `check` until it passes (controllers write off the request path); generous for busy machines. */
async function eventually(check: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function ok(r: CommandResult, what: string): void {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

const STATUS_KINDS = ['sharedsecrets', 'teams', 'users', 'ownedaccesskeys', 'virtualclusterinstances'];

for (const backend of backends()) {
  describe(`the status subresource on ${backend}`, () => {
    let s: TestServer;
    let kubectlMinor = 0;

    before(async () => {
      kubectlMinor = await kubectlMinorVersion();
      s = await startServer({ backend });
      const vci = {
        apiVersion: GROUP_VERSION,
        kind: 'VirtualClusterInstance',
        metadata: { name: 'dev', namespace: NS },
        spec: {
          displayName: 'Dev cluster',
          clusterRef: { cluster: 'east', namespace: 'vc-dev', virtualCluster: 'dev' },
          template: { accessPoint: { ingress: { enabled: true } } },
        },
      };
      ok(await s.kubectl(['create', '-f', '-'], { input: toYaml(vci) }), 'kubectl create');
    });
    after(async () => {
      await s?.stop();
    });

    async function read(): Promise<Instance> {
      const r = await s.api('GET', VCI_PATH);
      assert.equal(r.status, 200, r.text);
      return r.json<Instance>();
    }

    it(
      'discovery v1 and v2 and OpenAPI v3 list <resource>/status with get, patch and update',
      TEST,
      async () => {
        const v1 = (await s.api('GET', V1)).json<{
          resources: { name: string; kind: string; verbs: string[] }[];
        }>();
        for (const resource of STATUS_KINDS) {
          const entry = v1.resources.find((r) => r.name === `${resource}/status`);
          assert.ok(entry, `${resource}/status in /apis/${GROUP}/v1`);
          assert.deepEqual(entry.verbs, ['get', 'patch', 'update']);
        }
        const v2 = await s.api('GET', '/apis', undefined, {
          accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
        });
        const doc = v2.json<{
          items: {
            versions: {
              resources: {
                resource: string;
                subresources?: { subresource: string; responseKind: { kind: string } }[];
              }[];
            }[];
          }[];
        }>();
        const resources = doc.items[0]?.versions[0]?.resources ?? [];
        const vci = resources.find((r) => r.resource === 'virtualclusterinstances');
        const status = vci?.subresources?.find((sub) => sub.subresource === 'status');
        assert.equal(status?.responseKind.kind, 'VirtualClusterInstance');
        const openapi = (await s.api('GET', `/openapi/v3/apis/${GROUP}/v1`)).json<{
          paths: Record<string, Record<string, unknown>>;
        }>();
        const path = openapi.paths[`${V1}/namespaces/{namespace}/virtualclusterinstances/{name}/status`];
        assert.ok(path, 'the status path in OpenAPI v3');
        assert.ok(path['get'] && path['put'] && path['patch'], Object.keys(path).join(','));
      },
    );

    it(
      'kubectl patch --subresource=status writes status only; kubectl get --subresource=status reads it',
      TEST,
      async () => {
        const before = await read();
        if (kubectlMinor >= 24) {
          const patch = JSON.stringify({
            status: { phase: 'Ready', message: 'up' },
            spec: { displayName: 'ignored' },
          });
          const r = await s.kubectl([
            'patch',
            'virtualclusterinstances',
            'dev',
            '-n',
            NS,
            '--subresource=status',
            '--type=merge',
            '-p',
            patch,
          ]);
          ok(r, 'kubectl patch --subresource=status');
          assert.match(r.stdout, /virtualclusterinstance\.management\.platform\.dev\/dev patched/);
        } else {
          const got = await s.kubectl(['get', '--raw', `${VCI_PATH}/status`]);
          ok(got, 'kubectl get --raw .../status');
          const body = JSON.parse(got.stdout) as Instance;
          body.status = { ...body.status, phase: 'Ready', message: 'up' };
          body.spec = { ...body.spec, displayName: 'ignored' };
          const r = await s.kubectl(['replace', '--raw', `${VCI_PATH}/status`, '-f', '-'], {
            input: JSON.stringify(body),
          });
          ok(r, 'kubectl replace --raw .../status');
        }
        const after = await read();
        assert.equal(after.status?.phase, 'Ready');
        assert.equal(after.status?.message, 'up');
        // The server's own part of status is kept: status.virtualCluster mirrors spec.template.
        assert.deepEqual(after.status?.virtualCluster, { accessPoint: { ingress: { enabled: true } } });
        assert.equal(after.spec.displayName, 'Dev cluster', 'spec is not written through /status');
        assert.equal(
          after.metadata.generation,
          before.metadata.generation,
          'status is not the desired state',
        );
        // kubectl names itself kubectl-patch; a raw request gets its user agent's first word.
        const manager = kubectlMinor >= 24 ? 'kubectl-patch' : 'kubectl';
        const entry = after.metadata.managedFields?.find((e) => e.manager === manager);
        assert.equal(entry?.subresource, 'status', JSON.stringify(after.metadata.managedFields));

        const getStatus = (...flags: string[]): Promise<CommandResult> =>
          s.kubectl(['get', 'virtualclusterinstances', 'dev', '-n', NS, '--subresource=status', ...flags]);
        if (kubectlMinor >= 24) {
          const got = await getStatus('-o', 'jsonpath={.status.phase}');
          ok(got, 'kubectl get --subresource=status');
          assert.equal(got.stdout.trim(), 'Ready');
        } else {
          const got = await s.kubectl(['get', '--raw', `${VCI_PATH}/status`]);
          ok(got, 'kubectl get --raw .../status');
          assert.equal((JSON.parse(got.stdout) as Instance).status?.phase, 'Ready');
        }
        if (kubectlMinor >= 27) {
          // The subresource answers tables like the resource (kubectl asks for one).
          const table = await getStatus();
          ok(table, 'kubectl get --subresource=status (table)');
          const row = parseTable(table.stdout).rows.find((x) => x['NAME'] === 'dev');
          assert.equal(row?.['DISPLAY NAME'], 'Dev cluster', table.stdout);
        }
      },
    );

    it('writes to the main resource keep the stored status', TEST, async () => {
      const r = await s.kubectl([
        'patch',
        'virtualclusterinstances',
        'dev',
        '-n',
        NS,
        '--type=merge',
        '-p',
        JSON.stringify({ status: { phase: 'Hacked' }, metadata: { labels: { tier: 'dev' } } }),
      ]);
      ok(r, 'kubectl patch');
      const after = await read();
      assert.equal(after.metadata.labels?.['tier'], 'dev');
      assert.equal(after.status?.phase, 'Ready');
    });

    it(
      'PUT to /status replaces status and ignores the rest; a stale resourceVersion is a 409',
      TEST,
      async () => {
        const current = await read();
        const body = structuredClone(current) as unknown as Record<string, unknown> & Instance;
        body.status = { phase: 'Failed', message: 'down' };
        body.spec = { ...current.spec, displayName: 'not through status' };
        body.metadata.labels = { tier: 'prod' };
        const put = await s.api('PUT', `${VCI_PATH}/status`, body);
        assert.equal(put.status, 200, put.text);
        const after = await read();
        assert.equal(after.status?.phase, 'Failed');
        assert.equal(after.spec.displayName, 'Dev cluster');
        assert.equal(after.metadata.labels?.['tier'], 'dev');
        const stale = await s.api('PUT', `${VCI_PATH}/status`, body);
        assert.equal(stale.status, 409, stale.text);
        const missing = await s.api('PUT', `${V1}/namespaces/${NS}/virtualclusterinstances/nope/status`, {
          ...body,
          metadata: { name: 'nope', namespace: NS, resourceVersion: '1' },
        });
        assert.equal(missing.status, 404, missing.text);
        assert.match(missing.text, /virtualclusterinstances\.management\.platform\.dev \\"nope\\" not found/);
      },
    );

    it('a status patch that changes nothing writes nothing', TEST, async () => {
      const current = await read();
      const r = await s.api(
        'PATCH',
        `${VCI_PATH}/status`,
        { status: { phase: current.status?.phase } },
        {
          'content-type': 'application/merge-patch+json',
        },
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json<Instance>().metadata.resourceVersion, current.metadata.resourceVersion);
    });

    it('the server’s own status writers write through /status under their own names', TEST, async () => {
      const user = {
        apiVersion: GROUP_VERSION,
        kind: 'User',
        metadata: { name: 'st-user' },
        spec: { username: 'st-user' },
      };
      assert.equal((await s.api('POST', `${V1}/users`, user)).status, 201);
      const teamObj = {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { name: 'st-team' },
        spec: { users: ['st-user'] },
      };
      assert.equal((await s.api('POST', `${V1}/teams`, teamObj)).status, 201);
      interface Entry {
        manager: string;
        subresource?: string;
      }
      interface WithStatus {
        metadata: { managedFields?: Entry[] };
        status?: { teams?: string[]; lastActivity?: string };
      }
      const byWriter = (obj: WithStatus, manager: string): Entry | undefined =>
        obj.metadata.managedFields?.find((e) => e.manager === manager);
      // User.status.teams, kept by the team-status controller.
      await eventually(async () => {
        const got = (await s.api('GET', `${V1}/users/st-user`)).json<WithStatus>();
        assert.deepEqual(got.status?.teams, ['st-team']);
        assert.equal(byWriter(got, 'platform-team-status')?.subresource, 'status');
      });
      // The admin's key records its use: every request of this test uses it.
      await eventually(async () => {
        const keys = (await s.api('GET', `${V1}/ownedaccesskeys`)).json<{ items: WithStatus[] }>();
        const used = keys.items.find((k) => k.status?.lastActivity !== undefined);
        assert.ok(used, 'a key with status.lastActivity');
        assert.equal(byWriter(used, 'platform-access-key-activity')?.subresource, 'status');
      });
    });

    it('POST and DELETE on /status are 405 as upstream', TEST, async () => {
      const r = await s.api('DELETE', `${VCI_PATH}/status`);
      assert.equal(r.status, 405, r.text);
    });
  });
}
