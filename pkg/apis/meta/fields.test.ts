import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { objectMetaFieldsSet, parseFieldSelector, type FieldSelector } from './fields.js';

function parse(text: string): FieldSelector {
  const r = parseFieldSelector(text);
  if (!r.ok) assert.fail(`unexpected parse error: ${r.error}`);
  return r.value;
}

describe('parseFieldSelector', () => {
  const foo = objectMetaFieldsSet({ metadata: { name: 'foo', namespace: 'ns1' } });

  it('matches metadata.name and metadata.namespace with =, == and !=', () => {
    assert.equal(parse('metadata.name=foo').matches(foo), true);
    assert.equal(parse('metadata.name==foo').matches(foo), true);
    assert.equal(parse('metadata.name!=foo').matches(foo), false);
    assert.equal(parse('metadata.namespace=ns1,metadata.name=foo').matches(foo), true);
    assert.equal(parse('metadata.name=foo,metadata.name=bar').matches(foo), false);
    assert.equal(parse('').empty, true);
  });

  it('treats a cluster-scoped object as having an empty namespace', () => {
    const team = objectMetaFieldsSet({ metadata: { name: 't' } });
    assert.equal(parse('metadata.namespace=').matches(team), true);
  });

  it('tells which value a field is pinned to', () => {
    const s = parse('metadata.namespace=ns2,metadata.name!=x');
    assert.equal(s.requiresExactMatch('metadata.namespace'), 'ns2');
    assert.equal(s.requiresExactMatch('metadata.name'), undefined);
  });

  it('unescapes values', () => {
    const s = parse('metadata.name=a\\,b\\=c\\\\d');
    assert.equal(s.requiresExactMatch('metadata.name'), 'a,b=c\\d');
  });

  it('rejects fields other than metadata.name and metadata.namespace', () => {
    const r = parseFieldSelector('spec.x=1');
    assert.deepEqual(r, {
      ok: false,
      error: '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
  });

  it('rejects terms without an operator and bad escapes', () => {
    assert.deepEqual(parseFieldSelector('metadata.name'), {
      ok: false,
      error: "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    });
    const bad = parseFieldSelector('metadata.name=a\\b');
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? '' : bad.error, /invalid escape sequence: \\b/);
  });
});
