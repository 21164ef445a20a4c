import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString } from '../../apis/meta/field-errors.js';
import { fieldManagerErrors } from './managed-fields.js';

const messages = (fieldManager: string): string[] => fieldManagerErrors(fieldManager).map(fieldErrorString);

describe('fieldManager validation (apimachinery ValidateFieldManager)', () => {
  it('accepts empty (not set), printable text and spaces, up to 128 bytes', () => {
    assert.deepEqual(messages(''), []);
    assert.deepEqual(messages('kubectl-client-side-apply'), []);
    assert.deepEqual(messages('my manager / été ✓'), []);
    assert.deepEqual(messages('a'.repeat(128)), []);
  });

  it('refuses more than 128 bytes, counting bytes as Go len does', () => {
    assert.deepEqual(messages('a'.repeat(129)), ['fieldManager: Too long: must have at most 128 bytes']);
    // 64 two-byte characters are 128 bytes; one more is too long.
    assert.deepEqual(messages('é'.repeat(64)), []);
    assert.deepEqual(messages('é'.repeat(65)), ['fieldManager: Too long: must have at most 128 bytes']);
  });

  it('names each unprintable character with its byte position (unicode.IsPrint)', () => {
    assert.deepEqual(messages('a\nb'), [
      'fieldManager: Invalid value: "a\\nb": invalid character U+000A (at position 1)',
    ]);
    assert.deepEqual(messages('é\u0000'), [
      'fieldManager: Invalid value: "é\\u0000": invalid character U+0000 (at position 2)',
    ]);
    // Not printable for Go although JavaScript calls them whitespace or format characters.
    assert.equal(messages('a\tb').length, 1);
    assert.equal(messages('a\u00a0b').length, 1);
    assert.equal(messages('a\u200bb').length, 1);
    assert.equal(messages('\ue000').length, 1);
  });
});
