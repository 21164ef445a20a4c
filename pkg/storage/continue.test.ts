import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanPath, decodeContinue, encodeContinue } from './continue.js';
import { isStorageError } from './errors.js';

function rejects(token: string, message: string | RegExp): void {
  assert.throws(
    () => decodeContinue(token, '/registry/teams/'),
    (err: unknown) => {
      assert.ok(isStorageError(err, 'InvalidContinue'));
      if (typeof message === 'string') assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    },
  );
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

describe('continue tokens', () => {
  it('encode exactly as apiserver does (the checklist’s example token)', () => {
    assert.equal(
      encodeContinue('/registry/pods/default/foo\u0000', '/registry/pods/', 12345),
      'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDUsInN0YXJ0IjoiZGVmYXVsdC9mb29cdTAwMDAifQ',
    );
  });

  it('escape characters as Go’s encoding/json does', () => {
    const token = encodeContinue('/p/a<b>&c\u2028\u0000', '/p/', 7);
    assert.equal(
      Buffer.from(token, 'base64url').toString('utf8'),
      '{"v":"meta.k8s.io/v1","rv":7,"start":"a\\u003cb\\u003e\\u0026c\\u2028\\u0000"}',
    );
    assert.ok(!token.includes('='), 'no padding');
  });

  it('round-trip to the full key and revision, including rv -1', () => {
    for (const rv of [1, 987654321, -1]) {
      const token = encodeContinue('/registry/teams/ns/foo\u0000', '/registry/teams/', rv);
      assert.deepEqual(decodeContinue(token, '/registry/teams/'), {
        key: '/registry/teams/ns/foo\u0000',
        resourceVersion: rv,
      });
    }
  });

  it('refuse to encode a key outside the prefix', () => {
    assert.throws(() => encodeContinue('/other/x', '/registry/teams/', 1), /do not match/);
  });

  it('reject malformed tokens with the upstream messages', () => {
    rejects('abc$', 'invalid continue token: continue key is not valid: illegal base64 data at input byte 3');
    rejects(
      'abcde',
      'invalid continue token: continue key is not valid: illegal base64 data at input byte 4',
    );
    rejects('YWJj=', /illegal base64 data at input byte 4$/);
    rejects(
      b64('hello'),
      "invalid continue token: continue key is not valid: invalid character 'h' looking for beginning of value",
    );
    rejects(b64('{"v":'), 'invalid continue token: continue key is not valid: unexpected end of JSON input');
    rejects(b64('nope'), /^invalid continue token: continue key is not valid: ./);
    rejects(
      b64('[1]'),
      'invalid continue token: continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken',
    );
    rejects(
      b64('{"v":"meta.k8s.io/v1","rv":"5","start":"a"}'),
      'invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64',
    );
    rejects(
      b64('{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}'),
      'invalid continue token: continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64',
    );
    rejects(b64('{"v":"meta.k8s.io/v1","start":"a"}'), /incorrect encoded start resourceVersion/);
    rejects(b64('{"v":"meta.k8s.io/v1","rv":3}'), /encoded start key empty/);
    rejects(
      b64('{"rv":3,"start":"a"}'),
      'invalid continue token: continue key is not valid: server does not recognize this encoded version ',
    );
    rejects(
      b64('{"v":"meta.k8s.io/v1","rv":3,"start":"a/../../b"}'),
      'invalid continue token: continue key is not valid: a/../../b',
    );
    rejects(
      b64('{"v":"meta.k8s.io/v1","rv":3,"start":"a/"}'),
      'invalid continue token: continue key is not valid: a/',
    );
  });

  it('accept a start key given with a leading slash', () => {
    assert.deepEqual(decodeContinue(b64('{"v":"meta.k8s.io/v1","rv":3,"start":"/a\\u0000"}'), '/p/'), {
      key: '/p/a\u0000',
      resourceVersion: 3,
    });
  });
});

describe('cleanPath', () => {
  it('behaves as Go’s path.Clean on rooted paths', () => {
    const cases: [string, string][] = [
      ['/', '/'],
      ['/a/b', '/a/b'],
      ['/a//b', '/a/b'],
      ['/a/./b', '/a/b'],
      ['/a/../b', '/b'],
      ['/../a', '/a'],
      ['/a/', '/a'],
    ];
    for (const [input, want] of cases) assert.equal(cleanPath(input), want, input);
  });
});
