// An object that does not fit its kind's schema, refused with kube-apiserver 1.32's
// words: apimachinery's structuredmerge.go names the step that failed and the
// object (`<ns>/<name>; <group/version>, Kind=<Kind>`), smd v4.4.2's typed/validate.go
// names each fault (ValidationErrors.Error(): one alone, several under `errors:`).
// Where upstream prints the offending value itself (%v, %#v), the project prints
// its kind only: a value can be a Global Secret's.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { kindSchema } from './testing/kind-schema.js';
import { FieldManager, FieldManagerError } from './index.js';

const GV = 'example.dev/v1';

const widgets = (): FieldManager =>
  new FieldManager({
    schema: kindSchema({
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer' },
          color: { type: 'string' },
          on: { type: 'boolean' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
        },
      },
    }),
    apiVersion: GV,
    kind: 'Widget',
    now: () => new Date('2026-01-01T00:00:00Z'),
  });

const config = (spec: unknown): Record<string, unknown> => ({
  apiVersion: GV,
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns1' },
  spec,
});

/** A stored object some manager already applied (so no before-first-apply step runs). */
function live(spec: unknown, tracked = true): KubeObject {
  const obj = widgets().apply(
    { apiVersion: GV, kind: 'Widget', metadata: {} },
    config({ size: 1 }),
    'first',
    false,
  );
  obj.metadata = { ...obj.metadata, uid: 'u1', resourceVersion: '1' };
  if (!tracked) delete obj.metadata.managedFields;
  (obj as unknown as Record<string, unknown>)['spec'] = spec;
  return obj;
}

function refusal(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof FieldManagerError, `expected a FieldManagerError, got ${String(err)}`);
    return { code: err.code, message: err.message };
  }
  assert.fail('expected a refusal');
}

const WHERE = '(ns1/w; example.dev/v1, Kind=Widget)';

describe('apply errors as kube-apiserver 1.32 words them', () => {
  it('an applied configuration that does not fit: "failed to create typed patch object", 500', () => {
    const before = live({ size: 1 });
    const snapshot = structuredClone(before);
    assert.deepEqual(
      refusal(() => widgets().apply(before, config({ size: 'big' }), 'ci', false)),
      {
        code: 500,
        message: `failed to create typed patch object ${WHERE}: .spec.size: expected numeric (int or float), got string`,
      },
    );
    // Nothing half-written: the live object is untouched.
    assert.deepEqual(before, snapshot);
  });

  it('lists every fault under "errors:", one per line', () => {
    const { message } = refusal(() =>
      widgets().apply(live({ size: 1 }), config({ size: [1], color: 7, on: 'yes' }), 'ci', false),
    );
    assert.equal(
      message,
      `failed to create typed patch object ${WHERE}: errors:\n` +
        '  .spec.size: expected numeric (int or float), got []interface {}\n' +
        '  .spec.color: expected string, got number\n' +
        '  .spec.on: expected boolean, got string',
    );
  });

  it('names list-map items it cannot key, and keys a configuration repeats, as typed/validate.go does', () => {
    assert.equal(
      refusal(() => widgets().apply(live({}), config({ ports: [{ port: 80 }] }), 'ci', false)).message,
      `failed to create typed patch object ${WHERE}: .spec.ports: element 0: associative list with keys has an element that omits key field "name" (and doesn't have default value)`,
    );
    assert.equal(
      refusal(() =>
        widgets().apply(live({}), config({ ports: [{ name: 'a' }, { name: 'a', port: 1 }] }), 'ci', false),
      ).message,
      `failed to create typed patch object ${WHERE}: .spec.ports: duplicate entries for key [name="a"]`,
    );
  });

  it('a list where a struct belongs: "expected map", by kind and not by value', () => {
    assert.equal(
      refusal(() => widgets().apply(live({}), config(['secret-value']), 'ci', false)).message,
      `failed to create typed patch object ${WHERE}: .spec: expected map, got list`,
    );
  });

  it('a live object that does not fit: "failed to create typed live object", after the configuration', () => {
    const stale = live({ size: 'big', ports: [{ name: 'a' }, { name: 'a' }] });
    // The live object may repeat a key (it is parsed with AllowDuplicates); its scalar may not fit.
    assert.deepEqual(
      refusal(() => widgets().apply(stale, config({ color: 'red' }), 'ci', false)),
      {
        code: 500,
        message: `failed to create typed live object ${WHERE}: .spec.size: expected numeric (int or float), got string`,
      },
    );
    // A configuration that does not fit either is named first, as structuredmerge.go converts it first.
    assert.match(
      refusal(() => widgets().apply(stale, config({ color: 1 }), 'ci', false)).message,
      /^failed to create typed patch object /,
    );
  });

  it('an untracked live object that does not fit fails where skipnonapplied.go records it', () => {
    const stale = live({ size: 'big' }, false);
    assert.equal(
      refusal(() => widgets().apply(stale, config({ color: 'red' }), 'ci', false)).message,
      `failed to create manager for existing fields: failed to convert new object ${WHERE} to smd typed: .spec.size: expected numeric (int or float), got string`,
    );
  });
});
