import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString, type FieldError } from '../meta/field-errors.js';
import { compileSchema } from './compile.js';

const schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        creationTimestamp: { type: 'string', format: 'date-time', nullable: true },
      },
    },
    spec: {
      type: 'object',
      properties: {
        ttl: { type: 'integer', format: 'int64' },
        port: { type: 'integer', format: 'int32' },
        mode: { type: 'string', enum: ['', 'Fast', 'Slow'] },
        since: { type: 'string', format: 'date-time' },
        note: { type: 'string', maxLength: 5 },
        code: { type: 'string', pattern: '^[a-z]+$' },
        size: { type: 'integer', minimum: 1 },
        data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
        access: {
          type: 'array',
          items: {
            type: 'object',
            required: ['verbs'],
            properties: { verbs: { type: 'array', items: { type: 'string' } }, name: { type: 'string' } },
          },
        },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        nothing: { type: 'object' },
        maybe: { type: 'string', nullable: true },
      },
    },
  },
};

const compiled = compileSchema(schema);

function messages(errs: FieldError[]): string[] {
  return errs.map(fieldErrorString);
}

describe('compileSchema validate', () => {
  it('accepts a valid object', () => {
    const obj = {
      apiVersion: 'g/v1',
      kind: 'K',
      metadata: { name: 'a' },
      spec: {
        ttl: 3600,
        port: 8443,
        mode: 'Fast',
        since: '2026-07-01T12:30:00Z',
        note: 'hi',
        code: 'abc',
        size: 2,
        data: { 'my-key': 'aGVsbG8=', empty: '', two: 'YWI=', three: 'YWJj' },
        access: [{ verbs: ['get'] }],
      },
    };
    assert.deepEqual(compiled.validate(obj), []);
  });

  it('reports a wrong type the way CRD validation does', () => {
    const errs = compiled.validate({ metadata: {}, spec: { ttl: 'string' } });
    assert.deepEqual(messages(errs), [
      'spec.ttl: Invalid value: "string": spec.ttl in body must be of type integer: "string"',
    ]);
    assert.equal(errs[0]?.type, 'FieldValueTypeInvalid');
  });

  it('reports a missing required field with a bracketed list path', () => {
    const errs = compiled.validate({ metadata: {}, spec: { access: [{ verbs: ['get'] }, { name: 'x' }] } });
    assert.deepEqual(messages(errs), ['spec.access[1].verbs: Required value']);
    assert.equal(errs[0]?.type, 'FieldValueRequired');
  });

  it('reports an enum violation as Unsupported value with the supported list', () => {
    const errs = compiled.validate({ metadata: {}, spec: { mode: 'Medium' } });
    assert.deepEqual(messages(errs), [
      'spec.mode: Unsupported value: "Medium": supported values: "", "Fast", "Slow"',
    ]);
  });

  it('only reports the type when a value of the wrong type also misses an enum', () => {
    const errs = compiled.validate({ metadata: {}, spec: { mode: 5 } });
    assert.equal(errs.length, 1);
    assert.equal(errs[0]?.type, 'FieldValueTypeInvalid');
  });

  it('checks base64 strictly and names the map key without echoing the value', () => {
    for (const bad of [
      'aGVsbG8',
      'aGVsbG8==',
      'aGV sbG8=',
      'aGVs\nbG8=',
      'aGVs_G8=',
      'plaintext-password!',
    ]) {
      const errs = compiled.validate({ metadata: {}, spec: { data: { 'my-key': bad } } });
      assert.equal(errs.length, 1, `expected ${JSON.stringify(bad)} to be rejected`);
      assert.equal(errs[0]?.field, 'spec.data[my-key]');
      const text = fieldErrorString(errs[0] as FieldError);
      assert.equal(text, 'spec.data[my-key]: Invalid value: spec.data[my-key] in body must be of type byte');
      assert.ok(!text.includes(bad));
    }
  });

  it('checks date-time and int32 formats', () => {
    assert.deepEqual(messages(compiled.validate({ metadata: {}, spec: { since: 'yesterday' } })), [
      'spec.since: Invalid value: "yesterday": spec.since in body must be of type date-time: "yesterday"',
    ]);
    assert.equal(compiled.validate({ metadata: {}, spec: { since: '2026-02-30T00:00:00Z' } }).length, 1);
    assert.deepEqual(
      compiled.validate({ metadata: {}, spec: { since: '2026-02-28T00:00:00.123+02:00' } }),
      [],
    );
    assert.equal(compiled.validate({ metadata: {}, spec: { port: 2 ** 31 } }).length, 1);
    assert.deepEqual(compiled.validate({ metadata: {}, spec: { ttl: 2 ** 40 } }), []);
  });

  it('words value limits like kube-openapi', () => {
    assert.deepEqual(messages(compiled.validate({ metadata: {}, spec: { size: 0, code: 'A1' } })), [
      'spec.code: Invalid value: "A1": spec.code in body should match \'^[a-z]+$\'',
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
    ]);
    const tooLong = compiled.validate({ metadata: {}, spec: { note: 'toolong' } });
    assert.equal(tooLong[0]?.type, 'FieldValueTooLong');
    assert.equal(tooLong[0]?.field, 'spec.note');
  });

  it('treats nulls in non-nullable fields as unset and keeps nullable ones', () => {
    assert.deepEqual(compiled.validate({ metadata: {}, spec: { ttl: null, maybe: null } }), []);
    assert.deepEqual(messages(compiled.validate({ metadata: {}, spec: { access: [{ verbs: null }] } })), [
      'spec.access[0].verbs: Required value',
    ]);
  });

  it('does not validate metadata (the Store does)', () => {
    assert.deepEqual(compiled.validate({ metadata: { name: 5, labels: { a: 1 } }, spec: {} }), []);
  });

  it('does not change the object it validates', () => {
    const obj = { metadata: {}, spec: { ttl: null } };
    compiled.validate(obj);
    assert.deepEqual(obj, { metadata: {}, spec: { ttl: null } });
  });
});

describe('compileSchema unknownFields and prune', () => {
  it('reports unknown fields as field paths in document order', () => {
    const obj = {
      metadata: { name: 'a', foo: 1, labels: { any: 'x' } },
      spec: {
        colour: 'red',
        access: [{ verbs: ['get'], foo: true }],
        data: { whatever: 'YQ==' },
        free: { anything: { goes: 1 } },
        nothing: { a: 1 },
      },
      extra: 1,
    };
    assert.deepEqual(compiled.unknownFields(obj), [
      'metadata.foo',
      'spec.colour',
      'spec.access[0].foo',
      'spec.nothing.a',
      'extra',
    ]);
  });

  it('prune removes exactly the unknown fields and disallowed nulls', () => {
    const obj = {
      metadata: { name: 'a', foo: 1, creationTimestamp: null },
      spec: {
        colour: 'red',
        ttl: null,
        maybe: null,
        access: [{ verbs: ['get'], foo: true }],
        free: { x: 1 },
      },
    };
    compiled.prune(obj);
    assert.deepEqual(obj, {
      metadata: { name: 'a', creationTimestamp: null },
      spec: { maybe: null, access: [{ verbs: ['get'] }], free: { x: 1 } },
    });
    assert.deepEqual(compiled.unknownFields(obj), []);
  });

  it('ignores values that are not objects where objects are expected', () => {
    assert.deepEqual(compiled.unknownFields('nope'), []);
    assert.deepEqual(compiled.unknownFields({ spec: 'text' }), []);
  });
});
