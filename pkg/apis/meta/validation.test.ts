import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldErrorString, FieldPath } from './field-errors.js';
import {
  isDNS1123Subdomain,
  isQualifiedName,
  pruneObjectMeta,
  unknownObjectMetaFields,
  validateObjectMeta,
  validateObjectMetaTypes,
  validateObjectMetaUpdate,
} from './validation.js';

const msgs = (errs: readonly Parameters<typeof fieldErrorString>[0][]): string[] =>
  errs.map(fieldErrorString);

describe('validateObjectMeta', () => {
  it('accepts a well-formed object', () => {
    assert.deepEqual(
      validateObjectMeta(
        {
          name: 'my.team-1',
          namespace: 'default',
          labels: { 'example.com/app': 'web_1', tier: '' },
          annotations: { 'Example.com/Note': 'anything goes here' },
          finalizers: ['example.com/cleanup'],
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u1', controller: true }],
        },
        true,
      ),
      [],
    );
  });

  it('requires a name or generateName', () => {
    assert.deepEqual(msgs(validateObjectMeta({}, false)), [
      'metadata.name: Required value: name or generateName is required',
    ]);
  });

  it('checks names as DNS-1123 subdomains, and generateName allowing a trailing dash', () => {
    const errs = msgs(validateObjectMeta({ name: 'Bad_Name', generateName: 'ok-' }, false));
    assert.equal(errs.length, 1);
    assert.match(
      errs[0] ?? '',
      /^metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '\.', and must start and end with an alphanumeric character \(e\.g\. 'example\.com', regex used for validation is/,
    );
    assert.match(
      msgs(validateObjectMeta({ name: 'x', generateName: 'Bad-' }, false))[0] ?? '',
      /^metadata\.generateName: Invalid value: "Bad-"/,
    );
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)).slice(0, 1), [
      'must be no more than 253 characters',
    ]);
  });

  it('requires a namespace for namespaced kinds and forbids it otherwise', () => {
    assert.deepEqual(msgs(validateObjectMeta({ name: 'a' }, true)), ['metadata.namespace: Required value']);
    assert.deepEqual(msgs(validateObjectMeta({ name: 'a', namespace: 'ns' }, false)), [
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
    assert.match(
      msgs(validateObjectMeta({ name: 'a', namespace: 'a.b' }, true))[0] ?? '',
      /must not contain dots/,
    );
  });

  it('validates label keys and values', () => {
    const errs = msgs(validateObjectMeta({ name: 'a', labels: { 'bad key': 'v', ok: 'bad value' } }, false));
    assert.equal(errs.length, 2);
    assert.match(
      errs[0] ?? '',
      /^metadata\.labels: Invalid value: "bad key": name part must consist of alphanumeric characters/,
    );
    assert.match(
      errs[1] ?? '',
      /^metadata\.labels: Invalid value: "bad value": a valid label must be an empty string/,
    );
  });

  it('limits the total size of annotations', () => {
    const errs = msgs(validateObjectMeta({ name: 'a', annotations: { big: 'x'.repeat(256 * 1024) } }, false));
    assert.deepEqual(errs, ['metadata.annotations: Too long: must have at most 262144 bytes']);
  });

  it('checks owner references and allows at most one controller', () => {
    const errs = msgs(
      validateObjectMeta(
        {
          name: 'a',
          ownerReferences: [
            { apiVersion: 'a/b/c', kind: 'K', name: 'n1', uid: 'u1', controller: true },
            { apiVersion: '', kind: '', name: '', uid: '', controller: true },
          ],
        },
        false,
      ),
    );
    assert.deepEqual(errs.slice(0, 5), [
      'metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
      'metadata.ownerReferences[1].apiVersion: Required value: must not be empty',
      'metadata.ownerReferences[1].kind: Required value: must not be empty',
      'metadata.ownerReferences[1].name: Required value: must not be empty',
      'metadata.ownerReferences[1].uid: Required value: must not be empty',
    ]);
    assert.match(
      errs[5] ?? '',
      /^metadata\.ownerReferences: Invalid value: .*: Only one reference can have Controller set to true\. Found "true" in references for K\/n1 and \//,
    );
  });

  it('checks finalizer names and rejects orphan with foregroundDeletion', () => {
    assert.match(
      msgs(validateObjectMeta({ name: 'a', finalizers: ['a/b/c'] }, false))[0] ?? '',
      /^metadata\.finalizers: Invalid value: "a\/b\/c"/,
    );
    assert.deepEqual(
      msgs(validateObjectMeta({ name: 'a', finalizers: ['orphan', 'foregroundDeletion'] }, false)),
      [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      ],
    );
  });
});

describe('validateObjectMetaUpdate', () => {
  const old = {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '5',
    generation: 2,
    creationTimestamp: '2026-01-01T00:00:00Z',
  };

  it('accepts an unchanged object', () => {
    assert.deepEqual(validateObjectMetaUpdate({ ...old }, old), []);
  });

  it('rejects changes to immutable fields', () => {
    assert.deepEqual(msgs(validateObjectMetaUpdate({ ...old, name: 'b', uid: 'u2' }, old)), [
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
    ]);
  });

  it('rejects a decremented generation and a missing resourceVersion', () => {
    assert.deepEqual(msgs(validateObjectMetaUpdate({ ...old, generation: 1, resourceVersion: '' }, old)), [
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      'metadata.generation: Invalid value: 1: must not be decremented',
    ]);
  });

  it('forbids new finalizers once deletion has started', () => {
    const deleting = { ...old, deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['a.io/x'] };
    assert.deepEqual(
      msgs(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/x', 'b.io/y'] }, deleting)),
      [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y"}',
      ],
    );
    assert.deepEqual(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting), []);
  });
});

describe('metadata shape', () => {
  it('reports type errors the way a typed decode would refuse them', () => {
    const errs = msgs(
      validateObjectMetaTypes({
        name: 5,
        generation: 'x',
        annotations: { foo: ['bar'] },
        labels: 'x',
        finalizers: [1],
        creationTimestamp: 'yesterday',
      }),
    );
    assert.deepEqual(errs, [
      'metadata.name: Invalid value: 5: must be a string',
      'metadata.creationTimestamp: Invalid value: "yesterday": must be an RFC 3339 date-time',
      'metadata.generation: Invalid value: "x": must be an integer',
      'metadata.labels: Invalid value: "x": must be an object of strings',
      'metadata.annotations[foo]: Invalid value: ["bar"]: must be a string',
      'metadata.finalizers[0]: Invalid value: 1: must be a string',
    ]);
    assert.deepEqual(validateObjectMetaTypes({ creationTimestamp: null, labels: null }), []);
  });

  it('finds and prunes unknown metadata fields', () => {
    const meta = { name: 'a', colour: 'red', ownerReferences: [{ uid: 'u', extra: 1 }] };
    assert.deepEqual(unknownObjectMetaFields(meta), ['metadata.colour', 'metadata.ownerReferences[0].extra']);
    pruneObjectMeta(meta);
    assert.deepEqual(meta, { name: 'a', ownerReferences: [{ uid: 'u' }] });
    assert.deepEqual(unknownObjectMetaFields(meta, FieldPath.root('metadata')), []);
  });

  it('checks qualified names with a prefix', () => {
    assert.deepEqual(isQualifiedName('example.com/name'), []);
    assert.deepEqual(isQualifiedName('/name'), ['prefix part must be non-empty']);
  });
});
