import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import jsonpatch from 'fast-json-patch';

import {
  changedFields,
  describeValue,
  guardedPatch,
  pointer,
  refusalOf,
  valueAt,
  type FieldChange,
  type JsonPatchOperation,
} from './field-patch.js';

/** A key as a page shows it: the server writes status.lastActivity about once a minute. */
const shown = {
  metadata: { name: 'k', uid: 'u-1', resourceVersion: '10' },
  spec: { displayName: 'CI key', type: 'User', disabled: false },
  status: { lastActivity: '2026-01-01T00:00:00Z' },
};

const displayName = (value: unknown): FieldChange => ({
  path: ['spec', 'displayName'],
  value,
  label: 'Display name',
});
const description = (value: unknown): FieldChange => ({
  path: ['spec', 'description'],
  value,
  label: 'Description',
});

/** Applies a patch as the server does (fast-json-patch, validating, all or nothing). */
function apply(document: unknown, ops: JsonPatchOperation[]): unknown {
  return jsonpatch.applyPatch(jsonpatch.deepClone(document), ops as jsonpatch.Operation[], true, false)
    .newDocument;
}

function withSpec(spec: Record<string, unknown>, rv: string) {
  return { ...shown, metadata: { ...shown.metadata, resourceVersion: rv }, spec: { ...shown.spec, ...spec } };
}

describe('guardedPatch', () => {
  it('tests the uid and the changed field as shown, then replaces it', () => {
    assert.deepEqual(guardedPatch(shown, [displayName('Renamed')]), [
      { op: 'test', path: '/metadata/uid', value: 'u-1' },
      { op: 'test', path: '/spec/displayName', value: 'CI key' },
      { op: 'replace', path: '/spec/displayName', value: 'Renamed' },
    ]);
  });

  it('sends nothing for fields left as they were (empty, null and [] count as not set)', () => {
    assert.deepEqual(guardedPatch(shown, [displayName('CI key'), description(''), description(null)]), []);
    assert.deepEqual(
      changedFields({ spec: { users: [] } }, [
        { path: ['spec', 'users'], value: undefined, label: 'Members' },
      ]),
      [],
    );
  });

  it('applies over a status write made meanwhile: no conflict for a field nobody else changed', () => {
    const ops = guardedPatch(shown, [displayName('Renamed')]);
    const meanwhile = {
      ...shown,
      metadata: { ...shown.metadata, resourceVersion: '11' },
      status: { lastActivity: '2026-01-01T00:01:00Z' },
    };
    const saved = apply(meanwhile, ops) as typeof shown;
    assert.equal(saved.spec.displayName, 'Renamed');
    assert.equal(saved.status.lastActivity, '2026-01-01T00:01:00Z', 'the status write was undone');
    assert.deepEqual(refusalOf(shown, meanwhile, [displayName('Renamed')]), { kind: 'none' });
  });

  it('fails whole when the same field was changed meanwhile, and says which', () => {
    const edits = [displayName('Mine'), description('Also mine')];
    const ops = guardedPatch(shown, edits);
    const theirs = withSpec({ displayName: 'Theirs' }, '12');
    assert.throws(() => apply(theirs, ops), { name: 'TEST_OPERATION_FAILED' });
    const refusal = refusalOf(shown, theirs, edits);
    assert.equal(refusal.kind, 'changed');
    assert.deepEqual(refusal.kind === 'changed' ? refusal.fields.map((f) => f.label) : [], ['Display name']);
  });

  it('does not undo a concurrent change of a field the user did not edit', () => {
    const ops = guardedPatch(shown, [displayName('Mine'), description(undefined)]);
    const theirs = withSpec({ disabled: true }, '12');
    const saved = apply(theirs, ops) as typeof shown;
    assert.equal(saved.spec.disabled, true);
    assert.equal(saved.spec.displayName, 'Mine');
  });

  it("guards a field that was not set by the object's resourceVersion, and adds it", () => {
    const ops = guardedPatch(shown, [description('New')]);
    assert.deepEqual(ops.slice(1), [
      { op: 'test', path: '/metadata/resourceVersion', value: '10' },
      { op: 'add', path: '/spec/description', value: 'New' },
    ]);
    // Not /spec: the server keeps fields it never shows (a key's hash), which a test of /spec would miss.
    const stored = { ...shown, spec: { ...shown.spec, key: 'hash-the-server-keeps' } };
    assert.equal((apply(stored, ops) as { spec: { description?: string } }).spec.description, 'New');
    // Someone else set it meanwhile: the test fails, nothing is written, and it is a conflict.
    const theirs = withSpec({ description: 'Theirs' }, '12');
    assert.throws(() => apply(theirs, ops), { name: 'TEST_OPERATION_FAILED' });
    assert.equal(refusalOf(shown, theirs, [description('New')]).kind, 'changed');
    // Something else changed (a status write, another spec field): refused, but not a conflict of
    // the user's field; made again from the object as it is now, it applies and keeps that change.
    const beside = { ...withSpec({ disabled: true }, '13'), status: { lastActivity: 'later' } };
    assert.throws(() => apply(beside, ops), { name: 'TEST_OPERATION_FAILED' });
    assert.deepEqual(refusalOf(shown, beside, [description('New')]), { kind: 'beside' });
    const again = apply(beside, guardedPatch(beside, [description('New')])) as typeof beside;
    assert.deepEqual(again.spec, { ...beside.spec, description: 'New' });
    assert.equal(again.status.lastActivity, 'later');
    // Made again, only what the user changed from the page is sent: a field the form left empty
    // is not "removed" because the newer version has it.
    const setBeside = withSpec({ groups: ['theirs'] }, '14');
    const mine = changedFields(shown, [
      description('New'),
      { path: ['spec', 'groups'], value: null, label: 'Groups' },
    ]);
    const kept = apply(setBeside, guardedPatch(setBeside, mine)) as { spec: { groups?: string[] } };
    assert.deepEqual(kept.spec.groups, ['theirs']);
    // The version did not move, no edited field did: the refusal was something else (validation).
    assert.deepEqual(refusalOf(shown, shown, [description('New')]), { kind: 'none' });
    // A save made again is judged from the version it started from.
    assert.deepEqual(refusalOf(shown, beside, [description('New')], beside), { kind: 'none' });
  });

  it('adds a missing parent as one nested value', () => {
    const bare = { metadata: { uid: 'u-2' } };
    assert.deepEqual(guardedPatch(bare, [description('x')]), [
      { op: 'test', path: '/metadata/uid', value: 'u-2' },
      { op: 'add', path: '/spec', value: { description: 'x' } },
    ]);
    assert.deepEqual(apply(bare, guardedPatch(bare, [description('x')])), {
      metadata: { uid: 'u-2' },
      spec: { description: 'x' },
    });
  });

  it('removes a field cleared in the form, after testing it', () => {
    const withDescription = withSpec({ description: 'Old' }, '10');
    const ops = guardedPatch(withDescription, [description(null)]);
    assert.deepEqual(ops.slice(1), [
      { op: 'test', path: '/spec/description', value: 'Old' },
      { op: 'remove', path: '/spec/description' },
    ]);
    assert.equal(
      (apply(withDescription, ops) as { spec: Record<string, unknown> }).spec['description'],
      undefined,
    );
  });

  it('never applies to another object created under the same name', () => {
    const ops = guardedPatch(shown, [displayName('Mine')]);
    const recreated = { ...shown, metadata: { ...shown.metadata, uid: 'u-9' } };
    assert.throws(() => apply(recreated, ops), { name: 'TEST_OPERATION_FAILED' });
    assert.deepEqual(refusalOf(shown, recreated, [displayName('Mine')]), { kind: 'replaced' });
  });

  it('guards a counter: two "sign out everywhere" from one version raise it once', () => {
    const user = { metadata: { uid: 'u' }, spec: { tokenGeneration: 3 } };
    const raise: FieldChange = { path: ['spec', 'tokenGeneration'], value: 4, label: 'Token generation' };
    const once = apply(user, guardedPatch(user, [raise]));
    assert.throws(() => apply(once, guardedPatch(user, [raise])), { name: 'TEST_OPERATION_FAILED' });
  });
});

describe('an exact field (a Global Secret key, where \'\' is a value)', () => {
  const secret = {
    metadata: { name: 's', uid: 'u-2', resourceVersion: '5' },
    spec: { data: { a: '', b: 'eA==' } },
  };
  const key = (name: string, value: unknown): FieldChange => ({
    path: ['spec', 'data', name],
    value,
    label: `Key ${name}`,
    secret: true,
    exact: true,
  });

  it("adds a key whose value is ''", () => {
    const ops = guardedPatch(secret, [key('empty', '')]);
    assert.ok(ops.length > 0, 'nothing would be sent');
    assert.deepEqual((apply(secret, ops) as typeof secret).spec.data, { a: '', b: 'eA==', empty: '' });
  });

  it("removes a key that holds ''", () => {
    const ops = guardedPatch(secret, [key('a', null)]);
    assert.ok(ops.length > 0, 'nothing would be sent');
    assert.deepEqual((apply(secret, ops) as typeof secret).spec.data, { b: 'eA==' });
  });

  it('still sends nothing for a key left as it was', () => {
    assert.deepEqual(guardedPatch(secret, [key('a', ''), key('b', 'eA=='), key('c', null)]), []);
  });
});

describe('an unguarded switch', () => {
  it('sets the field whatever it holds now, still only on the same object', () => {
    const disable: FieldChange = { path: ['spec', 'disabled'], value: true, label: 'State', guard: false };
    const ops = guardedPatch(shown, [disable]);
    assert.deepEqual(ops, [
      { op: 'test', path: '/metadata/uid', value: 'u-1' },
      { op: 'add', path: '/spec/disabled', value: true },
    ]);
    const saved = apply(withSpec({ displayName: 'Theirs' }, '12'), ops) as typeof shown;
    assert.equal(saved.spec.disabled, true);
    assert.equal(saved.spec.displayName, 'Theirs');
  });
});

describe('pointer and valueAt', () => {
  it('escapes ~ and / (RFC 6901) and reads through objects and lists', () => {
    assert.equal(pointer(['metadata', 'annotations', 'a/b~c']), '/metadata/annotations/a~1b~0c');
    assert.equal(valueAt({ a: [{ b: 1 }] }, ['a', '0', 'b']), 1);
    assert.equal(valueAt({ a: 'text' }, ['a', 'b']), undefined);
    assert.equal(valueAt({}, ['toString']), undefined);
  });
});

describe('describeValue', () => {
  it('says what a user reads in a form', () => {
    assert.equal(describeValue(undefined), 'not set');
    assert.equal(describeValue(''), 'not set');
    assert.equal(describeValue('Changed meanwhile'), '"Changed meanwhile"');
    assert.equal(describeValue(['a', 'b']), 'a, b');
    assert.equal(describeValue([{ name: 'view' }, { name: 'edit' }]), 'view, edit');
    assert.equal(describeValue(true), 'true');
  });
});
