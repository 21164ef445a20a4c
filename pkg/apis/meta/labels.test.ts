import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseLabelSelector, type LabelSelector } from './labels.js';

function parse(text: string): LabelSelector {
  const r = parseLabelSelector(text);
  if (!r.ok) assert.fail(`unexpected parse error for ${JSON.stringify(text)}: ${r.error}`);
  return r.value;
}

function parseError(text: string): string {
  const r = parseLabelSelector(text);
  if (r.ok) assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
  return r.error;
}

describe('parseLabelSelector', () => {
  it('selects everything when empty', () => {
    const s = parse('');
    assert.equal(s.empty, true);
    assert.equal(s.matches({ a: 'b' }), true);
    assert.equal(s.matches(undefined), true);
  });

  it('matches equality and inequality', () => {
    const s = parse('env=prod,tier!=web');
    assert.equal(s.matches({ env: 'prod', tier: 'db' }), true);
    assert.equal(s.matches({ env: 'prod' }), true, '!= matches when the key is absent');
    assert.equal(s.matches({ env: 'prod', tier: 'web' }), false);
    assert.equal(s.matches({ env: 'dev' }), false);
    assert.equal(parse('env==prod').matches({ env: 'prod' }), true);
  });

  it('matches set-based requirements, exists and does-not-exist', () => {
    const s = parse('app in (a, b),zone notin (x),team,!legacy');
    assert.equal(s.matches({ app: 'a', team: '' }), true);
    assert.equal(s.matches({ app: 'b', team: 't', zone: 'y' }), true);
    assert.equal(s.matches({ app: 'c', team: 't' }), false);
    assert.equal(s.matches({ app: 'a', team: 't', zone: 'x' }), false);
    assert.equal(s.matches({ app: 'a' }), false, 'team must exist');
    assert.equal(s.matches({ app: 'a', team: 't', legacy: 'true' }), false);
  });

  it('treats in and notin as values inside parentheses', () => {
    const s = parse('x in (in,notin)');
    assert.equal(s.matches({ x: 'notin' }), true);
  });

  it('accepts empty values', () => {
    assert.equal(parse('a=').matches({ a: '' }), true);
    assert.equal(parse('a in (,b)').matches({ a: '' }), true);
    assert.equal(parse('a in ()').matches({ a: '' }), true);
  });

  it('supports numeric gt and lt', () => {
    assert.equal(parse('gen>3').matches({ gen: '4' }), true);
    assert.equal(parse('gen>3').matches({ gen: '3' }), false);
    assert.equal(parse('gen<3').matches({ gen: '2' }), true);
    assert.equal(parse('gen<3').matches({}), false);
  });

  it('tells which value a key is pinned to', () => {
    const s = parse('a=1,b in (2),c in (3,4),d!=5');
    assert.equal(s.requiresExactMatch('a'), '1');
    assert.equal(s.requiresExactMatch('b'), '2');
    assert.equal(s.requiresExactMatch('c'), undefined);
    assert.equal(s.requiresExactMatch('d'), undefined);
  });

  it('prints a canonical, key-sorted form', () => {
    assert.equal(parse('b in (y,x), a=1, !c').toString(), 'a=1,b in (x,y),!c');
  });

  it('rejects malformed selectors with a message that says what was expected', () => {
    assert.equal(parseError('a=b,'), "found '', expected: identifier after ','");
    assert.equal(parseError('a in b'), "unable to parse requirement: found 'b' expected: '('");
    assert.equal(parseError('a in (b'), "unable to parse requirement: found '', expected: ',' or ')'");
    assert.equal(
      parseError('a b'),
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    assert.equal(parseError(',a'), "found ',', expected: !, identifier, or 'end of string'");
    assert.equal(parseError('!a=b'), "found '=', expected: ',' or 'end of string'");
  });

  it('rejects invalid keys and values', () => {
    assert.match(
      parseError('a@b=c'),
      /^unable to parse requirement: key: Invalid value: "a@b": name part must consist of/,
    );
    assert.match(parseError('a=b c'), /expected: ',' or 'end of string'/);
    assert.match(
      parseError('a=-x'),
      /values\[0\]\[a\]: Invalid value: "-x": a valid label must be an empty string/,
    );
    assert.match(parseError('a>x'), /for 'Gt', 'Lt' operators, the value must be an integer/);
  });
});
