import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  authProxyHeaders,
  convertLegacyResources,
  escapeExtraKey,
  ifNoneMatchHits,
  isDiscoveryV2ContentType,
  isDroppedRequestHeader,
  reencodeQuery,
} from './aggregator-wire.js';

describe('aggregator wire helpers', () => {
  it('re-encodes a query as Go does: keys sorted, values kept in order, QueryEscape', () => {
    assert.equal(
      reencodeQuery('watch=true&resourceVersion=10&labelSelector=a%3Db,c+in+(x)&b=2&b=1'),
      'b=2&b=1&labelSelector=a%3Db%2Cc+in+%28x%29&resourceVersion=10&watch=true',
    );
    assert.equal(reencodeQuery(''), '');
    // Go refuses pairs with a semicolon and drops them.
    assert.equal(reencodeQuery('a=1;b=2&c=3'), 'c=3');
  });

  it('escapes extra keys like client-go, so the server decodes them back', () => {
    assert.equal(escapeExtraKey('scopes'), 'scopes');
    assert.equal(escapeExtraKey('example.org/foo bar%'), 'example.org%2Ffoo%20bar%25');
    assert.equal(decodeURIComponent(escapeExtraKey('é/x')), 'é/x');
    assert.deepEqual(
      authProxyHeaders({ name: 'alice', groups: ['a', 'b'], extra: { 'k/1': ['v1', 'v2'] } }),
      [
        ['X-Remote-User', 'alice'],
        ['X-Remote-Group', 'a'],
        ['X-Remote-Group', 'b'],
        ['X-Remote-Extra-k%2F1', 'v1'],
        ['X-Remote-Extra-k%2F1', 'v2'],
      ],
    );
  });

  it('recognises the v2 discovery content type with its parameters in any order', () => {
    assert.ok(
      isDiscoveryV2ContentType('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'),
    );
    assert.ok(
      isDiscoveryV2ContentType('application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io'),
    );
    assert.ok(!isDiscoveryV2ContentType('application/json'));
    assert.ok(
      !isDiscoveryV2ContentType('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'),
    );
    assert.ok(!isDiscoveryV2ContentType(undefined));
  });

  it('converts a legacy resource list into a v2 version entry, subresources under their parent', () => {
    const entry = convertLegacyResources('v1', [
      { name: 'teams', singularName: 'team', namespaced: false, kind: 'Team', verbs: ['get', 'list'] },
      { name: 'teams/status', singularName: '', namespaced: false, kind: 'Team', verbs: ['get'] },
      { name: 'orphans/status', namespaced: true, kind: 'X', verbs: ['get'] },
    ]);
    assert.deepEqual(entry, {
      version: 'v1',
      resources: [
        {
          resource: 'teams',
          responseKind: { group: '', version: '', kind: 'Team' },
          scope: 'Cluster',
          singularResource: 'team',
          verbs: ['get', 'list'],
          subresources: [
            { subresource: 'status', responseKind: { group: '', version: '', kind: 'Team' }, verbs: ['get'] },
          ],
        },
      ],
    });
  });

  it('drops credentials, impersonation, identity and hop-by-hop headers, keeps the rest', () => {
    for (const h of [
      'Authorization',
      'Impersonate-User',
      'X-Remote-User',
      'x-remote-group',
      'X-Remote-Extra-a',
      'Connection',
    ])
      assert.ok(isDroppedRequestHeader(h), h);
    for (const h of ['Accept', 'Content-Type', 'User-Agent', 'If-None-Match'])
      assert.ok(!isDroppedRequestHeader(h), h);
  });

  it('matches If-None-Match lists, weak tags and *', () => {
    assert.ok(ifNoneMatchHits('"a", "b"', '"b"'));
    assert.ok(ifNoneMatchHits('W/"b"', '"b"'));
    assert.ok(ifNoneMatchHits('*', '"b"'));
    assert.ok(!ifNoneMatchHits('"a"', '"b"'));
    assert.ok(!ifNoneMatchHits(undefined, '"b"'));
  });
});
