import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString } from '../../meta/field-errors.js';
import { isObject } from '../../meta/types.js';
import { compileSchema } from '../../schema/compile.js';
import { managementKinds } from '../../../registry/management/kinds.js';
import { generateAccessKey, hashAccessKey, isHashedAccessKey } from './owned-access-key.js';
import { eachProperty } from './schema-testing.js';

const GROUP = 'management.platform.dev';

const examples: Record<string, Record<string, unknown>> = {
  SharedSecret: {
    apiVersion: `${GROUP}/v1`,
    kind: 'SharedSecret',
    metadata: { name: 'registry', namespace: 'p-default', labels: { team: 'a' } },
    spec: {
      displayName: 'Registry credentials',
      description: 'Pull secret for the shared registry',
      owner: { team: 'platform' },
      data: { '.dockerconfigjson': 'e30=', token: 'c2VjcmV0' },
      access: [{ name: 'readers', verbs: ['get'], subresources: ['*'], users: ['bob'], teams: ['dev'] }],
    },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-07-01T00:00:00Z' }] },
  },
  Team: {
    metadata: { name: 'dev' },
    spec: {
      displayName: 'Developers',
      username: 'dev',
      users: ['alice', 'bob'],
      groups: ['oidc:dev'],
      imagePullSecrets: [
        { apiGroup: GROUP, kind: 'SharedSecret', secretName: 'r', secretNamespace: 'p', key: 'k' },
      ],
      clusterRoles: [{ name: 'view' }],
      access: [{ verbs: ['*'], users: ['admin'] }],
    },
    status: {},
  },
  User: {
    metadata: { name: 'alice' },
    spec: {
      displayName: 'Alice',
      username: 'alice',
      email: 'alice@example.com',
      subject: 'alice',
      groups: ['dev'],
      ssoGroups: ['oidc:dev'],
      passwordRef: { secretName: 's', secretNamespace: 'n', key: 'password' },
      codesRef: { secretName: 's', secretNamespace: 'n', key: 'codes' },
      tokenGeneration: 2,
      disabled: false,
      clusterRoles: [{ name: 'edit' }],
      extraClaims: { department: 'r&d' },
    },
    status: { teams: ['dev'] },
  },
  OwnedAccessKey: {
    metadata: { name: 'ci' },
    spec: {
      displayName: 'CI',
      user: 'alice',
      groups: ['ci'],
      key: '',
      ttl: 86400,
      ttlAfterLastActivity: true,
      type: 'User',
      scope: {
        roles: [{ role: 'vcluster', projects: ['*'] }],
        projects: [{ project: '*' }],
        spaces: [{ project: 'p', space: 's' }],
        virtualClusters: [{ project: 'p', virtualCluster: 'v' }],
        clusters: [{ cluster: '*' }],
        rules: [
          {
            verbs: ['get'],
            resources: [{ group: '', resources: ['pods', 'pods/log'], resourceNames: ['a'] }],
            namespaces: [''],
            nonResourceURLs: ['/version'],
            requestTargets: ['Management', 'ProjectVirtualCluster'],
            cluster: 'c',
            virtualClusters: [{ name: 'v', namespace: 'n' }],
          },
        ],
        allowPlatformCli: true,
      },
      identity: {
        userId: 'u1',
        username: 'alice',
        preferredUsername: 'Alice',
        email: 'alice@example.com',
        emailVerified: true,
        extraClaims: { roles: ['a', 'b'] },
        groups: ['g'],
        connector: 'github',
        connectorData: 'eyJ0b2tlbiI6IngifQ==',
        identityRefresh: '2026-07-01T00:00:00Z',
      },
      oidcProvider: { clientId: 'c', nonce: 'n', redirectUri: 'https://x/cb', scopes: 'openid' },
      parent: '',
      oidcLogin: {
        idToken: 'YQ==',
        accessToken: 'Yg==',
        refreshToken: 'Yw==',
        lastRefresh: '2026-07-01T00:00:00Z',
      },
    },
    status: { lastActivity: '2026-07-01T00:00:00Z' },
  },
  VirtualClusterInstance: {
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
};

describe('managementKinds', () => {
  const kinds = managementKinds(GROUP);

  it('names the five stored kinds with their scope and every verb', () => {
    assert.deepEqual(
      kinds.map((k) => [k.info.resource, k.info.singular, k.info.kind, k.info.listKind, k.info.namespaced]),
      [
        ['sharedsecrets', 'sharedsecret', 'SharedSecret', 'SharedSecretList', true],
        ['teams', 'team', 'Team', 'TeamList', false],
        ['users', 'user', 'User', 'UserList', false],
        ['ownedaccesskeys', 'ownedaccesskey', 'OwnedAccessKey', 'OwnedAccessKeyList', false],
        [
          'virtualclusterinstances',
          'virtualclusterinstance',
          'VirtualClusterInstance',
          'VirtualClusterInstanceList',
          true,
        ],
      ],
    );
    for (const k of kinds) {
      assert.equal(k.info.group, GROUP);
      assert.equal(k.info.version, 'v1');
      assert.deepEqual([...k.info.verbs].sort(), [
        'create',
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]);
      assert.deepEqual(k.info.shortNames, []);
      assert.deepEqual(k.info.categories, []);
    }
  });

  it('describes every field (kubectl explain prints the descriptions)', () => {
    for (const k of kinds) {
      const missing: string[] = [];
      eachProperty(k.schema, '', (path, prop) => {
        if (typeof prop['description'] !== 'string' || prop['description'].trim() === '') missing.push(path);
      });
      assert.deepEqual(missing, [], `${k.info.kind} fields without a description`);
      for (const top of ['apiVersion', 'kind', 'metadata', 'spec', 'status']) {
        const props = k.schema['properties'];
        assert.ok(isObject(props) && top in props, `${k.info.kind} lacks ${top}`);
      }
    }
  });

  it('gives every list a list type, and strategic-merge extensions exactly to sets and single-key maps', () => {
    for (const k of kinds) {
      eachProperty(k.schema, '', (path, prop) => {
        if (prop['type'] === 'array') {
          assert.ok(prop['x-kubernetes-list-type'], `${k.info.kind} ${path} has no list type`);
        }
        const listType = prop['x-kubernetes-list-type'];
        const keys = prop['x-kubernetes-list-map-keys'];
        const merges = listType === 'set' || (listType === 'map' && Array.isArray(keys) && keys.length === 1);
        // kubectl's client-side apply and patch read these, so they must say what the list type says.
        assert.equal(
          prop['x-kubernetes-patch-strategy'],
          merges ? 'merge' : undefined,
          `${k.info.kind} ${path} patch strategy`,
        );
        assert.equal(
          prop['x-kubernetes-patch-merge-key'],
          listType === 'map' && Array.isArray(keys) ? keys[0] : undefined,
          `${k.info.kind} ${path} merge key`,
        );
      });
      const meta = (
        k.schema['properties'] as Record<string, Record<string, Record<string, Record<string, unknown>>>>
      )['metadata']?.['properties'];
      assert.equal(meta?.['ownerReferences']?.['x-kubernetes-patch-merge-key'], 'uid');
      assert.equal(meta?.['finalizers']?.['x-kubernetes-patch-strategy'], 'merge');
    }
  });

  it('merges the fields two managers share as a user would expect', () => {
    const at = (kind: string, path: string): Record<string, unknown> => {
      const k = kinds.find((x) => x.info.kind === kind);
      assert.ok(k, kind);
      let found: Record<string, unknown> | undefined;
      eachProperty(k.schema, '', (p, prop) => {
        if (p === path) found = prop;
      });
      assert.ok(found, `${kind} ${path}`);
      return found;
    };
    // Members added from several places: sets.
    for (const [kind, path] of [
      ['Team', 'spec.users'],
      ['Team', 'spec.groups'],
      ['User', 'spec.groups'],
      ['User', 'status.teams'],
      ['OwnedAccessKey', 'spec.groups'],
    ] as const) {
      assert.equal(at(kind, path)['x-kubernetes-list-type'], 'set', `${kind} ${path}`);
    }
    // Each key of a secret's data is its own field.
    assert.equal(at('SharedSecret', 'spec.data')['x-kubernetes-map-type'], undefined);
    // Grants and references change as one value.
    assert.equal(at('SharedSecret', 'spec.access')['x-kubernetes-list-type'], 'atomic');
    assert.equal(at('Team', 'spec.owner')['x-kubernetes-map-type'], 'atomic');
    assert.equal(at('OwnedAccessKey', 'spec.scope')['x-kubernetes-map-type'], 'atomic');
    assert.equal(at('User', 'spec.passwordRef')['x-kubernetes-map-type'], 'atomic');
    assert.equal(at('VirtualClusterInstance', 'spec.clusterRef')['x-kubernetes-map-type'], 'atomic');
    // Conditions are keyed by type, each owned by the controller that reports it.
    assert.deepEqual(at('SharedSecret', 'status.conditions')['x-kubernetes-list-map-keys'], ['type']);
  });

  it('accepts a complete example of each kind with no unknown fields', () => {
    for (const k of kinds) {
      const example = examples[k.info.kind];
      assert.ok(example, k.info.kind);
      const compiled = compileSchema(k.schema);
      assert.deepEqual(compiled.validate(example).map(fieldErrorString), [], k.info.kind);
      assert.deepEqual(compiled.unknownFields(example), [], k.info.kind);
    }
  });

  it('types SharedSecret data as a map of base64 bytes', () => {
    const ss = kinds.find((k) => k.info.kind === 'SharedSecret');
    assert.ok(ss);
    const errs = compileSchema(ss.schema).validate({ metadata: {}, spec: { data: { password: 'hunter2' } } });
    assert.deepEqual(
      errs.map((e) => e.field),
      ['spec.data[password]'],
    );
  });

  it('names the command-line scope flag with the neutral name only', () => {
    for (const k of kinds) {
      eachProperty(k.schema, '', (path) => {
        if (/allow\w*Cli$/i.test(path)) assert.match(path, /allowPlatformCli$/, `${k.info.kind} ${path}`);
      });
    }
  });

  it('returns fresh objects, so one caller cannot change another caller’s schema', () => {
    const a = managementKinds(GROUP)[0];
    const b = managementKinds(GROUP)[0];
    assert.ok(a && b);
    assert.notEqual(a.schema, b.schema);
    assert.deepEqual(a.schema, b.schema);
  });
});

describe('access key values', () => {
  it('hashes to the sha256:<hex> form', () => {
    assert.equal(
      hashAccessKey('abc'),
      'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    assert.ok(isHashedAccessKey(hashAccessKey('anything')));
    assert.ok(!isHashedAccessKey('abc'));
  });

  it('generates 64 random lower-case letters', () => {
    const a = generateAccessKey();
    const b = generateAccessKey();
    assert.match(a, /^[a-z]{64}$/);
    assert.notEqual(a, b);
  });
});
