import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { deepFreeze } from '../../storage/cacher/watch-cache.js';
import { cachedJSON, cachedListJSON, encodedCount, MAX_ENCODED_STATES, noteOutputOf } from './encoded.js';

function cached(name: string): KubeObject {
  return deepFreeze({
    metadata: { name, resourceVersion: '7', labels: { a: 'b' } },
    spec: { description: `about ${name}`, list: [1, 2, { x: null }] },
  } as KubeObject);
}

function output(source: KubeObject, kind = 'User'): KubeObject {
  const { apiVersion: _v, kind: _k, ...rest } = source;
  const typed: KubeObject = { apiVersion: 'g/v1', kind, ...rest };
  noteOutputOf(typed, source);
  return typed;
}

describe('JSON of cached objects', () => {
  it('is what JSON.stringify gives, encoded once per cached state', () => {
    const source = cached('a');
    const first = output(source);
    const json = cachedJSON(first);
    assert.equal(json, JSON.stringify(first));
    // A later copy of the same state gets the very same string.
    assert.equal(cachedJSON(output(source)), json);
    // Another kind's copy of it is encoded for that kind.
    const other = output(source, 'Other');
    assert.equal(cachedJSON(other), JSON.stringify(other));
  });

  it('is not used for a copy changed after the Store made it', () => {
    const source = cached('b');
    assert.ok(cachedJSON(output(source)));
    const changed = output(source);
    changed.status = { phase: 'x' };
    assert.equal(cachedJSON(changed), undefined);
    const replaced = output(source);
    replaced.spec = { other: true };
    assert.equal(cachedJSON(replaced), undefined);
    const removed = output(source) as Partial<KubeObject>;
    delete removed.spec;
    assert.equal(cachedJSON(removed), undefined);
    // A field swapped for another key (same count, the new one undefined in the source).
    const swapped = output(source) as Record<string, unknown>;
    delete swapped['spec'];
    swapped['extra'] = undefined;
    assert.equal(cachedJSON(swapped), undefined);
    // The same fields in another order would encode in that order.
    const reordered = output(source) as Record<string, unknown>;
    const spec = reordered['spec'];
    delete reordered['spec'];
    reordered['spec'] = spec;
    delete reordered['metadata'];
    reordered['metadata'] = source.metadata;
    assert.equal(cachedJSON(reordered), undefined);
  });

  it('is not used for objects that are not frozen cache states', () => {
    const mutable = { metadata: { name: 'c' }, spec: {} } as KubeObject;
    assert.equal(cachedJSON(output(mutable)), undefined);
    assert.equal(cachedJSON({ plain: true }), undefined);
    assert.equal(cachedJSON('text'), undefined);
  });

  it('keeps the JSON of at most MAX_ENCODED_STATES states, the most recently encoded', () => {
    const states = Array.from({ length: MAX_ENCODED_STATES + 10 }, (_, i) => cached(`s-${i}`));
    for (const state of states) cachedJSON(output(state));
    assert.equal(encodedCount(states.slice(0, 10)), 0, 'the oldest lost their memo');
    assert.equal(encodedCount(states.slice(10)), MAX_ENCODED_STATES);
    // Still the right bytes for an evicted state: encoded again.
    const again = output(states[0] as KubeObject);
    assert.equal(cachedJSON(again), JSON.stringify(again));
  });

  it('encodes a list of such copies exactly as JSON.stringify, whatever else it holds', () => {
    const items = [output(cached('d')), output(cached('e')), { metadata: { name: 'plain' } }];
    const list = { kind: 'UserList', apiVersion: 'g/v1', metadata: { resourceVersion: '9' }, items };
    assert.equal(cachedListJSON(list), JSON.stringify(list));
    assert.equal(cachedListJSON({ items: [] }), undefined);
    assert.equal(cachedListJSON({ items: [{ plain: 1 }] }), undefined);
  });
});
