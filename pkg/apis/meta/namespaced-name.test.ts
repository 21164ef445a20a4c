import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNamespacedName } from './namespaced-name.js';

test('a namespace and a name, the name with dots', () => {
  assert.deepEqual(parseNamespacedName('vc-dev/dev'), { namespace: 'vc-dev', name: 'dev' });
  assert.deepEqual(parseNamespacedName('kube-system/my.secret'), {
    namespace: 'kube-system',
    name: 'my.secret',
  });
});

test('a namespace is a label: no dots, at most 63 characters', () => {
  assert.equal(parseNamespacedName('my.ns/name'), undefined);
  assert.deepEqual(parseNamespacedName(`${'n'.repeat(63)}/x`)?.namespace, 'n'.repeat(63));
  assert.equal(parseNamespacedName(`${'n'.repeat(64)}/x`), undefined);
});

test('a name is a subdomain: at most 253 characters, no empty label', () => {
  const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
  assert.equal(longest.length, 253);
  assert.equal(parseNamespacedName(`ns/${longest}`)?.name, longest);
  assert.equal(parseNamespacedName(`ns/${longest}e`), undefined);
  for (const name of ['a..b', '.a', 'a.', '-a', 'a-', 'A', 'a_b', '']) {
    assert.equal(parseNamespacedName(`ns/${name}`), undefined, name);
  }
});

test('exactly one slash, both parts present', () => {
  for (const text of ['', '/', 'ns', 'ns/', '/name', 'a/b/c', 'ns//name', ' ns/name']) {
    assert.equal(parseNamespacedName(text), undefined, JSON.stringify(text));
  }
});
