import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import type { PatchType } from '../rest/interfaces.js';
import { API_VERSION, PATCH, newFixture, type Fixture } from './testing/fixtures.js';

// Map keys named after Object.prototype members are ordinary keys to Go (its maps
// have no prototype): valid label, annotation and data keys. The bodies are parsed
// from JSON text, as the server parses them, so `__proto__` is an own member.
const PROTO_KEYS = '{"constructor":"c","toString":"t","__proto__":"p"}';

function body(text: string): unknown {
  return JSON.parse(text) as unknown;
}

function settingsOf(obj: KubeObject): unknown {
  return JSON.parse(JSON.stringify((obj['spec'] as Record<string, unknown>)['settings'])) as unknown;
}

describe('map keys named after Object.prototype members', () => {
  let f: Fixture;
  /** The object with ordinary keys only. */
  const applyPlain = (): Promise<unknown> =>
    f.store.patch(
      f.ctx(),
      'w1',
      'apply',
      {
        apiVersion: API_VERSION,
        kind: 'Widget',
        metadata: { name: 'w1', labels: { app: 'web' } },
        spec: { size: 1, settings: { a: '1' } },
      },
      { ...PATCH, fieldManager: 'ci' },
    );
  beforeEach(async () => {
    f = newFixture();
    await applyPlain();
  });
  afterEach(() => f.close());

  // Parsed, not a literal: `__proto__:` in a literal sets the prototype.
  const expected = body(`{"a":"1",${PROTO_KEYS.slice(1)}`);
  const stored = async (): Promise<KubeObject> => f.store.get(f.ctx(), 'w1', {});

  it('are stored and owned when an apply adds them (labels and a string map; `__proto__` is no valid label key)', async () => {
    const applied = body(
      `{"apiVersion":"${API_VERSION}","kind":"Widget","metadata":{"name":"w1","labels":{"app":"web",` +
        `"toString":"x","constructor":"y"}},"spec":{"size":1,"settings":{"a":"1",${PROTO_KEYS.slice(1)}}}`,
    );
    const { object } = await f.store.patch(f.ctx(), 'w1', 'apply', applied, { ...PATCH, fieldManager: 'ci' });
    for (const obj of [object, await stored()]) {
      assert.deepEqual(JSON.parse(JSON.stringify(obj.metadata.labels)), {
        app: 'web',
        toString: 'x',
        constructor: 'y',
      });
      assert.deepEqual(settingsOf(obj), expected);
    }
    const owned = JSON.stringify(object.metadata.managedFields?.find((e) => e.manager === 'ci')?.fieldsV1);
    for (const k of ['f:toString', 'f:__proto__', 'f:constructor']) assert.ok(owned.includes(k), owned);

    // And a later apply without them removes them, as for any owned key.
    await applyPlain();
    const after = await stored();
    assert.deepEqual(after.metadata.labels, { app: 'web' });
    assert.deepEqual(settingsOf(after), { a: '1' });
  });

  for (const type of ['merge', 'strategic'] as PatchType[]) {
    it(`are set and removed by a ${type === 'merge' ? 'JSON merge' : 'strategic merge'} patch`, async () => {
      const patch = body(`{"spec":{"settings":${PROTO_KEYS}}}`);
      const { object } = await f.store.patch(f.ctx(), 'w1', type, patch, { ...PATCH, fieldManager: 'p' });
      for (const obj of [object, await stored()]) assert.deepEqual(settingsOf(obj), expected);
      const remove = body('{"spec":{"settings":{"constructor":null,"toString":null,"__proto__":null}}}');
      await f.store.patch(f.ctx(), 'w1', type, remove, { ...PATCH, fieldManager: 'p' });
      assert.deepEqual(settingsOf(await stored()), { a: '1' });
    });
  }
});
