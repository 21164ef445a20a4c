import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJsonStream } from './json-stream.js';

describe('parseJsonStream', () => {
  it('splits pretty-printed documents written back to back', () => {
    const text =
      '{\n  "type": "ADDED",\n  "object": {"a": "}{"}\n}\n{\n  "type": "DELETED", "object": {"b": [1, {"c": "\\"}"}]}\n}\n';
    assert.deepEqual(parseJsonStream(text), [
      { type: 'ADDED', object: { a: '}{' } },
      { type: 'DELETED', object: { b: [1, { c: '"}' }] } },
    ]);
  });

  it('leaves out a document that is still being written', () => {
    assert.deepEqual(parseJsonStream('{"a": 1}\n{"b": {"c": '), [{ a: 1 }]);
  });
});
