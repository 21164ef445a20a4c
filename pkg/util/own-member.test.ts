import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ownMember, setOwn } from './own-member.js';

describe('own members', () => {
  it('reads only what the object holds itself', () => {
    const m = JSON.parse('{"a":1,"__proto__":2}') as Record<string, unknown>;
    assert.equal(ownMember(m, 'a'), 1);
    assert.equal(ownMember(m, '__proto__'), 2);
    assert.equal(ownMember(m, 'toString'), undefined);
    assert.equal(ownMember(m, 'constructor'), undefined);
    assert.equal(ownMember(undefined, 'a'), undefined);
  });

  it('writes __proto__ as a member, leaving the prototype alone', () => {
    const m: Record<string, unknown> = {};
    setOwn(m, '__proto__', { polluted: true });
    setOwn(m, 'constructor', 'c');
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
    assert.equal(JSON.stringify(m), '{"__proto__":{"polluted":true},"constructor":"c"}');
  });
});
