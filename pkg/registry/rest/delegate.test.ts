import assert from 'node:assert/strict';
import { test } from 'node:test';

import { storedKindInfo } from '../../apis/management/v1/common.js';
import type { KubeList, KubeObject, Table } from '../../apis/meta/types.js';
import type { Watcher } from '../../storage/interfaces.js';
import { delegateTo } from './delegate.js';
import type { DeleteResult, RESTStorage, SubresourceStorage } from './interfaces.js';

const info = storedKindInfo('g', { resource: 'things', singular: 'thing', kind: 'Thing', namespaced: false });

/** A resource with every member RESTStorage has; each method reports its name and `this`. */
class EveryMember implements Required<RESTStorage> {
  readonly info = info;
  readonly schema = { type: 'object' };
  readonly subresources = new Map<string, SubresourceStorage>();
  readonly calls: string[] = [];
  private called(name: string): void {
    this.calls.push(name);
  }
  create(): Promise<KubeObject> {
    this.called('create');
    return Promise.resolve({ metadata: {} });
  }
  get(): Promise<KubeObject> {
    this.called('get');
    return Promise.resolve({ metadata: {} });
  }
  list(): Promise<KubeList> {
    this.called('list');
    return Promise.resolve({ apiVersion: 'g/v1', kind: 'ThingList', metadata: {}, items: [] });
  }
  update(): Promise<{ object: KubeObject; created: boolean }> {
    this.called('update');
    return Promise.resolve({ object: { metadata: {} }, created: false });
  }
  patch(): Promise<{ object: KubeObject; created: boolean }> {
    this.called('patch');
    return Promise.resolve({ object: { metadata: {} }, created: false });
  }
  delete(): Promise<DeleteResult> {
    this.called('delete');
    return Promise.resolve({ object: { metadata: {} }, deleted: true });
  }
  deleteCollection(): Promise<KubeList> {
    this.called('deleteCollection');
    return Promise.resolve({ apiVersion: 'g/v1', kind: 'ThingList', metadata: {}, items: [] });
  }
  watch(): Promise<Watcher> {
    this.called('watch');
    return Promise.reject(new Error('not in this test'));
  }
  convertToTable(): Table {
    this.called('convertToTable');
    return { apiVersion: 'meta.k8s.io/v1', kind: 'Table', metadata: {}, columnDefinitions: [], rows: [] };
  }
  decodeProtobuf(): unknown {
    this.called('decodeProtobuf');
    return {};
  }
}

test('a delegate has every member the wrapped resource has, and its methods run on it', async () => {
  const inner = new EveryMember();
  const outer = delegateTo(inner);
  const members = ['info', 'schema', 'subresources', ...Object.getOwnPropertyNames(EveryMember.prototype)]
    .filter((m) => m !== 'constructor' && m !== 'called')
    .sort();
  assert.deepEqual(Object.keys(outer).sort(), members);
  assert.equal(outer.info, inner.info);
  assert.equal(outer.schema, inner.schema);
  assert.equal(outer.subresources, inner.subresources);

  const ctx = { user: { name: 'u', groups: [] }, namespace: '', warnings: [] };
  const write = { dryRun: false, fieldManager: '', fieldValidation: 'Strict' } as const;
  await outer.create?.(ctx, {}, write);
  await outer.get?.(ctx, 'x', {});
  await outer.list?.(ctx, {});
  await outer.update?.(ctx, 'x', {}, write);
  await outer.patch?.(ctx, 'x', 'merge', {}, write);
  await outer.delete?.(ctx, 'x', { dryRunAll: false });
  await outer.deleteCollection?.(ctx, { dryRunAll: false }, {});
  await assert.rejects(() => outer.watch?.(ctx, {}) ?? Promise.resolve(), /not in this test/);
  outer.convertToTable?.(ctx, { metadata: {} }, 'Object');
  outer.decodeProtobuf?.(Buffer.alloc(0));
  assert.deepEqual(inner.calls, [
    'create',
    'get',
    'list',
    'update',
    'patch',
    'delete',
    'deleteCollection',
    'watch',
    'convertToTable',
    'decodeProtobuf',
  ]);
});

test('a verb the wrapped resource lacks stays absent, so the HTTP layer still answers 405', () => {
  const createOnly: RESTStorage = { info, create: () => Promise.resolve({ metadata: {} }) };
  const outer = delegateTo(createOnly);
  assert.deepEqual(Object.keys(outer).sort(), ['create', 'info']);
  assert.equal(outer.list, undefined);
  assert.equal(outer.decodeProtobuf, undefined);
});
