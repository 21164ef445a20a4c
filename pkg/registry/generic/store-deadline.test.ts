// The Store hands the request's deadline (RequestContext.deadline, set by the HTTP
// layer) to every storage call it makes for the request, as upstream's registry
// passes ctx to storage.Interface: a request already answered without its work (timed
// out, client gone) starts no storage call, so every verb fails with the storage
// timeout and writes nothing, while the same request without a deadline succeeds.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { compileSchema } from '../../apis/schema/compile.js';
import { BoundedKV } from '../../storage/bounded-kv.js';
import { StorageDeadline } from '../../storage/deadline.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import type { RequestContext } from '../rest/interfaces.js';
import { Store } from './store.js';
import {
  API_VERSION,
  CREATE,
  DELETE,
  PATCH,
  TestStrategy,
  testInfo,
  UPDATE,
  widget,
} from './testing/fixtures.js';

describe('Store under a request deadline', () => {
  let kv: SqliteKV;
  let store: Store;
  const base: RequestContext = {
    user: { name: 'alice', groups: ['system:authenticated'] },
    namespace: 'a',
    warnings: [],
  };
  /** A request answered 504 (or whose client left) before this work. */
  const abandoned = (): RequestContext => ({
    ...base,
    warnings: [],
    deadline: new StorageDeadline(Date.now() + 60_000, () => true),
  });

  beforeEach(async () => {
    kv = SqliteKV.open(':memory:');
    store = new Store({
      strategy: new TestStrategy(testInfo(true)),
      storage: new KVStorage(new BoundedKV(kv)),
      keyPrefix: '/registry',
      compileSchema,
      now: () => new Date('2026-07-01T10:00:00.000Z'),
    });
    await store.create(base, widget('w1'), CREATE);
  });
  afterEach(() => kv.close());

  /** Fails with the storage timeout a client gets as 504, not another error. */
  async function timesOut(call: Promise<unknown>): Promise<void> {
    await assert.rejects(call, (err: unknown) => {
      const e = err as { code?: number; reason?: string };
      assert.equal(e.code, 504, String(err));
      assert.equal(e.reason, 'Timeout', String(err));
      return true;
    });
  }

  it('starts no storage call for an abandoned request, whatever the verb, and writes nothing', async () => {
    const before = await kv.currentRevision();
    const ctx = abandoned();
    await timesOut(store.get(ctx, 'w1', {}));
    await timesOut(store.list(ctx, {}));
    await timesOut(store.create(ctx, widget('w2'), CREATE));
    await timesOut(store.create(ctx, widget('w2'), { ...CREATE, dryRun: true }));
    await timesOut(store.update(ctx, 'w1', widget('w1', { spec: { size: 5 } }), UPDATE));
    await timesOut(store.patch(ctx, 'w1', 'merge', { spec: { size: 6 } }, PATCH));
    await timesOut(
      store.patch(
        ctx,
        'w1',
        'apply',
        { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w1' } },
        {
          ...PATCH,
          fieldManager: 'tester',
        },
      ),
    );
    await timesOut(store.delete(ctx, 'w1', DELETE));
    assert.equal(await kv.currentRevision(), before, 'nothing was written');
    const w1 = await store.get(base, 'w1', {});
    assert.deepEqual(w1.spec, { size: 1 });
  });

  it('serves the same request while its deadline stands', async () => {
    const ctx: RequestContext = { ...base, warnings: [], deadline: new StorageDeadline(Date.now() + 60_000) };
    await store.patch(ctx, 'w1', 'merge', { spec: { size: 5 } }, PATCH);
    assert.deepEqual((await store.get(ctx, 'w1', {})).spec, { size: 5 });
    assert.equal((await store.list(ctx, {})).items.length, 1);
    await store.delete(ctx, 'w1', DELETE);
    assert.equal((await store.list(base, {})).items.length, 0);
  });
});
