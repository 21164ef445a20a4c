import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { managementKinds } from './kinds.js';
import { managementStrategies } from './index.js';

describe('managementStrategies', () => {
  it('offers one strategy per management kind with the same names and schema', () => {
    const group = 'example.dev';
    const strategies = managementStrategies(group);
    const kinds = managementKinds(group);
    assert.deepEqual(
      strategies.map((s) => s.info),
      kinds.map((k) => k.info),
    );
    assert.deepEqual(
      strategies.map((s) => s.schema),
      kinds.map((k) => k.schema),
    );
    for (const s of strategies) assert.equal(s.info.group, group);
  });

  it('hides keys only on the kind that has them', () => {
    const withDecorate = managementStrategies('g.dev')
      .filter((s) => s.decorate !== undefined)
      .map((s) => s.info.kind);
    assert.deepEqual(withDecorate, ['OwnedAccessKey']);
  });
});
