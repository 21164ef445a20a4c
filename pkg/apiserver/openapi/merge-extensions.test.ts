// The merge semantics the server applies (server-side apply, strategic merge
// patch) are the ones kubectl and client libraries read from OpenAPI: every list
// type, list-map key and atomic map of the kinds' schemas appears in both the v2
// and the v3 document, on the kind's definition.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { managementKinds } from '../../registry/management/kinds.js';
import { isObject } from '../../apis/meta/types.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import { openAPIV2, openAPIV3GroupVersion } from './index.js';

const GROUP = 'management.platform.dev';
const EXTENSIONS = [
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
] as const;

function resources(): RESTStorage[] {
  return managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
}

/** path -> the merge extensions at that path, for every property below `spec` and `status`. */
function extensionsBelow(schema: unknown, path: string, out: Map<string, Record<string, unknown>>): void {
  if (!isObject(schema)) return;
  const found: Record<string, unknown> = {};
  for (const e of EXTENSIONS) if (schema[e] !== undefined) found[e] = schema[e];
  if (Object.keys(found).length > 0) out.set(path, found);
  const props = schema['properties'];
  if (isObject(props))
    for (const [name, p] of Object.entries(props)) extensionsBelow(p, `${path}.${name}`, out);
  if (isObject(schema['items'])) extensionsBelow(schema['items'], `${path}[]`, out);
  if (isObject(schema['additionalProperties']))
    extensionsBelow(schema['additionalProperties'], `${path}{}`, out);
}

function kindExtensions(kindSchema: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const props = isObject(kindSchema) ? kindSchema['properties'] : undefined;
  if (!isObject(props)) return out;
  for (const top of ['spec', 'status']) extensionsBelow(props[top], top, out);
  return out;
}

describe('merge extensions in OpenAPI', () => {
  const v2 = openAPIV2(GROUP, 'v1', resources());
  const v3 = openAPIV3GroupVersion(GROUP, 'v1', resources());
  const v2Defs = v2['definitions'] as Record<string, unknown>;
  const v3Schemas = (v3['components'] as Record<string, Record<string, unknown>>)['schemas'] as Record<
    string,
    unknown
  >;

  for (const k of managementKinds(GROUP)) {
    const model = `dev.platform.management.v1.${k.info.kind}`;
    it(`${k.info.kind}: v2 and v3 carry every list type, map key and atomic map of the schema`, () => {
      const want = kindExtensions(k.schema);
      assert.ok(want.size > 0, `${k.info.kind} declares merge semantics`);
      assert.deepEqual(kindExtensions(v2Defs[model]), want, 'v2');
      assert.deepEqual(kindExtensions(v3Schemas[model]), want, 'v3');
    });
  }

  it('publishes the choices users rely on (Team users a set, conditions keyed by type, scope atomic)', () => {
    const team = kindExtensions(v3Schemas['dev.platform.management.v1.Team']);
    assert.deepEqual(team.get('spec.users'), {
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    });
    assert.deepEqual(team.get('spec.access'), { 'x-kubernetes-list-type': 'atomic' });
    const secret = kindExtensions(v2Defs['dev.platform.management.v1.SharedSecret']);
    assert.deepEqual(secret.get('status.conditions'), {
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'type',
    });
    assert.equal(secret.get('spec.data'), undefined, 'data is a granular map');
    const key = kindExtensions(v3Schemas['dev.platform.management.v1.OwnedAccessKey']);
    assert.deepEqual(key.get('spec.scope'), { 'x-kubernetes-map-type': 'atomic' });
  });
});
