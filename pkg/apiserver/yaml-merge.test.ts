import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import { decodeYAML } from './body.js';

function badRequest(pattern: RegExp) {
  return (err: unknown): boolean => err instanceof ApiError && err.code === 400 && pattern.test(err.message);
}

// Every expectation is what sigs.k8s.io/yaml v1.4.0 gave for the same text, run here with
// Go 1.19: YAMLToJSON for the object, YAMLToJSONStrict for the duplicates (the lines of
// `yaml: unmarshal errors:` that fieldValidation=Strict refuses and Warn sends).
describe('YAML merge keys, as goyaml.v2 decodes them', () => {
  it('merges an anchored map at the `<<`: what comes after it wins, what came before loses', () => {
    const after = decodeYAML('base: &b {x: 1, size: 2}\nuse:\n  <<: *b\n  x: 3\n');
    assert.deepEqual(after.value, { base: { x: 1, size: 2 }, use: { x: 3, size: 2 } });
    assert.deepEqual(after.duplicates, ['line 4: key "x" already set in map']);
    // Not "explicit keys win": goyaml sets the merged entries where the `<<` stands.
    const before = decodeYAML('base: &b {x: 1, size: 2}\nuse:\n  x: 3\n  <<: *b\n');
    assert.deepEqual(before.value, { base: { x: 1, size: 2 }, use: { x: 1, size: 2 } });
    assert.deepEqual(before.duplicates, ['line 1: key "x" already set in map']);
  });

  it('merges a sequence of maps, the first one winning, each clash a duplicate', () => {
    const { value, duplicates } = decodeYAML(
      'a: &a {x: 1, z: 2}\nc: &c {z: 5, w: 6}\nb:\n  <<: [*a, *c]\n',
    );
    assert.deepEqual(value, { a: { x: 1, z: 2 }, c: { z: 5, w: 6 }, b: { x: 1, z: 2, w: 6 } });
    assert.deepEqual(duplicates, ['line 1: key "z" already set in map']);
    const inline = decodeYAML('b:\n  <<: [{p: 1}, {p: 2}]\n');
    assert.deepEqual(inline.value, { b: { p: 1 } });
    assert.deepEqual(inline.duplicates, ['line 2: key "p" already set in map']);
    // The same map twice: every entry clashes with itself.
    assert.deepEqual(decodeYAML('a: &a {x: 1}\nb: {<<: [*a, *a]}\n').duplicates, [
      'line 1: key "x" already set in map',
    ]);
  });

  it('merges inline maps, merges within merges, and keeps anchors written inside a merge', () => {
    assert.deepEqual(decodeYAML('<<: {a: 1}\nb:\n  <<: {p: 1}\n  q: 2\n').value, { a: 1, b: { p: 1, q: 2 } });
    const nested = decodeYAML('a: &a {x: 1}\nb: &b {<<: *a, w: 2}\nc: {<<: *b, z: 3}\n');
    assert.deepEqual(nested.value, { a: { x: 1 }, b: { x: 1, w: 2 }, c: { x: 1, w: 2, z: 3 } });
    assert.deepEqual(nested.duplicates, []);
    const chained = decodeYAML('a: &a {x: 1}\nb: &b {<<: *a}\nc: &c {<<: [*b, *b]}\nd: {<<: [*c, *c]}\n');
    assert.deepEqual(chained.value, { a: { x: 1 }, b: { x: 1 }, c: { x: 1 }, d: { x: 1 } });
    assert.equal(chained.duplicates.length, 4);
    // `y` is YAML 1.1's true; the anchor inside the merge entry still serves the alias after it.
    assert.deepEqual(decodeYAML('<<: &a {x: 1}\ny: *a\n').value, { x: 1, true: { x: 1 } });
    assert.deepEqual(decodeYAML('b: {<<: &m {x: 1, num: 0x10}}\nc: {<<: *m}\n').value, {
      b: { x: 1, num: 16 },
      c: { x: 1, num: 16 },
    });
    // An inline map merged once is decoded once: its own clash is reported once.
    const inlineClash = decodeYAML('b:\n  <<: {p: 1, p: 2}\n  p: 3\n');
    assert.deepEqual(inlineClash.value, { b: { p: 3 } });
    assert.deepEqual(inlineClash.duplicates, [
      'line 2: key "p" already set in map',
      'line 3: key "p" already set in map',
    ]);
  });

  it('reports duplicates in decoding order, a merged one at its `<<`', () => {
    const { duplicates } = decodeYAML('a: &a {x: 1}\na2: {q: 1, q: 2}\nb: {x: 2, <<: *a}\n');
    assert.deepEqual(duplicates, ['line 2: key "q" already set in map', 'line 1: key "x" already set in map']);
  });

  it('takes a plain `<<` or one tagged !!merge; a quoted or !!str one is an ordinary key', () => {
    assert.deepEqual(decodeYAML('a: &a {x: 1}\nb:\n  !!merge <<: *a\n').value, { a: { x: 1 }, b: { x: 1 } });
    assert.deepEqual(decodeYAML('? !!merge "<<"\n: {a: 1}\n').value, { a: 1 });
    assert.deepEqual(decodeYAML('a: &a {x: 1}\nb:\n  "<<": *a\n').value, { a: { x: 1 }, b: { '<<': { x: 1 } } });
    assert.deepEqual(decodeYAML('b: {!!merge <<: [{x: 1}], !!str <<: 2}\n').value, { b: { x: 1, '<<': 2 } });
  });

  it("refuses what is no map to merge, and a map merged into itself, in goyaml's words", () => {
    for (const text of [
      'a: &a [1]\nb:\n  <<: *a\n',
      'a: &a 1\nb:\n  <<: *a\n',
      'b:\n  <<: 1\n',
      'a: &a {x: 1}\nb: {<<: [*a, 1]}\n',
      'b: {<<: ~}\n',
    ]) {
      assert.throws(
        () => decodeYAML(text),
        badRequest(/^yaml: map merge requires map or sequence of maps as the value$/),
        text,
      );
    }
    assert.deepEqual(decodeYAML('b: {<<: []}\n').value, { b: {} });
    assert.throws(() => decodeYAML('a: &x {<<: *x}\n'), badRequest(/^yaml: anchor 'x' value contains itself$/));
    assert.throws(
      () => decodeYAML('a: &x {b: {<<: *x}}\n'),
      badRequest(/^yaml: anchor 'x' value contains itself$/),
    );
  });

  it('reads merged keys and values as any others (YAML 1.1, typed keys)', () => {
    // (`y` and `n` alone would be YAML 1.1 bools.)
    const { value, duplicates } = decodeYAML('a: &a {t: yes, num: 1_000, 1.5: f}\nb: {<<: *a, 1.50: g}\n');
    assert.deepEqual(value, { a: { t: true, num: 1000, '1.5': 'f' }, b: { t: true, num: 1000, '1.5': 'g' } });
    assert.deepEqual(duplicates, ['line 2: key 1.5 already set in map']);
    assert.throws(
      () => decodeYAML('a: &a {9223372036854775808: x}\nb: {<<: *a}\n'),
      badRequest(/unsupported map key of type: uint64, key: 0x8000000000000000$/),
    );
  });

  it('refuses merges that multiply a small document into a huge object', () => {
    const lines = ['l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}'];
    for (let i = 1; i <= 8; i++) {
      const prev = `*l${i - 1}`;
      lines.push(`l${i}: &l${i} {<<: [${Array(8).fill(prev).join(', ')}]}`);
    }
    assert.throws(
      () => decodeYAML(`${lines.join('\n')}\n`),
      badRequest(/^yaml: document contains excessive aliasing$/),
    );
  });

  it('points a later alias at the latest anchor of its name, whatever a merge copied (goyaml.v2)', () => {
    // The merged map's own `&v` comes before the redefinition: `*v` names `two`.
    const { value } = decodeYAML('base: &b {x: &v one}\nother: &v two\nm: {<<: *b}\nuse: *v\n');
    assert.deepEqual(value, { base: { x: 'one' }, other: 'two', m: { x: 'one' }, use: 'two' });
    const again = decodeYAML('a: &v 1\nb: *v\nc: &v 2\nd: *v\ne: {<<: {k: *v}}\n');
    assert.deepEqual(again.value, { a: 1, b: 1, c: 2, d: 2, e: { k: 2 } });
  });

  it('decodes a chain of merges as long as the body allows, without exhausting the stack', () => {
    // goyaml.v2 takes it (no depth limit on merges); the old expansion recursed once per link.
    const links = 20_000;
    let text = 'apiVersion: v1\nkind: X\na0: &a0 {k0: v}\n';
    for (let i = 1; i < links; i++) text += `a${i}: &a${i} {<<: *a${i - 1}}\n`;
    text += `<<: *a${links - 1}\n`;
    const { value } = decodeYAML(text) as { value: Record<string, unknown> };
    assert.equal(Object.keys(value).length, links + 3);
    assert.deepEqual(value[`a${links - 1}`], { k0: 'v' });
    assert.equal(value['k0'], 'v');
  });

  it('merges a sequence of many inline maps in one pass', () => {
    // Each inline map was once expanded after a fresh scan of the whole sequence: 20,000 took ~50 s.
    const maps = 30_000; // 90,000 merged nodes: within the cap on copies
    const text = `a: {<<: [${Array.from({ length: maps }, (_, i) => `{k${i % 100}: ${i}}`).join(', ')}]}\n`;
    const started = Date.now();
    const { value } = decodeYAML(text) as { value: { a: Record<string, unknown> } };
    assert.ok(Date.now() - started < 20_000, `decoded in ${Date.now() - started} ms`);
    // The first map of the sequence wins (goyaml sets them from the last to the first).
    assert.equal(value.a['k0'], 0);
    assert.equal(Object.keys(value.a).length, 100);
  });

  it('refuses merges inside merged values that multiply a kilobyte into gigabytes (goyaml.v2: excessive aliasing)', () => {
    // l1 holds ten maps that each merge l0, l2 ten that each merge l1, ...: 1.2 KB at l7 took
    // 22 s and 2.3 GB of heap when merged copies were built without being counted.
    const keys = (v: (k: number) => string): string => Array.from({ length: 10 }, (_, k) => `k${k}: ${v(k)}`).join(', ');
    const lines = [`l0: &l0 {${keys((k) => String(k))}}`];
    for (let i = 1; i <= 8; i++) lines.push(`l${i}: &l${i} {${keys(() => `{<<: *l${i - 1}}`)}}`);
    assert.throws(() => decodeYAML(`${lines.join('\n')}\n`), badRequest(/^yaml: document contains excessive aliasing$/));
  });

  it('refuses aliases of aliases of an empty collection that multiply a small body (goyaml.v2: excessive aliasing)', () => {
    // An alias to `[]` counted 0 against the per-anchor rule: 506 bytes decoded to 358 MB of JSON.
    const lines = ['a0: &a0 []'];
    for (let i = 1; i <= 9; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    assert.throws(() => decodeYAML(`${lines.join('\n')}\n`), badRequest(/^yaml: document contains excessive aliasing$/));
  });

  it('answers a merge chain nested past the depth limit with a 400, not a stack overflow', () => {
    // Each map merges the previous one under a key: 5,000 links nest 5,000 deep when decoded.
    const lines = ['t0: &t0 {a: 1}'];
    for (let i = 1; i < 5_000; i++) lines.push(`t${i}: &t${i} {a: {<<: *t${i - 1}}}`);
    assert.throws(() => decodeYAML(`${lines.join('\n')}\n`), badRequest(/nested too deeply|excessive aliasing/));
  });
});

