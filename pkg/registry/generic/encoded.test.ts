import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { deepFreeze } from '../../storage/cacher/watch-cache.js';
import {
  cachedJSON,
  cachedListBody,
  cachedListJSON,
  encodedCount,
  MAX_ENCODED_STATES,
  noteOutputOf,
} from './encoded.js';

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

  it('writes a list body as pieces whose bytes and length are exactly those of JSON.stringify', () => {
    // Non-ASCII text (2-, 3- and 4-byte UTF-8) so characters and bytes differ.
    const sources = Array.from({ length: 300 }, (_, i) =>
      deepFreeze({
        metadata: { name: `u-${i}`, annotations: { note: `Zoë ✓ 🚀 ${'x'.repeat(i * 3)}` } },
      } as KubeObject),
    );
    const items = sources.map((source) => output(source));
    const list = {
      kind: 'UserList',
      apiVersion: 'g/v1',
      metadata: { resourceVersion: '9', continue: 'é' },
      items,
    };
    const body = cachedListBody(list);
    assert.ok(body);
    const whole = Buffer.from(JSON.stringify(list));
    assert.deepEqual(Buffer.concat(body.parts), whole);
    assert.equal(body.bytes, whole.length);
    // Again, now from the memos, which the first list made in its order: the items are a
    // few runs of the memos' memory (a slab boundary may split them), not a piece each.
    const again = cachedListBody({ ...list, items: sources.map((source) => output(source)) });
    assert.ok(again);
    assert.deepEqual(Buffer.concat(again.parts), whole);
    assert.equal(again.bytes, whole.length);
    assert.ok(again.parts.length <= 4, `${again.parts.length} pieces`);
  });

  it('writes exact bytes when the memos were made in another order than the list, or are too big for a slab', () => {
    const sources = ['p', 'q', 'r', 's'].map((name) => cached(name));
    for (const source of [...sources].reverse()) cachedJSON(output(source));
    const list = { kind: 'UserList', items: sources.map((source) => output(source)) };
    const body = cachedListBody(list);
    assert.ok(body);
    assert.equal(Buffer.concat(body.parts).toString(), JSON.stringify(list));
    assert.equal(body.parts.length, 6, 'the envelope twice and each item: none follows the one before in memory');
    const big = deepFreeze({ metadata: { name: 'big', annotations: { a: 'é'.repeat(100_000) } } } as KubeObject);
    const withBig = { kind: 'UserList', items: [sources[0], big, sources[1]].map((source) => output(source as KubeObject)) };
    for (let i = 0; i < 2; i++) assert.equal(cachedListJSON(withBig), JSON.stringify(withBig));
    assert.equal(cachedJSON(output(big)), JSON.stringify(output(big)));
  });

  it('encodes the items of such a list that are not cached copies as JSON.stringify does (undefined as null)', () => {
    const list = { kind: 'UserList', items: [output(cached('f')), undefined, output(cached('g'))] };
    assert.equal(cachedListJSON(list), JSON.stringify(list));
  });

  it('keeps memos for as many items of a long list as it holds, and reuses them on the next list', () => {
    const states = Array.from({ length: MAX_ENCODED_STATES + 1 }, (_, i) => cached(`long-${i}`));
    const list = (): unknown => ({ kind: 'UserList', items: states.map((s) => output(s)) });
    const first = cachedListJSON(list());
    assert.equal(encodedCount(states), MAX_ENCODED_STATES, 'all but the one past the bound');
    assert.equal(encodedCount(states.slice(0, MAX_ENCODED_STATES)), MAX_ENCODED_STATES);
    const second = cachedListJSON(list());
    assert.equal(second, first);
    // The next list found them all and pushed none out for the one past the bound.
    assert.equal(encodedCount(states.slice(0, MAX_ENCODED_STATES)), MAX_ENCODED_STATES);
  });
});
