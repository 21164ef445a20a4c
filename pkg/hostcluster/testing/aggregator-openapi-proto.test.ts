import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openAPIV2 } from '../../apiserver/openapi/index.js';
import { decodeOpenAPIV2Proto, encodeOpenAPIV2Proto } from '../../apiserver/openapi/openapi-v2-proto.js';
import { managementKinds } from '../../registry/management/kinds.js';
import { encodeGnosticDocument } from './aggregator-openapi-proto.js';

test('writes gnostic field numbers and leaves proto3 defaults out', () => {
  const bytes = encodeGnosticDocument({
    swagger: '2.0',
    info: { title: 't', version: '' },
    definitions: { A: { type: 'string', uniqueItems: false } },
  });
  // Document.swagger = 1, Document.info = 2 {title = 1}, Document.definitions = 9
  // {NamedSchema = 1 {name = 1, value = 2 {Schema.type = 22 {TypeItem.value = 1}}}}.
  const expected = [
    '0a03322e30',
    '1203' + '0a0174',
    '4a12' + '0a10' + '0a0141' + '120b' + 'b20108' + '0a06' + Buffer.from('string').toString('hex'),
  ].join('');
  assert.equal(bytes.toString('hex'), expected);
});

/** A decoded message without the values proto3 leaves out (the server's encoder writes some). */
function withoutDefaults(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDefaults);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === false || x === '' || x === 0 || (Array.isArray(x) && x.length === 0)) continue;
    out[k] = withoutDefaults(x);
  }
  return out;
}

// Two encodings written apart from the same reference must agree: a wrong field
// number on either side fails here, and kubectl through the double would see it too.
test("the double's encoding of the server's document reads back as the server's own", () => {
  const group = 'management.platform.dev';
  const resources = managementKinds(group).map((k) => ({ info: k.info, schema: k.schema }));
  const doc = openAPIV2(group, 'v1', resources);
  const ours = withoutDefaults(decodeOpenAPIV2Proto(encodeGnosticDocument(doc)));
  const theirs = withoutDefaults(decodeOpenAPIV2Proto(encodeOpenAPIV2Proto(doc)));
  assert.deepEqual(ours, theirs);
});
