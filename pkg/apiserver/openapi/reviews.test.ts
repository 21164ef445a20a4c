// The self-subject reviews in OpenAPI, as kube-apiserver publishes them
// (api/openapi-spec/swagger.json and v3/apis__authorization.k8s.io__v1_openapi.json,
// apis__authentication.k8s.io__v1_openapi.json): create-only paths, upstream's model
// names and operation ids, and a v3 document per group version.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isObject } from '../../apis/meta/types.js';
import type { PlatformAuthorization } from '../../authorization/index.js';
import { managementKinds } from '../../registry/management/kinds.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import { selfReviewResources } from '../../server/self-reviews.js';
import { openAPIDocuments } from './index.js';
import { decodeOpenAPIV2Proto, encodeOpenAPIV2Proto } from './openapi-v2-proto.js';

const GROUP = 'management.platform.dev';
type Doc = Record<string, unknown>;

function obj(value: unknown): Doc {
  assert.ok(isObject(value), `expected an object, got ${JSON.stringify(value)}`);
  return value;
}

function at(doc: unknown, ...keys: string[]): unknown {
  let node: unknown = doc;
  for (const k of keys) node = Array.isArray(node) ? node[Number(k)] : isObject(node) ? node[k] : undefined;
  return node;
}

function documents(): ReturnType<typeof openAPIDocuments> {
  const resources: RESTStorage[] = managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
  // The storages are only described here, never called: an authorizer that is never asked.
  const authorization = {
    authorizer: { authorize: () => Promise.reject(new Error('not asked')) },
    callers: {},
  } as unknown as PlatformAuthorization;
  return openAPIDocuments(GROUP, 'v1', resources, selfReviewResources(GROUP, authorization, resources));
}

const REVIEWS = [
  {
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    gvk: { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview' },
    model: 'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
    operationId: 'createAuthorizationV1SelfSubjectAccessReview',
    tag: 'authorization_v1',
  },
  {
    path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
    gvk: { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectRulesReview' },
    model: 'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
    operationId: 'createAuthorizationV1SelfSubjectRulesReview',
    tag: 'authorization_v1',
  },
  {
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    gvk: { group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview' },
    model: 'io.k8s.api.authentication.v1.SelfSubjectReview',
    operationId: 'createAuthenticationV1SelfSubjectReview',
    tag: 'authentication_v1',
  },
] as const;

function names(params: unknown): string[] {
  assert.ok(Array.isArray(params));
  return params.map((p) => String(at(p, 'name'))).sort();
}

describe('the self-subject reviews in /openapi/v3', () => {
  const docs = documents();

  it('has a document for each review group version, besides the API group', () => {
    assert.deepEqual([...docs.builtinV3.keys()].sort(), ['authentication.k8s.io/v1', 'authorization.k8s.io/v1']);
  });

  for (const r of REVIEWS) {
    it(`publishes POST ${r.path} only, with upstream's id, parameters, action and kind`, () => {
      const doc = obj(docs.builtinV3.get(`${r.gvk.group}/${r.gvk.version}`));
      const item = obj(at(doc, 'paths', r.path));
      assert.deepEqual(Object.keys(item).sort(), ['parameters', 'post']);
      assert.deepEqual(names(item['parameters']), ['pretty']);
      const post = obj(item['post']);
      assert.equal(post['operationId'], r.operationId);
      assert.deepEqual(post['tags'], [r.tag]);
      assert.equal(post['x-kubernetes-action'], 'post');
      assert.deepEqual(post['x-kubernetes-group-version-kind'], r.gvk);
      assert.deepEqual(names(post['parameters']), ['dryRun', 'fieldManager', 'fieldValidation']);
      assert.equal(
        at(post, 'requestBody', 'content', 'application/json', 'schema', '$ref'),
        `#/components/schemas/${r.model}`,
      );
      assert.deepEqual(Object.keys(obj(post['responses'])).sort(), ['200', '201', '202', '401']);
      const schema = obj(at(doc, 'components', 'schemas', r.model));
      assert.deepEqual(schema['x-kubernetes-group-version-kind'], [r.gvk]);
    });
  }

  it("defines upstream's models for the access review, selectors included, and nothing unused", () => {
    const schemas = obj(at(docs.builtinV3.get('authorization.k8s.io/v1'), 'components', 'schemas'));
    assert.deepEqual(Object.keys(schemas).sort(), [
      'io.k8s.api.authorization.v1.FieldSelectorAttributes',
      'io.k8s.api.authorization.v1.LabelSelectorAttributes',
      'io.k8s.api.authorization.v1.NonResourceAttributes',
      'io.k8s.api.authorization.v1.NonResourceRule',
      'io.k8s.api.authorization.v1.ResourceAttributes',
      'io.k8s.api.authorization.v1.ResourceRule',
      'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
      'io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec',
      'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
      'io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec',
      'io.k8s.api.authorization.v1.SubjectAccessReviewStatus',
      'io.k8s.api.authorization.v1.SubjectRulesReviewStatus',
      'io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement',
      'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    ]);
    const ssar = schemas['io.k8s.api.authorization.v1.SelfSubjectAccessReview'];
    assert.deepEqual(at(ssar, 'required'), ['spec']);
    assert.equal(
      at(ssar, 'properties', 'status', 'allOf', '0', '$ref'),
      '#/components/schemas/io.k8s.api.authorization.v1.SubjectAccessReviewStatus',
    );
    assert.deepEqual(
      Object.keys(obj(at(schemas, 'io.k8s.api.authorization.v1.ResourceAttributes', 'properties'))).sort(),
      ['fieldSelector', 'group', 'labelSelector', 'name', 'namespace', 'resource', 'subresource', 'verb', 'version'],
    );
    assert.deepEqual(at(schemas, 'io.k8s.api.authorization.v1.SubjectAccessReviewStatus', 'required'), ['allowed']);
    assert.deepEqual(at(schemas, 'io.k8s.api.authorization.v1.SubjectRulesReviewStatus', 'required'), [
      'resourceRules',
      'nonResourceRules',
      'incomplete',
    ]);
    assert.equal(
      at(schemas, 'io.k8s.api.authorization.v1.ResourceRule', 'properties', 'verbs', 'x-kubernetes-list-type'),
      'atomic',
    );
  });

  it('defines the identity of the whoami review', () => {
    const schemas = obj(at(docs.builtinV3.get('authentication.k8s.io/v1'), 'components', 'schemas'));
    assert.deepEqual(Object.keys(schemas).sort(), [
      'io.k8s.api.authentication.v1.SelfSubjectReview',
      'io.k8s.api.authentication.v1.SelfSubjectReviewStatus',
      'io.k8s.api.authentication.v1.UserInfo',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    ]);
    assert.deepEqual(
      Object.keys(obj(at(schemas, 'io.k8s.api.authentication.v1.UserInfo', 'properties'))).sort(),
      ['extra', 'groups', 'uid', 'username'],
    );
  });

  it('resolves every reference within each document', () => {
    for (const doc of [docs.v3, ...docs.builtinV3.values()]) {
      const schemas = obj(at(doc, 'components', 'schemas'));
      for (const r of JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []) {
        assert.ok(schemas[r.slice('"$ref":"#/components/schemas/'.length, -1)], `dangling ${r}`);
      }
    }
  });

  it('publishes only what is served: no SubjectAccessReview, TokenReview or review lists', () => {
    const all = JSON.stringify([...docs.builtinV3.values(), docs.v2]);
    for (const absent of [
      'io.k8s.api.authorization.v1.SubjectAccessReview"',
      'LocalSubjectAccessReview',
      'TokenReview',
      'SelfSubjectAccessReviewList',
      'SelfSubjectReviewList',
    ]) {
      assert.ok(!all.includes(absent), `${absent} is published`);
    }
  });

  it('leaves the API group document to the API group', () => {
    assert.ok(!JSON.stringify(docs.v3).includes('k8s.io/v1/self'));
  });
});

describe('the self-subject reviews in /openapi/v2', () => {
  const docs = documents();

  it('holds their paths and definitions beside the API group, every reference resolved', () => {
    const paths = obj(docs.v2['paths']);
    const defs = obj(docs.v2['definitions']);
    for (const r of REVIEWS) {
      const post = obj(at(paths, r.path, 'post'));
      assert.equal(post['operationId'], r.operationId);
      assert.equal(post['x-kubernetes-action'], 'post');
      assert.deepEqual(post['x-kubernetes-group-version-kind'], r.gvk);
      assert.equal(at(post, 'parameters', '0', 'schema', '$ref'), `#/definitions/${r.model}`);
      assert.deepEqual(at(defs, r.model, 'x-kubernetes-group-version-kind'), [r.gvk]);
    }
    assert.ok(paths[`/apis/${GROUP}/v1/teams`], 'the API group is still there');
    for (const r of JSON.stringify(docs.v2).match(/"\$ref":"[^"]+"/g) ?? []) {
      assert.ok(defs[r.slice('"$ref":"#/definitions/'.length, -1)], `dangling ${r}`);
    }
  });

  it('carries them in the protobuf form old kubectl reads', () => {
    const decoded = decodeOpenAPIV2Proto(encodeOpenAPIV2Proto(docs.v2)) as unknown as {
      paths: { path: { name: string }[] };
      definitions: { additional_properties: { name: string }[] };
    };
    const paths = decoded.paths.path.map((p) => p.name);
    const defs = decoded.definitions.additional_properties.map((d) => d.name);
    for (const r of REVIEWS) {
      assert.ok(paths.includes(r.path), `${r.path} missing from the protobuf document`);
      assert.ok(defs.includes(r.model), `${r.model} missing from the protobuf document`);
    }
  });
});
