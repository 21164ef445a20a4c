import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { isApiError } from '../../../apis/meta/errors.js';
import { isObject, type KubeObject, type Table } from '../../../apis/meta/types.js';
import { compileSchema } from '../../../apis/schema/compile.js';
import { SqliteKV } from '../../../storage/sqlite/index.js';
import { KVStorage } from '../../../storage/store.js';
import { Store } from '../../generic/store.js';
import type { CreateOptions, RequestContext } from '../../rest/interfaces.js';
import { ingressEnabled, ingressHost, projectOfNamespace } from './access-point.js';
import { virtualClusterInstanceStrategy } from './strategy.js';

const GROUP = 'management.platform.dev';
const WRITE: CreateOptions = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' };

function ctx(namespace: string): RequestContext {
  return { user: { name: 'admin', groups: ['system:authenticated'] }, namespace, warnings: [] };
}

function instance(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { apiVersion: `${GROUP}/v1`, kind: 'VirtualClusterInstance', metadata: { name }, spec, ...extra };
}

function statusOf(obj: KubeObject): Record<string, unknown> {
  return isObject(obj['status']) ? obj['status'] : {};
}

async function failure(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isApiError(err), String(err));
    return { code: err.code, message: err.message };
  }
  assert.fail('expected the request to fail');
}

describe('VirtualClusterInstance', () => {
  let storage: KVStorage;
  let store: Store;

  before(() => {
    storage = new KVStorage(SqliteKV.open(':memory:'));
    store = new Store({
      strategy: virtualClusterInstanceStrategy(GROUP, { projectNamespacePrefix: 'p-' }),
      storage,
      keyPrefix: '/registry',
      compileSchema,
    });
  });
  after(async () => {
    await storage.close();
  });

  it('is created in a project namespace with the upstream fields, and mirrors the template in status', async () => {
    const spec = {
      displayName: 'Dev cluster',
      description: 'For the dev team',
      owner: { team: 'dev' },
      templateRef: { name: 'default', version: '1.0.0' },
      template: {
        metadata: { labels: { tier: 'dev' } },
        helmRelease: { chart: { name: 'vcluster', version: '0.20.0' }, values: 'sync: {}' },
        accessPoint: { ingress: { enabled: true } },
      },
      clusterRef: { cluster: 'host-cluster', namespace: 'vc-dev', virtualCluster: 'dev' },
      parameters: 'size: small',
      extraAccessRules: [{ users: ['alice'], clusterRole: 'cluster-admin' }],
      access: [{ verbs: ['get'], users: ['bob'] }],
      networkPeer: true,
    };
    const created = await store.create(
      ctx('p-default'),
      instance('dev', spec, { status: { phase: 'Hacked', virtualCluster: { forwardToken: true } } }),
      WRITE,
    );
    assert.deepEqual(created['spec'], spec);
    assert.deepEqual(statusOf(created), { virtualCluster: spec.template });
    assert.ok(ingressEnabled(created));

    const read = await store.get(ctx('p-default'), 'dev', {});
    assert.deepEqual((statusOf(read)['virtualCluster'] as { accessPoint: unknown }).accessPoint, {
      ingress: { enabled: true },
    });
  });

  it('follows spec.template.accessPoint.ingress.enabled in status on update and patch', async () => {
    await store.create(
      ctx('p-default'),
      instance('web', { template: { accessPoint: { ingress: { enabled: false } } } }),
      WRITE,
    );
    const on = await store.patch(
      ctx('p-default'),
      'web',
      'merge',
      { spec: { template: { accessPoint: { ingress: { enabled: true } } } } },
      WRITE,
    );
    assert.equal(ingressEnabled(on.object), true);
    const current = await store.get(ctx('p-default'), 'web', {});
    const body = structuredClone(current) as KubeObject & { spec: { template?: unknown } };
    delete body.spec.template;
    const off = await store.update(ctx('p-default'), 'web', body, WRITE);
    assert.equal(ingressEnabled(off.object), false);
    assert.equal(statusOf(off.object)['virtualCluster'], undefined);
  });

  it('refuses a namespace that is not a project’s, and bad access rules and hosts', async () => {
    const outside = await failure(store.create(ctx('default'), instance('x', {}), WRITE));
    assert.equal(outside.code, 422);
    assert.match(
      outside.message,
      /metadata\.namespace: Invalid value: "default": must be the namespace of a project: p-<project name>/,
    );

    const bad = await failure(
      store.create(
        ctx('p-a'),
        instance('y', {
          owner: { user: 'a', team: 'b' },
          access: [{ verbs: [] }],
          extraAccessRules: [{ users: [''] }],
          template: { accessPoint: { ingress: { enabled: true, host: 'Not A Host' } } },
        }),
        WRITE,
      ),
    );
    assert.equal(bad.code, 422);
    for (const field of [
      'spec.owner.team',
      'spec.access[0].verbs',
      'spec.extraAccessRules[0].clusterRole',
      'spec.extraAccessRules[0].users[0]',
      'spec.template.accessPoint.ingress.host',
    ]) {
      assert.ok(bad.message.includes(field), `${field} in ${bad.message}`);
    }
  });

  it('lists across namespaces with project, cluster and ingress columns', async () => {
    await store.create(
      ctx('p-other'),
      instance('ops', {
        clusterRef: { cluster: 'east' },
        template: { accessPoint: { ingress: { enabled: true } } },
      }),
      WRITE,
    );
    const list = await store.list(ctx(''), {});
    const table = store.convertToTable(ctx(''), list, 'None') as Table;
    const names = table.columnDefinitions.map((c) => c.name);
    assert.deepEqual(names.slice(0, 5), ['Name', 'Display Name', 'Project', 'Cluster', 'Namespace']);
    const ops = table.rows.find((r) => r.cells[0] === 'ops');
    assert.deepEqual(ops?.cells.slice(0, 4), ['ops', '', 'other', 'east']);
    assert.equal(ops?.cells[names.indexOf('Ingress')], true);
  });
});

describe('access point helpers', () => {
  const obj = (namespace: string, ingress: Record<string, unknown>): KubeObject => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'VirtualClusterInstance',
    metadata: { name: 'dev', namespace },
    spec: { template: { accessPoint: { ingress } } },
  });

  it('derives the project from the namespace prefix', () => {
    assert.equal(projectOfNamespace('p-web', 'p-'), 'web');
    assert.equal(projectOfNamespace('project-web', 'project-'), 'web');
    assert.equal(projectOfNamespace('p-', 'p-'), undefined);
    assert.equal(projectOfNamespace('default', 'p-'), undefined);
  });

  it('builds the ingress host as <name>-<project>.<suffix> unless the instance names one', () => {
    const options = { projectNamespacePrefix: 'p-', ingressSuffix: 'vc.example.com' };
    assert.equal(ingressHost(obj('p-web', { enabled: true }), options), 'dev-web.vc.example.com');
    assert.equal(
      ingressHost(obj('p-web', { enabled: true, host: 'dev.example.org' }), options),
      'dev.example.org',
    );
    assert.equal(ingressHost(obj('p-web', { enabled: true }), { ...options, ingressSuffix: '' }), undefined);
  });
});
