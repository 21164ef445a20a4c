import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import { decodeYAML } from './body.js';

function refusedWith(message: string) {
  return (err: unknown): boolean => err instanceof ApiError && err.code === 400 && err.message === message;
}

// Expected messages and objects are sigs.k8s.io/yaml v1.4.0's, run here with Go 1.19.
describe('YAML keys that are collections or aliases, as goyaml.v2 reads them', () => {
  it("refuses a collection key with goyaml's prefix and Go type, its contents not shown", () => {
    // Upstream prints the key's contents (`[]interface {}{"a", "b"}`); a key is body text,
    // perhaps a secret value, so ours shows `{...}` in their place.
    const list = '[]interface {}{...}';
    const map = 'map[interface {}]interface {}{...}';
    const cases: readonly (readonly [string, string])[] = [
      ['? [a, b]\n: x\n', list],
      ['? - a\n  - b\n: x\n', list],
      ['? {a: 1}\n: x\n', map],
      ['? []\n: x\n', list],
      ['? {}\n: x\n', map],
      ['? [b, {c: [1, 2.5, null, true]}]\n: x\n', list],
      // A collection key inside one is refused first.
      ['? {[1]: 2}\n: x\n', list],
      ['? [{{a: 1}: 2}]\n: x\n', map],
      // An alias to an anchored collection is that collection.
      ['k: &k {a: 1}\n*k : x\n', map],
      ['k: &k [1]\n*k : x\n', list],
      ['metadata:\n  name: x\n  labels:\n    ? [a]\n    : b\n', list],
    ];
    for (const [text, key] of cases) {
      assert.throws(() => decodeYAML(text), refusedWith(`yaml: invalid map key: ${key}`), text);
    }
  });

  it('never quotes a value of the body in the message', () => {
    const text = 'd: &d {password: hunter2}\n? *d\n: x\n';
    assert.throws(() => decodeYAML(text), refusedWith('yaml: invalid map key: map[interface {}]interface {}{...}'));
    // However large the key, the message is the same (it was once cut, or empty, past 4096 characters).
    const big = `? [${Array.from({ length: 5000 }, (_, i) => `secret${i}`).join(', ')}]\n: x\n`;
    assert.throws(() => decodeYAML(big), refusedWith('yaml: invalid map key: []interface {}{...}'));
  });

  it("refuses a key whose anchor contains itself in goyaml's words, not with a stack overflow", () => {
    // kube-apiserver: 400 `yaml: anchor 'a' value contains itself`.
    for (const text of ['a: 1\n? &a [*a]\n: x\n', '? &a {k: [*a]}\n: x\n', 'a: 1\n? &a [[[*a]]]\n: x\n']) {
      assert.throws(() => decodeYAML(text), refusedWith("yaml: anchor 'a' value contains itself"), text);
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
