import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { managementKinds } from '../../registry/management/kinds.js';
import { isObject } from '../../apis/meta/types.js';
import type { RESTStorage, SubresourceStorage } from '../../registry/rest/interfaces.js';
import * as discovery from '../discovery/discovery.js';
import { openAPIV2, openAPIV3GroupVersion, openAPIV3Root, specHash } from './index.js';

const GROUP = 'management.platform.dev';
const GV = `apis/${GROUP}/v1`;
type Doc = Record<string, unknown>;

function resources(): RESTStorage[] {
  const kubeconfig: SubresourceStorage = {
    info: { name: 'kubeconfig', kind: 'VirtualClusterInstanceKubeConfig', verbs: ['create'] },
  };
  return managementKinds(GROUP).map((k) =>
    k.info.resource === 'virtualclusterinstances'
      ? { info: k.info, schema: k.schema, subresources: new Map([['kubeconfig', kubeconfig]]) }
      : { info: k.info, schema: k.schema },
  );
}

function obj(value: unknown): Doc {
  assert.ok(isObject(value), `expected an object, got ${JSON.stringify(value)}`);
  return value;
}

function at(doc: unknown, ...keys: string[]): unknown {
  let node: unknown = doc;
  for (const k of keys) node = isObject(node) ? node[k] : undefined;
  return node;
}

/** Field-wise, as Go's reflect.DeepEqual compares the decoded maps. */
function sameGVK(a: unknown, b: unknown): boolean {
  return (
    isObject(a) &&
    isObject(b) &&
    Object.keys(a).length === 3 &&
    Object.keys(b).length === 3 &&
    ['group', 'version', 'kind'].every((k) => a[k] === b[k])
  );
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** kubectl explain's search (checklist §1.5): a GVK from an operation on one of four paths, then a schema carrying it. */
function explainLookup(doc: Doc, resource: string): Doc | undefined {
  const prefix = `/${GV}`;
  const candidates = [
    `${prefix}/${resource}`,
    `${prefix}/${resource}/{name}`,
    `${prefix}/namespaces/{namespace}/${resource}`,
    `${prefix}/namespaces/{namespace}/${resource}/{name}`,
  ];
  let gvk: unknown;
  search: for (const p of candidates) {
    for (const m of METHODS) {
      const found = at(doc, 'paths', p, m, 'x-kubernetes-group-version-kind');
      if (found !== undefined) {
        gvk = found;
        break search;
      }
    }
  }
  if (gvk === undefined) return undefined;
  for (const schema of Object.values(obj(at(doc, 'components', 'schemas')))) {
    const list = at(schema, 'x-kubernetes-group-version-kind');
    if (Array.isArray(list) && list.some((g) => sameGVK(g, gvk))) return obj(schema);
  }
  return undefined;
}

describe('openAPIV3Root', () => {
  it('points kubectl at the group version document, pinned by hash', () => {
    assert.deepEqual(openAPIV3Root([{ groupVersion: `${GROUP}/v1`, hash: 'ABC123' }]), {
      paths: { [GV]: { serverRelativeURL: `/openapi/v3/${GV}?hash=ABC123` } },
    });
    assert.match(specHash('{}'), /^[0-9A-F]{128}$/);
  });
});

describe('openAPIV3GroupVersion', () => {
  const doc = openAPIV3GroupVersion(GROUP, 'v1', resources());
  const paths = obj(doc['paths']);

  it('is an OpenAPI 3 document with the collection, item and subresource paths', () => {
    assert.equal(doc['openapi'], '3.0.0');
    assert.deepEqual(Object.keys(paths).sort(), [
      `/${GV}/namespaces/{namespace}/sharedsecrets`,
      `/${GV}/namespaces/{namespace}/sharedsecrets/{name}`,
      `/${GV}/namespaces/{namespace}/virtualclusterinstances`,
      `/${GV}/namespaces/{namespace}/virtualclusterinstances/{name}`,
      `/${GV}/namespaces/{namespace}/virtualclusterinstances/{name}/kubeconfig`,
      `/${GV}/ownedaccesskeys`,
      `/${GV}/ownedaccesskeys/{name}`,
      `/${GV}/sharedsecrets`,
      `/${GV}/teams`,
      `/${GV}/teams/{name}`,
      `/${GV}/users`,
      `/${GV}/users/{name}`,
      `/${GV}/virtualclusterinstances`,
    ]);
  });

  it('gives every operation an id, an action and its group-version-kind', () => {
    const ids = new Set<string>();
    for (const [p, item] of Object.entries(paths)) {
      for (const m of METHODS) {
        const op = at(item, m);
        if (op === undefined) continue;
        const id = at(op, 'operationId');
        assert.equal(typeof id, 'string', `${m} ${p}`);
        assert.ok(!ids.has(id as string), `duplicate operationId ${String(id)}`);
        ids.add(id as string);
        assert.equal(typeof at(op, 'x-kubernetes-action'), 'string');
        const gvk = obj(at(op, 'x-kubernetes-group-version-kind'));
        assert.deepEqual(Object.keys(gvk).sort(), ['group', 'kind', 'version']);
      }
    }
    assert.equal(
      at(paths, `/${GV}/sharedsecrets`, 'get', 'operationId'),
      'listManagementPlatformDevV1SharedSecretForAllNamespaces',
    );
    assert.equal(
      at(paths, `/${GV}/namespaces/{namespace}/sharedsecrets`, 'delete', 'operationId'),
      'deleteManagementPlatformDevV1CollectionNamespacedSharedSecret',
    );
    assert.equal(at(paths, `/${GV}/users/{name}`, 'get', 'operationId'), 'readManagementPlatformDevV1User');
    assert.deepEqual(
      at(
        paths,
        `/${GV}/namespaces/{namespace}/virtualclusterinstances/{name}/kubeconfig`,
        'post',
        'x-kubernetes-group-version-kind',
      ),
      {
        group: GROUP,
        version: 'v1',
        kind: 'VirtualClusterInstanceKubeConfig',
      },
    );
  });

  it('offers PATCH as JSON patch, merge patch and apply patch, with fieldValidation and force (kubectl apply then merge-patches)', () => {
    let patches = 0;
    for (const item of Object.values(paths)) {
      const op = at(item, 'patch');
      if (op === undefined) continue;
      patches++;
      assert.deepEqual(Object.keys(obj(at(op, 'requestBody', 'content'))).sort(), [
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ]);
      const params = at(op, 'parameters') as Doc[];
      assert.ok(params.some((p) => p['name'] === 'fieldValidation' && p['in'] === 'query'));
      assert.ok(params.some((p) => p['name'] === 'force' && p['in'] === 'query'));
    }
    assert.equal(patches, 5);
    assert.ok(!JSON.stringify(doc).includes('strategic-merge-patch'));
  });

  it('lists and watches through the collection with every list parameter', () => {
    const op = at(paths, `/${GV}/teams`, 'get');
    const names = (at(op, 'parameters') as Doc[]).map((p) => p['name']);
    for (const n of [
      'labelSelector',
      'fieldSelector',
      'limit',
      'continue',
      'resourceVersion',
      'resourceVersionMatch',
      'watch',
      'allowWatchBookmarks',
      'sendInitialEvents',
      'timeoutSeconds',
    ]) {
      assert.ok(names.includes(n), n);
    }
    assert.equal(at(op, 'x-kubernetes-action'), 'list');
    assert.deepEqual(at(op, 'responses', '200', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/dev.platform.management.v1.TeamList',
    });
    const del = (at(paths, `/${GV}/teams/{name}`, 'delete', 'parameters') as Doc[]).map((p) => p['name']);
    for (const n of ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']) assert.ok(del.includes(n), n);
    const create = (at(paths, `/${GV}/teams`, 'post', 'parameters') as Doc[]).map((p) => p['name']);
    assert.deepEqual(create, ['dryRun', 'fieldManager', 'fieldValidation']);
  });

  it('lets kubectl explain find every kind and its fields', () => {
    for (const k of managementKinds(GROUP)) {
      const schema = explainLookup(doc, k.info.resource);
      assert.ok(schema, `${k.info.resource} not found the way kubectl explain looks`);
      assert.equal(typeof at(schema, 'properties', 'spec', 'description'), 'string');
      assert.deepEqual(at(schema, 'properties', 'metadata', 'allOf'), [
        { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
      ]);
    }
    const ss = explainLookup(doc, 'sharedsecrets');
    assert.deepEqual(
      at(ss, 'properties', 'spec', 'properties', 'data', 'additionalProperties', 'format'),
      'byte',
    );
  });

  it('defines the lists and the meta types the operations refer to', () => {
    const schemas = obj(at(doc, 'components', 'schemas'));
    for (const name of [
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
      'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
      'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
      'dev.platform.management.v1.UserList',
      'dev.platform.management.v1.VirtualClusterInstanceKubeConfig',
    ]) {
      assert.ok(schemas[name], name);
    }
    assert.deepEqual(at(schemas, 'dev.platform.management.v1.UserList', 'x-kubernetes-group-version-kind'), [
      { group: GROUP, kind: 'UserList', version: 'v1' },
    ]);
    // Every $ref resolves.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const r of refs) {
      const name = r.slice('"$ref":"#/components/schemas/'.length, -1);
      assert.ok(schemas[name], `dangling ${r}`);
    }
  });
});

describe('openAPIV2', () => {
  const doc = openAPIV2(GROUP, 'v1', resources());

  it('is a Swagger 2.0 document with definitions carrying group-version-kinds', () => {
    assert.equal(doc['swagger'], '2.0');
    const defs = obj(doc['definitions']);
    assert.deepEqual(at(defs, 'dev.platform.management.v1.SharedSecret', 'x-kubernetes-group-version-kind'), [
      { group: GROUP, kind: 'SharedSecret', version: 'v1' },
    ]);
    assert.deepEqual(
      at(defs, 'dev.platform.management.v1.SharedSecret', 'properties', 'metadata', '$ref'),
      '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
    assert.ok(!JSON.stringify(doc).includes('"nullable"'));
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const r of refs) assert.ok(defs[r.slice('"$ref":"#/definitions/'.length, -1)], `dangling ${r}`);
  });

  it('consumes JSON patch, merge patch and apply patch on PATCH, as for custom resources', () => {
    const op = at(doc, 'paths', `/${GV}/users/{name}`, 'patch');
    assert.deepEqual(at(op, 'consumes'), [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    assert.deepEqual(at(op, 'x-kubernetes-group-version-kind'), {
      group: GROUP,
      version: 'v1',
      kind: 'User',
    });
    const body = (at(op, 'parameters') as Doc[]).find((p) => p['in'] === 'body');
    assert.deepEqual(body?.['schema'], { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' });
  });
});

describe('kubectl against the documents', () => {
  const run = promisify(execFile);
  let server: Server;
  let dir: string;
  let kubectl: (...args: string[]) => Promise<string>;

  before(async () => {
    const res = resources();
    const v3 = JSON.stringify(openAPIV3GroupVersion(GROUP, 'v1', res));
    const docs: Record<string, string> = {
      '/api': JSON.stringify(discovery.apiVersions()),
      [`/apis/${GROUP}`]: JSON.stringify(discovery.apiGroup(GROUP, 'v1')),
      [`/apis/${GROUP}/v1`]: JSON.stringify(discovery.apiResourceList(GROUP, 'v1', res)),
      '/openapi/v3': JSON.stringify(openAPIV3Root([{ groupVersion: `${GROUP}/v1`, hash: specHash(v3) }])),
      [`/openapi/v3/${GV}`]: v3,
      '/openapi/v2': JSON.stringify(openAPIV2(GROUP, 'v1', res)),
    };
    server = createServer((req, rsp) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (path === '/api' && (req.headers.accept ?? '').includes('as=APIGroupDiscoveryList')) {
        // As the server answers: the core v1 as aggregated discovery.
        rsp.writeHead(200, { 'content-type': 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
        rsp.end(JSON.stringify(discovery.coreAggregatedDiscovery()));
        return;
      }
      if (path === '/apis') {
        const v2 = (req.headers.accept ?? '').includes('as=APIGroupDiscoveryList');
        rsp.writeHead(200, {
          'content-type': v2
            ? 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
            : 'application/json',
        });
        rsp.end(
          JSON.stringify(
            v2 ? discovery.aggregatedDiscovery(GROUP, 'v1', res) : discovery.apiGroupList(GROUP, 'v1'),
          ),
        );
        return;
      }
      const body = docs[path];
      if (body === undefined) {
        rsp.writeHead(404, { 'content-type': 'text/plain' });
        rsp.end('404 page not found');
        return;
      }
      rsp.writeHead(200, { 'content-type': 'application/json' });
      rsp.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'openapi-kubectl-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]`,
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        'current-context: c',
      ].join('\n'),
    );
    kubectl = async (...args) => {
      const { stdout } = await run(
        'kubectl',
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
        {
          timeout: 30_000,
        },
      );
      return stdout;
    };
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('explains a map field of a namespaced kind', async () => {
    const out = await kubectl('explain', 'sharedsecret.spec.data');
    assert.match(out, /KIND:\s+SharedSecret/);
    assert.match(out, /FIELD: data <map\[string\]string>/);
    assert.match(out, /base64 encoded/);
  });

  it('explains a cluster-scoped kind recursively', async () => {
    const out = await kubectl('explain', 'user.spec', '--recursive');
    assert.match(out, /KIND:\s+User/);
    for (const field of [
      'tokenGeneration\t<integer>',
      'verbs\t<[]string> -required-',
      'passwordRef\t<Object>',
    ]) {
      assert.ok(out.includes(field), `missing ${field} in\n${out}`);
    }
  });

  it('explains the virtual cluster instance down to its ingress access point', async () => {
    const out = await kubectl('explain', 'virtualclusterinstance.spec.template.accessPoint.ingress');
    assert.match(out, /KIND:\s+VirtualClusterInstance/);
    assert.match(out, /enabled\t<boolean>/);
    assert.match(out, /host\t<string>/);
  });

  it('shows enums and object metadata', async () => {
    const type = await kubectl('explain', 'ownedaccesskeys.spec.type');
    assert.match(type, /ENUM:[\s\S]*OIDCRefreshToken/);
    const meta = await kubectl('explain', 'team.metadata');
    assert.match(meta, /FIELD: metadata <ObjectMeta>/);
    assert.match(meta, /ownerReferences\t<\[\]Object>/);
  });

  it('lists the resources of the group from discovery (a parent without verbs is hidden)', async () => {
    const out = await kubectl('api-resources', `--api-group=${GROUP}`, '--no-headers');
    const rows = out
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    assert.deepEqual(
      rows.map((r) => [r[0], r[2], r[3]]),
      [
        ['ownedaccesskeys', 'false', 'OwnedAccessKey'],
        ['sharedsecrets', 'true', 'SharedSecret'],
        ['teams', 'false', 'Team'],
        ['users', 'false', 'User'],
        ['virtualclusterinstances', 'true', 'VirtualClusterInstance'],
      ],
    );
  });
});
