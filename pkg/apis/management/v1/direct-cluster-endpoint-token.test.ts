// DirectClusterEndpointToken is issued, never stored, so it is not among
// managementKinds(); it is held to the rules kinds.test.ts holds the stored kinds
// to: every field described (kubectl explain prints it), every list typed, and a
// complete example valid with no unknown fields.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString } from '../../meta/field-errors.js';
import { compileSchema } from '../../schema/compile.js';
import {
  directClusterEndpointTokenInfo,
  directClusterEndpointTokenSchema,
} from './direct-cluster-endpoint-token.js';
import { eachProperty } from './schema-testing.js';

const GROUP = 'management.platform.dev';

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
];

describe('DirectClusterEndpointToken schema', () => {
  it('names the resource as upstream does: create only', () => {
    assert.deepEqual(
      kinds.map((k) => [k.info.resource, k.info.kind, k.info.namespaced, [...k.info.verbs]]),
      [['directclusterendpointtokens', 'DirectClusterEndpointToken', false, ['create']]],
    );
  });

  it('describes every field and types every list', () => {
    for (const k of kinds) {
      const missing: string[] = [];
      eachProperty(k.schema, '', (path, prop) => {
        if (typeof prop['description'] !== 'string' || prop['description'].trim() === '') missing.push(path);
        if (prop['type'] === 'array') assert.ok(prop['x-kubernetes-list-type'], `${k.info.kind} ${path}`);
      });
      assert.deepEqual(missing, [], `${k.info.kind} fields without a description`);
    }
  });

  it('accepts a complete example with no unknown fields', () => {
    for (const k of kinds) {
      const compiled = compileSchema(k.schema);
      assert.deepEqual(compiled.validate(k.example).map(fieldErrorString), [], k.info.kind);
      assert.deepEqual(compiled.unknownFields(k.example), [], k.info.kind);
    }
  });
});
