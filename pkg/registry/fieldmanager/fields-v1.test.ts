import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FieldSet } from './field-set.js';
import { fieldsV1ToSet, setToFieldsV1 } from './fields-v1.js';
import { fieldElement, indexElement, keyElement, pathToString, valueElement, type Path } from './path.js';

const f = fieldElement;

describe('FieldsV1', () => {
  it('writes fields, keys (sorted), set values and indexes as smd does, "." first for an owned node with owned children', () => {
    const set = FieldSet.of(
      [f('spec'), f('users'), valueElement('alice')],
      [
        f('spec'),
        f('conditions'),
        keyElement([
          { name: 'type', value: 'Ready' },
          { name: 'a', value: 1 },
        ]),
      ],
      [
        f('spec'),
        f('conditions'),
        keyElement([
          { name: 'type', value: 'Ready' },
          { name: 'a', value: 1 },
        ]),
        f('status'),
      ],
      [f('spec'), f('args'), indexElement(2)],
      [f('metadata'), f('labels'), f('app')],
    );
    assert.equal(
      JSON.stringify(setToFieldsV1(set)),
      JSON.stringify({
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:args': { 'i:2': {} },
          'f:conditions': { 'k:{"a":1,"type":"Ready"}': { '.': {}, 'f:status': {} } },
          'f:users': { 'v:"alice"': {} },
        },
      }),
    );
  });

  it('escapes values as Go encoding/json does (HTML-safe)', () => {
    const set = FieldSet.of([f('users'), valueElement('a<b>&c')]);
    assert.deepEqual(Object.keys(setToFieldsV1(set)['f:users'] ?? {}), ['v:"a\\u003cb\\u003e\\u0026c"']);
  });

  it('reads back what it writes, and skips element types it does not know', () => {
    const paths: Path[] = [
      [f('spec'), f('data'), f('k1')],
      [f('spec'), f('rules'), keyElement([{ name: 'name', value: 'r' }])],
      [f('spec'), f('rules'), keyElement([{ name: 'name', value: 'r' }]), f('verbs'), valueElement('get')],
    ];
    const set = FieldSet.of(...paths);
    const back = fieldsV1ToSet(JSON.parse(JSON.stringify(setToFieldsV1(set))));
    assert.ok(back.equals(set));
    const withUnknown = fieldsV1ToSet({ 'f:spec': { 'x:odd': {}, 'f:a': {} } });
    assert.deepEqual(withUnknown.paths().map(pathToString), ['.spec.a']);
    assert.throws(() => fieldsV1ToSet({ 'k:{not json': {} }), /parsing key as path element/);
  });

  it('prints paths as conflicts show them', () => {
    assert.equal(
      pathToString([
        f('spec'),
        f('access'),
        keyElement([{ name: 'name', value: 'x' }]),
        f('verbs'),
        valueElement('get'),
      ]),
      '.spec.access[name="x"].verbs[="get"]',
    );
    assert.equal(pathToString([f('spec'), f('args'), indexElement(0)]), '.spec.args[0]');
  });
});
