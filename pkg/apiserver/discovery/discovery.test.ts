import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import { managementKinds } from '../../registry/management/kinds.js';
import type { RESTStorage, SubresourceStorage } from '../../registry/rest/interfaces.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  etagOf,
  storageVersionHash,
} from './discovery.js';

const GROUP = 'management.platform.dev';

function resources(): RESTStorage[] {
  const accessKeys: SubresourceStorage = {
    info: { name: 'accesskeys', kind: 'OwnedAccessKeyList', verbs: ['get'] },
  };
  const kubeConfig: SubresourceStorage = {
    info: { name: 'kubeconfig', kind: 'VirtualClusterInstanceKubeConfig', verbs: ['create'] },
  };
  const subresources: Record<string, Map<string, SubresourceStorage>> = {
    users: new Map([['accesskeys', accessKeys]]),
    virtualclusterinstances: new Map([['kubeconfig', kubeConfig]]),
  };
  return managementKinds(GROUP).map((k) => {
    const sub = subresources[k.info.resource];
    return sub ? { info: k.info, schema: k.schema, subresources: sub } : { info: k.info, schema: k.schema };
  });
}

describe('storageVersionHash', () => {
  it('matches apiserver’s value for a known kind', () => {
    assert.equal(storageVersionHash('management.x', 'v1', 'Team'), 'j+pwWzVl0vU=');
  });
});

describe('apiResourceList', () => {
  const list = apiResourceList(GROUP, 'v1', resources());

  it('is an APIResourceList for the group version, sorted by name', () => {
    assert.equal(list.kind, 'APIResourceList');
    assert.equal(list.apiVersion, 'v1');
    assert.equal(list.groupVersion, `${GROUP}/v1`);
    assert.deepEqual(
      list.resources.map((r) => r.name),
      [
        'ownedaccesskeys',
        'sharedsecrets',
        'teams',
        'users',
        'users/accesskeys',
        'virtualclusterinstances',
        'virtualclusterinstances/kubeconfig',
      ],
    );
  });

  it('describes each resource the way kubectl resolves names', () => {
    const ss = list.resources.find((r) => r.name === 'sharedsecrets');
    assert.deepEqual(ss, {
      name: 'sharedsecrets',
      singularName: 'sharedsecret',
      namespaced: true,
      kind: 'SharedSecret',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      storageVersionHash: storageVersionHash(GROUP, 'v1', 'SharedSecret'),
    });
    const team = list.resources.find((r) => r.name === 'teams');
    assert.equal(team?.namespaced, false);
    assert.equal(JSON.stringify(list).includes('shortNames'), false);
  });

  it('lists subresources as name/sub without a singular name', () => {
    assert.deepEqual(
      list.resources.find((r) => r.name === 'users/accesskeys'),
      {
        name: 'users/accesskeys',
        singularName: '',
        namespaced: false,
        kind: 'OwnedAccessKeyList',
        verbs: ['get'],
      },
    );
  });
});

describe('aggregatedDiscovery', () => {
  const doc = aggregatedDiscovery(GROUP, 'v1', resources());

  it('is an apidiscovery.k8s.io/v2 list with one current version', () => {
    assert.equal(doc.kind, 'APIGroupDiscoveryList');
    assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2');
    assert.deepEqual(doc.metadata, {});
    assert.equal(doc.items.length, 1);
    assert.equal(doc.items[0]?.metadata.name, GROUP);
    assert.equal(doc.items[0]?.versions[0]?.version, 'v1');
    assert.equal(doc.items[0]?.versions[0]?.freshness, 'Current');
  });

  it('gives every resource and subresource a full responseKind (client-go drops the others)', () => {
    const found = doc.items[0]?.versions[0]?.resources ?? [];
    assert.deepEqual(found.map((r) => r.resource).sort(), [
      'ownedaccesskeys',
      'sharedsecrets',
      'teams',
      'users',
      'virtualclusterinstances',
    ]);
    for (const r of found) {
      assert.ok(r.responseKind.group && r.responseKind.version && r.responseKind.kind, r.resource);
      for (const s of r.subresources ?? []) {
        assert.ok(s.responseKind.group && s.responseKind.version && s.responseKind.kind, s.subresource);
      }
    }
    const users = found.find((r) => r.resource === 'users');
    assert.deepEqual(users, {
      resource: 'users',
      responseKind: { group: GROUP, version: 'v1', kind: 'User' },
      scope: 'Cluster',
      singularResource: 'user',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      subresources: [
        {
          subresource: 'accesskeys',
          responseKind: { group: GROUP, version: 'v1', kind: 'OwnedAccessKeyList' },
          verbs: ['get'],
        },
      ],
    });
    assert.equal(found.find((r) => r.resource === 'sharedsecrets')?.scope, 'Namespaced');
    assert.deepEqual(
      found.find((r) => r.resource === 'virtualclusterinstances'),
      {
        resource: 'virtualclusterinstances',
        responseKind: { group: GROUP, version: 'v1', kind: 'VirtualClusterInstance' },
        scope: 'Namespaced',
        singularResource: 'virtualclusterinstance',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        subresources: [
          {
            subresource: 'kubeconfig',
            responseKind: { group: GROUP, version: 'v1', kind: 'VirtualClusterInstanceKubeConfig' },
            verbs: ['create'],
          },
        ],
      },
    );
  });
});

describe('group documents', () => {
  it('builds APIGroup and APIGroupList with the version preferred', () => {
    const gv = { groupVersion: `${GROUP}/v1`, version: 'v1' };
    assert.deepEqual(apiGroup(GROUP, 'v1'), {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: GROUP,
      versions: [gv],
      preferredVersion: gv,
    });
    assert.deepEqual(apiGroupList(GROUP, 'v1'), {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [{ name: GROUP, versions: [gv], preferredVersion: gv }],
    });
  });

  it('answers /api with the core v1, whose resource list is empty', () => {
    assert.deepEqual(apiResourceList('', 'v1', []), {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'v1',
      resources: [],
    });
    assert.deepEqual(apiVersions(), {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }],
    });
  });
});

describe('etagOf', () => {
  it('quotes the upper-case hex SHA-512 of the document', () => {
    const json = '{"a":1}';
    const hex = createHash('sha512').update(json).digest('hex').toUpperCase();
    assert.equal(etagOf(json), `"${hex}"`);
    assert.notEqual(etagOf('{"a":2}'), etagOf(json));
  });
});
