import assert from 'node:assert/strict';
import { test } from 'node:test';

import fc from 'fast-check';

import { bearerToken } from './bearer-token.js';

/** The reading by splitting, as upstream's authenticator does it (and as this module once did). */
function bySplitting(header: string | undefined): string | null {
  if (typeof header !== 'string') return null;
  const auth = header.trim();
  if (auth === '') return null;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return null;
  const token = parts[1] ?? '';
  return token === '' ? null : token;
}

const read = (authorization: string | undefined): string | null =>
  bearerToken({ headers: authorization === undefined ? {} : { authorization } });

test('bearerToken reads the token after the scheme, in any case', () => {
  assert.equal(read('Bearer abc'), 'abc');
  assert.equal(read('bearer abc'), 'abc');
  assert.equal(read('BEARER abc'), 'abc');
  assert.equal(read('  Bearer abc  '), 'abc');
  assert.equal(read('Bearer abc def'), 'abc', 'the token ends at the next space');
});

test('bearerToken: another scheme, no token or no header is not a bearer token', () => {
  for (const h of [undefined, '', '   ', 'Bearer', 'Bearer ', 'Bearer  abc', 'Basic abc', 'Bearerx abc', 'Bear abc', 'Bearer\tabc'])
    assert.equal(read(h), null, JSON.stringify(h));
});

test('bearerToken agrees with splitting the header on every input', () => {
  const scheme = fc.constantFrom('bearer', 'Bearer', 'BEARER', 'bEaReR', 'basic', 'bearerx', 'bear', 'beare\u0280', '');
  const piece = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', ' ', '\t', '\u017f', '\u212a', '-') });
  fc.assert(
    fc.property(scheme, piece, piece, (s, gap, rest) => {
      const header = `${gap.startsWith(' ') ? ' ' : ''}${s}${gap}${rest}`;
      assert.equal(read(header), bySplitting(header), JSON.stringify(header));
    }),
    { numRuns: 5000 },
  );
  fc.assert(fc.property(fc.string(), (header) => assert.equal(read(header), bySplitting(header))), { numRuns: 5000 });
});
