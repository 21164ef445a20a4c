import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { REDACTED_VALUE, redactObject, redactPatch, withoutManagedFields } from './redact.js';

const SECRET = 'c3VwZXItc2VjcmV0'; // base64 of a value no event may hold

function sharedSecret(name: string): Record<string, unknown> {
  return {
    apiVersion: 'management.platform.dev/v1',
    kind: 'SharedSecret',
    metadata: { name, namespace: 'default', managedFields: [{ manager: 'kubectl' }] },
    spec: { displayName: 'db', data: { password: SECRET, user: 'YWRtaW4=' } },
  };
}

describe('audit redaction', () => {
  it("keeps a Global Secret's data keys and replaces every value", () => {
    const out = redactObject(sharedSecret('db')) as {
      spec: { data: Record<string, string>; displayName: string };
    };
    assert.deepEqual(out.spec.data, { password: REDACTED_VALUE, user: REDACTED_VALUE });
    assert.equal(out.spec.displayName, 'db');
    assert.ok(!JSON.stringify(out).includes(SECRET));
  });

  it('does not change the object it was given', () => {
    const obj = sharedSecret('db');
    redactObject(obj);
    assert.equal((obj.spec as { data: Record<string, string> }).data.password, SECRET);
  });

  it('redacts access keys, tokens and kube configs, and leaves empty values empty', () => {
    const key = redactObject({ kind: 'OwnedAccessKey', spec: { key: 'plain-key-value', user: 'alice' } });
    assert.deepEqual(key, { kind: 'OwnedAccessKey', spec: { key: REDACTED_VALUE, user: 'alice' } });
    assert.deepEqual(redactObject({ spec: { key: '' } }), { spec: { key: '' } });
    const token = redactObject({
      kind: 'DirectClusterEndpointToken',
      spec: { ttl: 60 },
      status: { token: 'eyJhbGciOi' },
    });
    assert.deepEqual(token, {
      kind: 'DirectClusterEndpointToken',
      spec: { ttl: 60 },
      status: { token: REDACTED_VALUE },
    });
    const kc = redactObject({
      kind: 'VirtualClusterInstanceKubeConfig',
      status: { kubeConfig: 'apiVersion: v1' },
    });
    assert.deepEqual(kc, {
      kind: 'VirtualClusterInstanceKubeConfig',
      status: { kubeConfig: REDACTED_VALUE },
    });
  });

  it('redacts by shape whatever kind the body claims', () => {
    const out = redactObject({ kind: 'Team', spec: { data: { x: SECRET } } });
    assert.ok(!JSON.stringify(out).includes(SECRET));
  });

  it("redacts lists, an owner's accessKeys, watch events and Table rows", () => {
    const list = { kind: 'SharedSecretList', items: [sharedSecret('a'), sharedSecret('b')] };
    const owner = { kind: 'UserAccessKeys', accessKeys: [{ kind: 'OwnedAccessKey', spec: { key: 'k-1' } }] };
    const event = { type: 'ADDED', object: sharedSecret('c') };
    const table = { kind: 'Table', rows: [{ cells: ['c'], object: sharedSecret('c') }] };
    for (const obj of [list, owner, event, table]) {
      const text = JSON.stringify(redactObject(obj));
      assert.ok(!text.includes(SECRET) && !text.includes('k-1'), text);
      assert.ok(text.includes(REDACTED_VALUE));
    }
  });

  it('redacts merge, strategic merge and apply patches as objects', () => {
    for (const type of ['merge', 'strategic', 'apply']) {
      const out = redactPatch(type, { spec: { data: { password: SECRET, old: null } } });
      assert.deepEqual(out, { spec: { data: { password: REDACTED_VALUE, old: null } } });
    }
  });

  it('redacts JSON patch values by the path they write', () => {
    const ops = [
      { op: 'add', path: '/spec/data/password', value: SECRET },
      { op: 'replace', path: '/spec/data', value: { password: SECRET } },
      { op: 'replace', path: '/spec', value: { displayName: 'x', data: { password: SECRET } } },
      { op: 'replace', path: '', value: sharedSecret('x') },
      { op: 'test', path: '/spec/key', value: 'plain' },
      { op: 'replace', path: '/spec/displayName', value: 'shown' },
      { op: 'remove', path: '/spec/data/old' },
      { op: 'add', path: 7, value: SECRET },
    ];
    const out = redactPatch('json', ops) as { value?: unknown }[];
    const text = JSON.stringify(out);
    assert.ok(!text.includes(SECRET) && !text.includes('plain'), text);
    assert.deepEqual(out[1]?.value, { password: REDACTED_VALUE });
    assert.deepEqual(out[2]?.value, { displayName: 'x', data: { password: REDACTED_VALUE } });
    assert.equal(out[5]?.value, 'shown');
    assert.deepEqual(out[6], { op: 'remove', path: '/spec/data/old' });
  });

  it('does not record a patch that is no object or list', () => {
    assert.equal(redactPatch('merge', SECRET), undefined);
    assert.equal(redactPatch('json', { op: 'add' }), undefined);
  });

  it('drops managedFields from objects and list items', () => {
    const out = withoutManagedFields({ kind: 'List', metadata: {}, items: [sharedSecret('a')] }) as {
      items: { metadata: Record<string, unknown> }[];
    };
    assert.ok(!('managedFields' in (out.items[0]?.metadata ?? {})));
    const one = withoutManagedFields(sharedSecret('a')) as { metadata: Record<string, unknown> };
    assert.deepEqual(one.metadata, { name: 'a', namespace: 'default' });
  });
});
