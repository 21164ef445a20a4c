import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import { decodeYAML } from './body.js';

function refusedWith(message: string) {
  return (err: unknown): boolean => err instanceof ApiError && err.code === 400 && err.message === message;
}

// Expected messages and objects are sigs.k8s.io/yaml v1.4.0's, run here with Go 1.19.
describe('YAML keys that are collections or aliases, as goyaml.v2 reads them', () => {
  it("refuses a collection key with goyaml's message, %#v of the decoded key", () => {
    const cases: readonly (readonly [string, string])[] = [
      ['? [a, b]\n: x\n', '[]interface {}{"a", "b"}'],
      ['? - a\n  - b\n: x\n', '[]interface {}{"a", "b"}'],
      ['? {a: 1}\n: x\n', 'map[interface {}]interface {}{"a":1}'],
      ['? []\n: x\n', '[]interface {}{}'],
      ['? {}\n: x\n', 'map[interface {}]interface {}{}'],
      [
        '? [b, {c: [1, 2.5, null, true]}]\n: x\n',
        '[]interface {}{"b", map[interface {}]interface {}{"c":[]interface {}{1, 2.5, interface {}(nil), true}}}',
      ],
      // fmt sorts a map's keys.
      ['? {b: 1, a: 2, 3: 4}\n: x\n', 'map[interface {}]interface {}{3:4, "a":2, "b":1}'],
      [
        '? {z: [1], a: {q: ~}}\n: x\n',
        'map[interface {}]interface {}{"a":map[interface {}]interface {}{"q":interface {}(nil)}, "z":[]interface {}{1}}',
      ],
      // A collection key inside one is refused first.
      ['? {[1]: 2}\n: x\n', '[]interface {}{1}'],
      ['? ["a\\tb", 1.5e10, 0x10, -0.0, 1e300]\n: x\n', '[]interface {}{"a\\tb", 1.5e+10, 16, -0, 1e+300}'],
      // An alias to an anchored collection is that collection.
      ['k: &k {a: 1}\n*k : x\n', 'map[interface {}]interface {}{"a":1}'],
      ['k: &k [1]\n*k : x\n', '[]interface {}{1}'],
      ['metadata:\n  name: x\n  labels:\n    ? [a]\n    : b\n', '[]interface {}{"a"}'],
    ];
    for (const [text, key] of cases) {
      assert.throws(() => decodeYAML(text), refusedWith(`yaml: invalid map key: ${key}`), text);
    }
  });

  it('emits no process warning for any body', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      for (const text of ['? [a, b]\n: x\n', '? {a: 1}\n: x\n', 'k: &k [1]\n*k : x\n', 'a: !unknown x\n', 'a: !!set {x}\n']) {
        try {
          decodeYAML(text);
        } catch {
          // refused or not, no warning either way
        }
      }
      // process.emitWarning delivers on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.map((w) => w.message),
      [],
    );
  });

  it("reads an alias key as its anchor's scalar, typed as the anchor resolved it", () => {
    assert.deepEqual(decodeYAML('k: &k foo\n*k : x\n').value, { k: 'foo', foo: 'x' });
    assert.deepEqual(decodeYAML('k: &k 12\n*k : x\n').value, { k: 12, '12': 'x' });
    // A float key is written as its float32: the value keeps its float64.
    assert.deepEqual(decodeYAML('k: &k 1e20\n*k : x\n').value, { k: 1e20, '1e+20': 'x' });
    assert.deepEqual(decodeYAML('k: &k 0.1\n*k : x\n').value, { k: 0.1, '0.1': 'x' });
    assert.deepEqual(decodeYAML('k: &k "q"\n*k : x\n').value, { k: 'q', q: 'x' });
    // As a typed key it clashes with the same value written out.
    const { value, duplicates } = decodeYAML('k: &k yes\nz: {*k : x, true: q}\n');
    assert.deepEqual(value, { k: true, z: { true: 'q' } });
    assert.deepEqual(duplicates, ['line 2: key true already set in map']);
    assert.throws(
      () => decodeYAML('k: &k ~\n*k : x\n'),
      refusedWith('error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>'),
    );
    assert.throws(() => decodeYAML('a: &x {b: {*x : 1}}\n'), refusedWith("yaml: anchor 'x' value contains itself"));
  });

  it('reads `.5_0` as a key as goyaml resolves it: the float 0.5', () => {
    const { value, duplicates } = decodeYAML('.5_0: x\n0.5: z\n.0_0_1: w\n._5: v\n');
    assert.deepEqual(value, { '0.5': 'z', '0.001': 'w', '._5': 'v' });
    assert.deepEqual(duplicates, ['line 2: key 0.5 already set in map']);
  });
});
