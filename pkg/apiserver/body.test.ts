import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import { decodeBody, decodeYAML } from './body.js';

function badRequest(pattern: RegExp) {
  return (err: unknown): boolean => err instanceof ApiError && err.code === 400 && pattern.test(err.message);
}

describe('body decoding', () => {
  it('decodes JSON and reports malformed JSON briefly', () => {
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), 'json').value, { a: 1 });
    assert.throws(
      () => decodeBody(Buffer.from('{"a":'), 'json'),
      badRequest(/^the request body is not valid JSON: /),
    );
    assert.throws(() => decodeBody(Buffer.from('  '), 'json'), badRequest(/empty/));
  });

  it('decodes a YAML map with YAML 1.2 scalars', () => {
    const { value, duplicates } = decodeYAML('metadata:\n  name: x\nspec:\n  n: 3\n  s: yes\n');
    assert.deepEqual(value, { metadata: { name: 'x' }, spec: { n: 3, s: 'yes' } });
    assert.deepEqual(duplicates, []);
  });

  it('reports duplicate keys with their line', () => {
    const { value, duplicates } = decodeYAML('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n');
    assert.deepEqual(value, { a: 3, b: { c: 2 } });
    assert.deepEqual(duplicates, [
      'line 4: key "c" already set in map',
      'line 5: key "a" already set in map',
    ]);
  });

  it('refuses alias bombs, several documents, non-maps, empty and malformed YAML', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    ].join('\n');
    assert.throws(() => decodeYAML(bomb), badRequest(/not valid YAML/));
    assert.throws(() => decodeYAML('a: 1\n---\nb: 2\n'), badRequest(/single YAML document/));
    assert.throws(() => decodeYAML('- 1\n- 2\n'), badRequest(/YAML map/));
    assert.throws(() => decodeYAML('just a string'), badRequest(/YAML map/));
    assert.throws(() => decodeYAML(''), badRequest(/empty/));
    assert.throws(() => decodeYAML('# only a comment\n'), badRequest(/empty/));
    assert.throws(() => decodeYAML('a: [1,\n'), badRequest(/^the request body is not valid YAML: line \d+/));
  });
});
