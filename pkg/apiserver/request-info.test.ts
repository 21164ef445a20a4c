import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { nameFromFieldSelector, newRequestInfo, normalizePrefixes, stripPrefix } from './request-info.js';

function info(method: string, url: string) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  return newRequestInfo(method, path, () => query);
}

describe('request info', () => {
  const G = '/apis/management.x/v1';

  it('derives Kubernetes verbs from method and path', () => {
    const cases: [string, string, string, string, string][] = [
      // method, url, verb, namespace, name
      ['GET', `${G}/teams`, 'list', '', ''],
      ['GET', `${G}/teams?watch=true`, 'watch', '', ''],
      ['GET', `${G}/teams?watch=1`, 'watch', '', ''],
      ['GET', `${G}/teams?watch=false`, 'list', '', ''],
      ['GET', `${G}/teams?watch=0`, 'list', '', ''],
      ['GET', `${G}/teams/foo`, 'get', '', 'foo'],
      ['HEAD', `${G}/teams/foo`, 'get', '', 'foo'],
      ['GET', `${G}/teams/foo?watch=true`, 'get', '', 'foo'],
      ['POST', `${G}/teams`, 'create', '', ''],
      ['PUT', `${G}/teams/foo`, 'update', '', 'foo'],
      ['PATCH', `${G}/teams/foo`, 'patch', '', 'foo'],
      ['DELETE', `${G}/teams/foo`, 'delete', '', 'foo'],
      ['DELETE', `${G}/teams`, 'deletecollection', '', ''],
      ['GET', `${G}/namespaces/ns1/sharedsecrets`, 'list', 'ns1', ''],
      ['GET', `${G}/namespaces/ns1/sharedsecrets/s`, 'get', 'ns1', 's'],
      ['DELETE', `${G}/namespaces/ns1/sharedsecrets`, 'deletecollection', 'ns1', ''],
      ['GET', `${G}/watch/teams`, 'watch', '', ''],
      ['GET', `${G}/watch/teams/foo`, 'watch', '', 'foo'],
      ['GET', `${G}/watch/namespaces/ns1/sharedsecrets`, 'watch', 'ns1', ''],
      ['GET', `${G}/watch/namespaces/ns1/sharedsecrets/s`, 'watch', 'ns1', 's'],
      ['OPTIONS', `${G}/teams`, '', '', ''],
    ];
    for (const [method, url, verb, namespace, name] of cases) {
      const ri = info(method, url);
      assert.equal(ri.isResourceRequest, true, url);
      assert.equal(ri.verb, verb, `${method} ${url}`);
      assert.equal(ri.namespace, namespace, url);
      assert.equal(ri.name, name, url);
      assert.equal(ri.apiGroup, 'management.x');
      assert.equal(ri.apiVersion, 'v1');
    }
  });

  it('takes the name from a metadata.name field selector on list and watch', () => {
    assert.equal(info('GET', `${G}/teams?fieldSelector=metadata.name%3Dfoo`).name, 'foo');
    assert.equal(info('GET', `${G}/teams?watch=1&fieldSelector=metadata.name%3D%3Dfoo`).name, 'foo');
    assert.equal(info('GET', `${G}/teams?fieldSelector=metadata.name!%3Dfoo`).name, '');
    assert.equal(info('GET', `${G}/teams?fieldSelector=metadata.namespace%3Dx`).name, '');
    assert.equal(info('DELETE', `${G}/teams?fieldSelector=metadata.name%3Dfoo`).verb, 'deletecollection');
  });

  it('reads names only when they are valid path segments', () => {
    assert.equal(nameFromFieldSelector('metadata.name=a/b'), undefined);
    assert.equal(nameFromFieldSelector('metadata.name=..'), undefined);
    assert.equal(nameFromFieldSelector('spec.x=1,metadata.name=b'), 'b');
    assert.equal(nameFromFieldSelector('metadata.name=a\\,b'), 'a,b');
  });

  it('parses subresources', () => {
    const ri = info('POST', `${G}/namespaces/p/virtualclusterinstances/vc/kubeconfig`);
    assert.equal(ri.verb, 'create');
    assert.equal(ri.resource, 'virtualclusterinstances');
    assert.equal(ri.name, 'vc');
    assert.equal(ri.subresource, 'kubeconfig');
    assert.equal(ri.namespace, 'p');
  });

  it('treats discovery and other paths as non-resource requests', () => {
    for (const p of [
      '/apis',
      '/apis/management.x',
      '/apis/management.x/v1',
      '/api',
      '/healthz',
      '/openapi/v3/apis/g/v',
    ]) {
      const ri = info('GET', p);
      assert.equal(ri.isResourceRequest, false, p);
      assert.equal(ri.verb, 'get');
      assert.equal(ri.path, p);
    }
    assert.equal(info('POST', '/apis').verb, 'post');
  });

  it('strips configured prefixes only at segment boundaries', () => {
    const prefixes = normalizePrefixes(['/kubernetes/management/', 'other']);
    assert.deepEqual(prefixes, ['/kubernetes/management', '/other']);
    assert.equal(stripPrefix('/kubernetes/management/apis', prefixes), '/apis');
    assert.equal(stripPrefix('/kubernetes/management', prefixes), '/');
    assert.equal(stripPrefix('/kubernetes/managementx/apis', prefixes), '/kubernetes/managementx/apis');
    assert.equal(stripPrefix('/apis/g/v1/teams', prefixes), '/apis/g/v1/teams');
  });
});
