// Duplicate keys in sets and list-maps, as structured-merge-diff 4.4 (kube-apiserver
// 1.32) records them. The cases and their expected managed fields are those of smd
// v4.4.2's merge/duplicates_test.go, over the same schema: a writer that leaves a key
// duplicated owns that key as one whole item, never the fields of its copies.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { FieldSet } from './field-set.js';
import { pathToString } from './path.js';
import { fromOpenAPI } from './schema.js';
import { toFieldSet } from './typed.js';
import { ConflictsError, Updater, type ManagedFieldSets } from './updater.js';
import type { Value } from './value.js';

const atom = fromOpenAPI({
  type: 'object',
  properties: {
    list: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, value1: { type: 'integer' }, value2: { type: 'integer' } },
      },
    },
    unrelated: { type: 'integer' },
    set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
  },
});

const paths = (s: FieldSet): string[] => s.paths().map(pathToString).sort();

/** A sequence of writes to one object, as smd's fixture runs them. */
class Sequence {
  private readonly updater = new Updater({ schema: atom, apiVersion: 'v1' });
  object: Value = {};
  managers: ManagedFieldSets = new Map();

  update(manager: string, object: Value): this {
    this.managers = this.updater.update(this.object, object, this.managers, manager).managers;
    this.object = object;
    return this;
  }

  apply(manager: string, config: Value, force = false): this {
    const result = this.updater.apply(this.object, config, this.managers, manager, force);
    this.managers = result.managers;
    if (result.object !== undefined) this.object = result.object;
    return this;
  }

  owned(): Record<string, string[]> {
    return Object.fromEntries([...this.managers].map(([m, vs]) => [m, paths(vs.set)]));
  }
}

const conflictPaths = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConflictsError)
      return err.conflicts.map((c) => `${c.manager} ${pathToString(c.path)}`);
    throw err;
  }
  assert.fail('expected conflicts');
};

const a1 = { name: 'a', value1: 1 };
const a2 = { name: 'a', value1: 2 };
const b3 = { name: 'b', value1: 3 };
const bFields = ['.list[name="b"]', '.list[name="b"].name', '.list[name="b"].value1'];

describe('duplicate keys (smd 4.4)', () => {
  it('a duplicated key is owned as one item, without its fields', () => {
    assert.deepEqual(paths(toFieldSet({ list: [a1, a2, b3] }, atom)), ['.list[name="a"]', ...bFields]);
    assert.deepEqual(paths(toFieldSet({ set: [1, 1, 3, 4] }, atom)), ['.set[=1]', '.set[=3]', '.set[=4]']);
    const s = new Sequence().update('updater', { list: [a1, a2, b3] });
    assert.deepEqual(s.owned(), { updater: ['.list', '.list[name="a"]', ...bFields] });
  });

  it('an update that duplicates a set member takes it from its owner', () => {
    const s = new Sequence().update('one', { set: [1, 3, 4] }).update('two', { set: [1, 1, 3, 4] });
    assert.deepEqual(s.owned(), { one: ['.set', '.set[=3]', '.set[=4]'], two: ['.set[=1]'] });
  });

  it('an update that removes a duplicate takes the member too', () => {
    const s = new Sequence().update('one', { set: [1, 1, 3, 4] }).update('two', { set: [1, 3, 4] });
    assert.deepEqual(s.owned(), { one: ['.set', '.set[=3]', '.set[=4]'], two: ['.set[=1]'] });
  });

  it('an update that changes a duplicated item takes the item, and only the item', () => {
    for (const second of [
      [a1, { name: 'a', value1: 3 }, b3],
      [a1, { ...a2, value2: 3 }, b3],
    ]) {
      const s = new Sequence().update('one', { list: [a1, a2, b3] }).update('two', { list: second });
      assert.deepEqual(s.owned(), { one: ['.list', ...bFields], two: ['.list[name="a"]'] });
    }
    const added = new Sequence().update('one', { list: [a1, b3] }).update('two', {
      list: [a1, { name: 'a', value2: 3 }, b3],
    });
    assert.deepEqual(added.owned(), { one: ['.list', ...bFields], two: ['.list[name="a"]'] });
  });

  it('an update beside a duplicated item leaves the item to its owner', () => {
    const s = new Sequence().update('one', { list: [a1, a2] }).update('two', { list: [a1, a2, b3] });
    assert.deepEqual(s.owned(), { one: ['.list', '.list[name="a"]'], two: bFields });
  });

  it('an apply replaces a duplicated key it sets by its one item, after a conflict', () => {
    const s = new Sequence().update('updater', { set: [1, 1, 3, 4] });
    assert.deepEqual(
      conflictPaths(() => s.apply('applier', { set: [1] })),
      ['updater .set[=1]'],
    );
    s.apply('applier', { set: [1] }, true);
    assert.deepEqual(s.object, { set: [1, 3, 4] });
    assert.deepEqual(s.owned(), { updater: ['.set', '.set[=3]', '.set[=4]'], applier: ['.set[=1]'] });

    const l = new Sequence().update('updater', { list: [a1, a2, b3] });
    assert.deepEqual(
      conflictPaths(() => l.apply('applier', { list: [a2] })),
      ['updater .list[name="a"]'],
    );
    l.apply('applier', { list: [{ name: 'a', value1: 3 }] }, true);
    assert.deepEqual(l.object, { list: [{ name: 'a', value1: 3 }, b3] });
    assert.deepEqual(l.owned(), {
      updater: ['.list', ...bFields],
      applier: ['.list[name="a"]', '.list[name="a"].name', '.list[name="a"].value1'],
    });
  });

  it('an apply keeps every copy of a duplicated key it leaves alone', () => {
    const s = new Sequence().update('updater', { set: [1, 1, 3, 4] }).apply('applier', { set: [5] });
    assert.deepEqual(s.object, { set: [1, 1, 3, 4, 5] });
    assert.deepEqual(s.owned(), {
      updater: ['.set', '.set[=1]', '.set[=3]', '.set[=4]'],
      applier: ['.set[=5]'],
    });

    const l = new Sequence()
      .update('updater', { list: [a1, a2, b3] })
      .apply('applier', { unrelated: 5 }, true);
    assert.deepEqual(l.object, { list: [a1, a2, b3], unrelated: 5 });
    assert.deepEqual(l.owned(), {
      updater: ['.list', '.list[name="a"]', ...bFields],
      applier: ['.unrelated'],
    });

    const c = new Sequence()
      .update('updater', { list: [a1, a2, b3] })
      .apply('applier', { list: [{ name: 'b', value1: 4 }] }, true);
    assert.deepEqual(c.object, { list: [a1, a2, { name: 'b', value1: 4 }] });
    assert.deepEqual(c.owned(), {
      updater: ['.list', '.list[name="a"]', '.list[name="b"]', '.list[name="b"].name'],
      applier: bFields,
    });
  });

  it('an apply that drops a key others duplicated leaves their copies', () => {
    const s = new Sequence()
      .apply('applier', { list: [a1, b3] })
      .update('updater', { list: [a1, a2, b3] })
      .apply('applier', { list: [b3] });
    assert.deepEqual(s.object, { list: [a1, a2, b3] });
    assert.deepEqual(s.owned(), { applier: bFields, updater: ['.list[name="a"]'] });
  });

  it('an applied configuration may not repeat a key', () => {
    assert.throws(
      () => new Sequence().apply('applier', { set: [1, 1] }),
      /^TypedValueError: \.set: duplicate entries for key \[=1\]$/,
    );
  });
});
