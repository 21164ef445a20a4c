import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYAML } from 'yaml';

import { managementKinds } from '../../registry/management/kinds.js';
import { startTestServer, type TestServer } from '../testing/fakes.js';
import { openAPIV2 } from './index.js';
import {
  decodeOpenAPIV2Proto,
  encodeOpenAPIV2Proto,
  OPENAPI_V2_PROTOBUF_MEDIA_TYPE,
} from './openapi-v2-proto.js';

const GROUP = 'management.platform.dev';

interface Named<T> {
  name: string;
  value: T;
}
interface Schema {
  _ref?: string;
  description?: string;
  type?: { value: string[] };
  format?: string;
  required?: string[];
  items?: { schema: Schema[] };
  properties?: { additional_properties: Named<Schema>[] };
  additional_properties?: { schema?: Schema; boolean?: boolean };
  vendor_extension?: Named<{ yaml: string }>[];
}
interface Doc {
  swagger: string;
  info: { title: string; version: string };
  definitions: { additional_properties: Named<Schema>[] };
  paths: { path: Named<Record<string, { operation_id?: string }>>[] };
}

function prop(s: Schema | undefined, name: string): Schema | undefined {
  return s?.properties?.additional_properties.find((p) => p.name === name)?.value;
}

function realDocument(): Doc {
  const resources = managementKinds(GROUP).map((k) => ({ info: k.info, schema: k.schema }));
  return decodeOpenAPIV2Proto(encodeOpenAPIV2Proto(openAPIV2(GROUP, 'v1', resources))) as unknown as Doc;
}

describe('OpenAPI v2 as gnostic protobuf', () => {
  it('puts swagger, info and definitions at gnostic field numbers 1, 2 and 9', () => {
    const bytes = encodeOpenAPIV2Proto({
      swagger: '2.0',
      info: { title: 'T', version: 'v' },
      definitions: { A: { type: 'string' } },
    });
    // Field 1 (string "2.0"), then field 2 (Info: title=1 "T", version=2 "v").
    assert.deepEqual([...bytes.subarray(0, 5)], [0x0a, 3, 0x32, 0x2e, 0x30]);
    assert.deepEqual([...bytes.subarray(5, 13)], [0x12, 6, 0x0a, 1, 0x54, 0x12, 1, 0x76]);
    // Field 9 (Definitions) somewhere after it, holding NamedSchema "A".
    assert.ok(bytes.includes(Buffer.from([0x4a])));
    const doc = decodeOpenAPIV2Proto(bytes) as unknown as Doc;
    assert.equal(doc.definitions.additional_properties[0]?.name, 'A');
    assert.deepEqual(doc.definitions.additional_properties[0]?.value.type?.value, ['string']);
  });

  it('carries what kubectl explain reads for SharedSecret: fields, refs, maps, GVK', () => {
    const doc = realDocument();
    assert.equal(doc.swagger, '2.0');
    const secret = doc.definitions.additional_properties.find(
      (d) => d.name === 'dev.platform.management.v1.SharedSecret',
    )?.value;
    assert.ok(secret, 'SharedSecret definition');
    assert.deepEqual(secret.type?.value, ['object']);
    assert.match(
      prop(secret, 'metadata')?._ref ?? '',
      /^#\/definitions\/io\.k8s\.apimachinery\.pkg\.apis\.meta\.v1\.ObjectMeta$/,
    );
    const data = prop(prop(secret, 'spec'), 'data');
    assert.ok(data?.description);
    assert.deepEqual(data.additional_properties?.schema?.type?.value, ['string']);
    assert.equal(data.additional_properties?.schema?.format, 'byte');

    const gvk = secret.vendor_extension?.find((e) => e.name === 'x-kubernetes-group-version-kind');
    assert.ok(gvk, 'GVK extension');
    assert.deepEqual(parseYAML(gvk.value.yaml), [{ group: GROUP, version: 'v1', kind: 'SharedSecret' }]);

    const list = doc.definitions.additional_properties.find(
      (d) => d.name === 'dev.platform.management.v1.SharedSecretList',
    )?.value;
    assert.equal(
      prop(list, 'items')?.items?.schema[0]?._ref,
      '#/definitions/dev.platform.management.v1.SharedSecret',
    );
    assert.ok(list?.required?.includes('items'));
  });

  it('keeps the paths and their operations', () => {
    const doc = realDocument();
    const item = doc.paths.path.find((p) => p.name.endsWith('/sharedsecrets/{name}'));
    assert.ok(item);
    assert.match(item.value.get?.operation_id ?? '', /SharedSecret/);
  });
});

describe('serving OpenAPI v2 as protobuf', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  async function get(
    path: string,
    accept?: string,
  ): Promise<{ status: number; type: string | null; body: Buffer }> {
    const headers: Record<string, string> = { authorization: 'Bearer admin-token' };
    if (accept) headers.accept = accept;
    const res = await fetch(new URL(path, s.url), { headers });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: Buffer.from(await res.arrayBuffer()),
    };
  }

  it('answers the protobuf Accept of old kubectl under every prefix, and the legacy path', async () => {
    // What kubectl 1.20 sends; the answer carries the dotted form Go can parse.
    const plain = await get('/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
    assert.equal(plain.status, 200);
    assert.equal(plain.type, OPENAPI_V2_PROTOBUF_MEDIA_TYPE);
    const doc = decodeOpenAPIV2Proto(plain.body) as unknown as Doc;
    // The test server's fake builders make a bare document; the encoding itself is tested above.
    assert.equal(doc.swagger, '2.0');

    const prefixed = await get('/kubernetes/management/openapi/v2', OPENAPI_V2_PROTOBUF_MEDIA_TYPE);
    assert.equal(prefixed.status, 200);
    assert.deepEqual(prefixed.body, plain.body);
    const legacy = await get('/swagger-2.0.0.pb-v1');
    assert.equal(legacy.status, 200);
    assert.deepEqual(legacy.body, plain.body);
  });

  it('still serves JSON when JSON is asked for or preferred', async () => {
    for (const accept of [
      undefined,
      'application/json',
      `application/json, ${OPENAPI_V2_PROTOBUF_MEDIA_TYPE};q=0.5`,
    ]) {
      const res = await get('/openapi/v2', accept);
      assert.equal(res.status, 200);
      assert.equal(res.type, 'application/json');
      assert.equal((JSON.parse(res.body.toString('utf8')) as { swagger: string }).swagger, '2.0');
    }
  });
});
