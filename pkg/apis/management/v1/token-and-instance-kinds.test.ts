// The two kinds of the token issue, held to the rules kinds.test.ts holds the
// stored kinds to: every field described (kubectl explain prints it), every list
// typed, and a complete example valid with no unknown fields.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString } from '../../meta/field-errors.js';
import { isObject } from '../../meta/types.js';
import { compileSchema } from '../../schema/compile.js';
import {
  directClusterEndpointTokenInfo,
  directClusterEndpointTokenSchema,
} from './direct-cluster-endpoint-token.js';
import { virtualClusterInstanceInfo, virtualClusterInstanceSchema } from './virtual-cluster-instance.js';

const GROUP = 'management.platform.dev';

function eachProperty(
  schema: Record<string, unknown>,
  path: string,
  visit: (path: string, prop: Record<string, unknown>) => void,
): void {
  const props = schema['properties'];
  if (isObject(props)) {
    for (const [name, prop] of Object.entries(props)) {
      if (!isObject(prop)) continue;
      const p = path ? `${path}.${name}` : name;
      visit(p, prop);
      eachProperty(prop, p, visit);
    }
  }
  for (const key of ['items', 'additionalProperties']) {
    const sub = schema[key];
    if (isObject(sub)) eachProperty(sub, `${path}[]`, visit);
  }
}

const kinds = [
  {
    info: directClusterEndpointTokenInfo(GROUP),
    schema: directClusterEndpointTokenSchema(),
    example: {
      apiVersion: `${GROUP}/v1`,
      kind: 'DirectClusterEndpointToken',
      metadata: {},
      spec: {
        ttl: 1800,
        scope: { clusters: [{ cluster: 'prod' }], virtualClusters: [{ project: 'p', virtualCluster: 'v' }] },
      },
      status: { token: 'eyJ.eyJ.sig' },
    },
  },
  {
    info: virtualClusterInstanceInfo(GROUP),
    schema: virtualClusterInstanceSchema(),
    example: {
      apiVersion: `${GROUP}/v1`,
      kind: 'VirtualClusterInstance',
      metadata: { name: 'dev', namespace: 'p-default' },
      spec: {
        displayName: 'Dev',
        description: 'd',
        owner: { user: 'alice' },
        templateRef: { name: 't', version: '1', syncOnce: true },
        template: {
          metadata: { labels: { a: 'b' }, annotations: { c: 'd' } },
          helmRelease: {
            chart: { name: 'vcluster', repo: 'https://charts', version: '0.20.0' },
            values: 'x: 1',
          },
          objects: 'kind: ConfigMap',
          accessPoint: { ingress: { enabled: true, host: 'dev.example.com' } },
          forwardToken: false,
        },
        clusterRef: { cluster: 'c', namespace: 'n', virtualCluster: 'v' },
        parameters: 'p: 1',
        extraAccessRules: [{ users: ['a'], teams: ['t'], clusterRole: 'admin' }],
        access: [{ name: 'r', verbs: ['get'], subresources: ['kubeconfig'], users: ['bob'], teams: ['dev'] }],
        networkPeer: true,
        external: false,
        standalone: false,
      },
      status: {
        phase: 'Ready',
        reason: 'Deployed',
        message: 'ok',
        serviceUID: 'u',
        kubernetesVersion: 'v1.30.0',
        conditions: [{ type: 'Ready', status: 'True' }],
        virtualCluster: { accessPoint: { ingress: { enabled: true } } },
      },
    },
  },
];

describe('DirectClusterEndpointToken and VirtualClusterInstance schemas', () => {
  it('name the resources as upstream does', () => {
    assert.deepEqual(
      kinds.map((k) => [k.info.resource, k.info.kind, k.info.namespaced, [...k.info.verbs]]),
      [
        ['directclusterendpointtokens', 'DirectClusterEndpointToken', false, ['create']],
        [
          'virtualclusterinstances',
          'VirtualClusterInstance',
          true,
          ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        ],
      ],
    );
  });

  it('describe every field and type every list', () => {
    for (const k of kinds) {
      const missing: string[] = [];
      eachProperty(k.schema, '', (path, prop) => {
        if (typeof prop['description'] !== 'string' || prop['description'].trim() === '') missing.push(path);
        if (prop['type'] === 'array') assert.ok(prop['x-kubernetes-list-type'], `${k.info.kind} ${path}`);
      });
      assert.deepEqual(missing, [], `${k.info.kind} fields without a description`);
    }
  });

  it('accept a complete example with no unknown fields', () => {
    for (const k of kinds) {
      const compiled = compileSchema(k.schema);
      assert.deepEqual(compiled.validate(k.example).map(fieldErrorString), [], k.info.kind);
      assert.deepEqual(compiled.unknownFields(k.example), [], k.info.kind);
    }
  });
});
