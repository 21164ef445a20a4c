import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatGoFloat, goSyntax, resolvePlain } from './yaml-scalars.js';

// Expected strings are Go's: strconv.FormatFloat(f, 'g', -1, bits) and fmt's %+#v
// (checked with Go 1.19's fmt and strconv).
describe('Go formatting of YAML values', () => {
  it('writes floats as strconv.FormatFloat(f, g, -1, 32 | 64)', () => {
    assert.equal(formatGoFloat(0.1, 32), '0.1');
    assert.equal(formatGoFloat(Math.PI, 32), '3.1415927');
    assert.equal(formatGoFloat(Math.PI, 64), '3.141592653589793');
    assert.equal(formatGoFloat(1e20, 64), '1e+20');
    assert.equal(formatGoFloat(123456789, 64), '1.23456789e+08');
    assert.equal(formatGoFloat(123456, 64), '123456');
    assert.equal(formatGoFloat(-0.00001, 64), '-1e-05');
    assert.equal(formatGoFloat(Infinity, 64), '+Inf');
    assert.equal(formatGoFloat(NaN, 32), 'NaN');
  });

  it('prints resolved scalars as %+#v does', () => {
    assert.equal(goSyntax(resolvePlain('1.0')), '1');
    assert.equal(goSyntax(resolvePlain('1e21')), '1e+21');
    assert.equal(goSyntax(resolvePlain('~')), '<nil>');
    assert.equal(goSyntax(resolvePlain('on')), 'true');
    assert.equal(goSyntax(resolvePlain('x\ty')), '"x\\ty"');
    assert.equal(goSyntax(resolvePlain('18446744073709551615')), '0xffffffffffffffff');
  });
});
