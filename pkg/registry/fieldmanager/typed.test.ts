import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FieldSet } from './field-set.js';
import { fieldElement, pathToString, valueElement } from './path.js';
import { fromOpenAPI } from './schema.js';
import { compareValuesTyped, mergeValues, removeItems, toFieldSet, TypedValueError } from './typed.js';
import type { Value } from './value.js';

const atom = fromOpenAPI({
  type: 'object',
  properties: {
    name: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    args: { type: 'array', items: { type: 'string' } },
    rules: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, verb: { type: 'string' } } },
    },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    ref: {
      type: 'object',
      'x-kubernetes-map-type': 'atomic',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    },
  },
});

const paths = (s: FieldSet): string[] => s.paths().map(pathToString);

describe('typed values', () => {
  it('lists the fields a value sets: leaves, set members, list-map items, atomic nodes, empty maps', () => {
    const v: Value = {
      name: 'x',
      tags: ['a'],
      args: ['1', '2'],
      rules: [{ name: 'r', verb: 'get' }],
      labels: {},
      ref: { a: '1' },
    };
    assert.deepEqual(paths(toFieldSet(v, atom)), [
      '.args',
      '.labels',
      '.name',
      '.ref',
      '.rules[name="r"]',
      '.rules[name="r"].name',
      '.rules[name="r"].verb',
      '.tags[="a"]',
    ]);
  });

  it("merges an applied configuration: sets and list-maps by identity (in smd 4.4.2's order), atomic nodes whole", () => {
    const live: Value = {
      tags: ['b', 'a'],
      args: ['1'],
      rules: [{ name: 'r', verb: 'get' }],
      ref: { a: '1', b: '2' },
    };
    const config: Value = {
      tags: ['c', 'a'],
      args: ['2'],
      rules: [{ name: 's' }, { name: 'r', verb: 'put' }],
      ref: { a: '3' },
    };
    assert.deepEqual(mergeValues(live, config, atom), {
      // The configuration's order; a live item it leaves alone stays where it stood.
      tags: ['b', 'c', 'a'],
      args: ['2'],
      rules: [{ name: 's' }, { name: 'r', verb: 'put' }],
      ref: { a: '3' },
    });
  });

  it('compares two versions field by field', () => {
    const c = compareValuesTyped(
      { name: 'x', tags: ['a'], labels: { k: 'v' } },
      { name: 'y', tags: ['b'] },
      atom,
    );
    assert.deepEqual(paths(c.modified), ['.name']);
    assert.deepEqual(paths(c.added), ['.tags[="b"]']);
    assert.deepEqual(paths(c.removed), ['.labels', '.labels.k', '.tags[="a"]']);
  });

  it('removes fields, set members and whole subtrees', () => {
    const v: Value = { name: 'x', tags: ['a', 'b'], labels: { k: 'v', l: 'w' } };
    const gone = FieldSet.of(
      [fieldElement('tags'), valueElement('a')],
      [fieldElement('labels'), fieldElement('k')],
      [fieldElement('name')],
    );
    assert.deepEqual(removeItems(v, gone, atom), { tags: ['b'], labels: { l: 'w' } });
  });

  it('refuses duplicates in a set and a value of the wrong kind, with the path', () => {
    assert.throws(
      () => mergeValues({}, { tags: ['a', 'a'] }, atom),
      (e: Error) =>
        e instanceof TypedValueError && /\.tags: duplicate entries for key \[="a"\]/.test(e.message),
    );
    assert.throws(
      () => mergeValues({}, { name: 5 }, atom),
      (e: Error) => e instanceof TypedValueError && e.message === '.name: rhs: expected string, got number',
    );
  });
});
