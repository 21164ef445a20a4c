// The stored form and the object a write returns: encodeWithObject builds both from
// one walk, and must give exactly the bytes the sorting replacer printed before and
// exactly the object JSON.parse gives for them (values, key order, resourceVersion),
// or fall back to parsing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '../apis/meta/types.js';
import { isObject } from '../apis/meta/types.js';
import { decodeObject, encodeObject, encodeWithObject, writtenObject } from './codec.js';
import { SqliteKV } from './sqlite/sqlite-kv.js';
import { KVStorage } from './store.js';

/** The stored form by its definition: sorted keys via a replacer, no resourceVersion. */
function reference(obj: KubeObject): Buffer {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  const sorted = (_k: string, v: unknown): unknown => {
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a `__proto__` key is data to be stored, as Go stores it.
    for (const k of Object.keys(v).sort())
      Object.defineProperty(out, k, { value: v[k], enumerable: true, writable: true, configurable: true });
    return out;
  };
  return Buffer.from(JSON.stringify({ ...obj, metadata }, sorted), 'utf8');
}

/** Equal values and the same key order at every level (JSON.stringify walks in enumeration order). */
function assertSameObject(actual: unknown, expected: unknown): void {
  assert.deepStrictEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

// Keys that sort differently from insertion order, integer-like keys (enumerated first), odd strings.
const key = fc.oneof(fc.string(), fc.constantFrom('10', '9', '0', 'a', 'B', 'resourceVersion', 'metadata'));
const plain = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
}));
// What JSON does not carry as itself: the encoder must fall back, never guess.
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(-0),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(new Date(0)),
  fc.constant([1, undefined, 2]),
  fc.constant({ toJSON: () => 'x' }),
  fc.constant(JSON.parse('{"__proto__":{"a":1}}') as unknown),
);
const object = fc
  .record({
    apiVersion: fc.string(),
    kind: fc.string(),
    metadata: fc.record(
      {
        name: fc.string(),
        resourceVersion: fc.string(),
        labels: fc.dictionary(key, fc.string(), { maxKeys: 3 }),
        extra: fc.oneof(plain.value, odd),
      },
      { requiredKeys: ['name'] },
    ),
    spec: fc.dictionary(key, fc.oneof(plain.value, odd), { maxKeys: 6 }),
    status: fc.option(plain.value, { nil: undefined }),
  })
  .map((o) => o as unknown as KubeObject);

describe('encodeWithObject', () => {
  it('stores the bytes the sorting replacer printed, and returns what parsing them gives', () => {
    fc.assert(
      fc.property(object, fc.integer({ min: 1, max: 1e9 }), (obj, revision) => {
        const before = JSON.stringify(obj);
        const encoded = encodeWithObject(obj);
        assert.ok(encoded.data.equals(reference(obj)), 'stored bytes changed');
        assert.ok(encodeObject(obj).equals(encoded.data));
        assertSameObject(writtenObject('/k', encoded, revision), decodeObject('/k', encoded.data, revision));
        assert.equal(JSON.stringify(obj), before, "the caller's object was modified");
      }),
      { numRuns: 2000 },
    );
  });

  it('falls back to parsing for values JSON does not carry as themselves', () => {
    for (const extra of [-0, Number.NaN, new Date(0), [1, undefined], { toJSON: () => 1 }]) {
      const encoded = encodeWithObject({ metadata: { name: 'a' }, spec: { extra } } as unknown as KubeObject);
      assert.equal(encoded.decoded, undefined);
      assertSameObject(writtenObject('/k', encoded, 7), decodeObject('/k', encoded.data, 7));
    }
  });

  it("shares nothing with the caller's object", () => {
    const obj = { metadata: { name: 'a', labels: { x: 'y' } }, spec: { list: [{ a: 1 }] } } as KubeObject;
    const out = writtenObject('/k', encodeWithObject(obj), 3);
    (out.metadata.labels as Record<string, string>)['x'] = 'changed';
    ((out['spec'] as { list: { a: number }[] }).list[0] as { a: number }).a = 2;
    assert.deepEqual(obj, { metadata: { name: 'a', labels: { x: 'y' } }, spec: { list: [{ a: 1 }] } });
  });
});

describe('KVStorage writes', () => {
  it('return exactly the stored object, read back and decoded', async () => {
    const kv = SqliteKV.open(':memory:');
    const storage = new KVStorage(kv);
    try {
      const created = await storage.create('/r/w/a', {
        kind: 'Widget',
        metadata: { name: 'a', uid: 'u', labels: { '9': 'n', '10': 'm', b: 'x' } },
        spec: { z: [1, { y: 2, x: null }], a: 'é\u2028' },
      } as KubeObject);
      const stored = await storage.get('/r/w/a');
      assertSameObject(created, stored);
      const updated = await storage.guaranteedUpdate('/r/w/a', (cur) => {
        const next = cur as KubeObject;
        next['spec'] = { added: true, a: 1 };
        return Promise.resolve(next);
      });
      assertSameObject(updated, await storage.get('/r/w/a'));
      assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);
    } finally {
      await storage.close();
    }
  });
});
