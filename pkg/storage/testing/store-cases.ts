// Conformance cases for create, get, delete and guaranteedUpdate, modelled on
// k8s.io/apiserver storage/testing/store_tests.go (RunTestCreate, RunTestGet,
// RunTestConditionalDelete, RunTestGuaranteedUpdate and their siblings).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import type { CaseContext } from './helpers.js';
import { EventReader, rejectsWithCode, rv, summary, widget } from './helpers.js';

export function createCases(ctx: CaseContext): void {
  describe('create', () => {
    it('stores the object and returns it with a resourceVersion that is not part of the stored bytes', async () => {
      const { storage, kv } = ctx.env();
      const key = `${ctx.prefix('create')}foo`;
      const input = widget('foo');
      const out = await storage.create(key, input);
      assert.equal(input.metadata.resourceVersion, undefined, 'the caller’s object must not be modified');
      assert.deepEqual(
        { ...out, metadata: { ...out.metadata, resourceVersion: undefined } },
        {
          ...input,
          metadata: { ...input.metadata, resourceVersion: undefined },
        },
      );
      const stored = await kv.get(key);
      assert.ok(stored.kv);
      assert.equal(stored.kv.modRevision, rv(out));
      assert.ok(
        !stored.kv.value.toString('utf8').includes('resourceVersion'),
        'stored bytes carry no resourceVersion',
      );
      assert.deepEqual(await storage.get(key), out);
    });

    it('a watch from the returned resourceVersion sees nothing older', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('create-watch');
      const first = await storage.create(`${dir}a`, widget('a'));
      const w = await storage.watch(dir, { resourceVersion: first.metadata.resourceVersion });
      t.after(() => w.stop());
      const second = await storage.create(`${dir}b`, widget('b'));
      const e = await new EventReader(w).next();
      assert.equal(summary(e), `ADDED b ${second.metadata.resourceVersion}`);
    });

    it('refuses an object that already has a resourceVersion', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('create-rv')}foo`;
      const obj = widget('foo');
      obj.metadata.resourceVersion = '1';
      await rejectsWithCode(
        storage.create(key, obj),
        'Internal',
        'resourceVersion should not be set on objects to be created',
      );
      await rejectsWithCode(storage.get(key), 'KeyNotFound');
    });

    it('fails with KeyExists when the key exists, leaving the stored object alone', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('create-exists')}foo`;
      const first = await storage.create(key, widget('foo'));
      await rejectsWithCode(storage.create(key, widget('foo', { spec: { size: 2 } })), 'KeyExists');
      assert.deepEqual(await storage.get(key), first);
    });
  });
}

export function getCases(ctx: CaseContext): void {
  describe('get', () => {
    it('reads the latest state, at "" and "0" and at any resourceVersion not newer than the store', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('get')}foo`;
      const created = await storage.create(key, widget('foo'));
      const updated = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const current = await storage.currentResourceVersion();
      assert.deepEqual(await storage.get(key), updated);
      assert.deepEqual(await storage.get(key, { resourceVersion: '' }), updated);
      // "0" means any version; this store has only the latest.
      assert.deepEqual(await storage.get(key, { resourceVersion: '0' }), updated);
      assert.deepEqual(
        await storage.get(key, { resourceVersion: created.metadata.resourceVersion }),
        updated,
      );
      assert.deepEqual(await storage.get(key, { resourceVersion: String(current) }), updated);
    });

    it('fails with TooLargeResourceVersion for a resourceVersion newer than the store', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('get-too-large')}foo`;
      await storage.create(key, widget('foo'));
      const current = await storage.currentResourceVersion();
      await rejectsWithCode(
        storage.get(key, { resourceVersion: String(current + 100) }),
        'TooLargeResourceVersion',
        `Too large resource version: ${current + 100}, current: ${current}`,
      );
    });

    it('fails with InvalidError for a resourceVersion that is not a number', async () => {
      const { storage } = ctx.env();
      await rejectsWithCode(
        storage.get(`${ctx.prefix('get-invalid')}foo`, { resourceVersion: 'abc' }),
        'InvalidError',
        /^invalid resource version: resourceVersion: Invalid value: "abc"/,
      );
    });

    it('fails with KeyNotFound for a missing key, or returns null with ignoreNotFound', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('get-missing')}foo`;
      await rejectsWithCode(
        storage.get(key),
        'KeyNotFound',
        `StorageError: key not found, Code: 1, Key: ${key}, ResourceVersion: 0`,
      );
      assert.equal(await storage.get(key, { ignoreNotFound: true }), null);
    });
  });
}

export function deleteCases(ctx: CaseContext): void {
  describe('delete', () => {
    it('deletes unconditionally and returns the last state with the delete’s resourceVersion', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete')}foo`;
      const created = await storage.create(key, widget('foo'));
      const deleted = await storage.delete(key);
      assert.ok(rv(deleted) > rv(created));
      assert.equal(rv(deleted), await storage.currentResourceVersion());
      assert.deepEqual(
        { ...deleted, metadata: { ...deleted.metadata, resourceVersion: '' } },
        {
          ...created,
          metadata: { ...created.metadata, resourceVersion: '' },
        },
      );
      await rejectsWithCode(storage.get(key), 'KeyNotFound');
      await rejectsWithCode(storage.delete(key), 'KeyNotFound');
    });

    it('honours a uid precondition', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-uid')}foo`;
      await storage.create(key, widget('foo', { uid: 'A' }));
      await rejectsWithCode(
        storage.delete(key, { preconditions: { uid: 'B' } }),
        'InvalidObj',
        `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: B, UID in object meta: A`,
      );
      assert.ok(await storage.get(key), 'a failed precondition deletes nothing');
      const deleted = await storage.delete(key, { preconditions: { uid: 'A' } });
      assert.equal(deleted.metadata.uid, 'A');
      await rejectsWithCode(storage.get(key), 'KeyNotFound');
    });

    it('honours a resourceVersion precondition', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-rv')}foo`;
      const created = await storage.create(key, widget('foo'));
      const updated = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 5 } }));
      await rejectsWithCode(
        storage.delete(key, { preconditions: { resourceVersion: created.metadata.resourceVersion! } }),
        'InvalidObj',
        new RegExp(
          `Precondition failed: ResourceVersion in precondition: ${created.metadata.resourceVersion}, ResourceVersion in object meta: ${updated.metadata.resourceVersion}$`,
        ),
      );
      const deleted = await storage.delete(key, {
        preconditions: { resourceVersion: updated.metadata.resourceVersion! },
      });
      assert.deepEqual(deleted.spec, { size: 5 });
    });

    it('with a stale cached object, deletes the current state and returns it', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-cached')}foo`;
      const stale = await storage.create(key, widget('foo'));
      const current = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 9 } }));
      const deleted = await storage.delete(key, { cached: stale });
      assert.deepEqual(deleted.spec, current.spec);
      assert.ok(rv(deleted) > rv(current));
      await rejectsWithCode(storage.get(key), 'KeyNotFound');
    });

    it('with a cached object of a key already deleted, fails with KeyNotFound', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-cached-gone')}foo`;
      const cached = await storage.create(key, widget('foo'));
      await storage.delete(key);
      await rejectsWithCode(storage.delete(key, { cached }), 'KeyNotFound');
    });

    it('re-checks preconditions that only the stale cached object fails', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-cached-precondition')}foo`;
      const stale = await storage.create(key, widget('foo'));
      const current = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 3 } }));
      const deleted = await storage.delete(key, {
        cached: stale,
        preconditions: { resourceVersion: current.metadata.resourceVersion! },
      });
      assert.deepEqual(deleted.spec, { size: 3 });
    });

    it('calls validateDeletion with the current object, and its error aborts the delete', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-validate')}foo`;
      const created = await storage.create(key, widget('foo'));
      const refusal = new Error('not allowed');
      const seen: KubeObject[] = [];
      await assert.rejects(
        storage.delete(key, {
          validateDeletion: (obj) => {
            seen.push(obj);
            throw refusal;
          },
        }),
        (err) => err === refusal,
      );
      assert.deepEqual(seen, [created]);
      assert.deepEqual(await storage.get(key), created);
    });

    it('retries on a conflicting write and returns the state it deleted', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('delete-conflict')}foo`;
      await storage.create(key, widget('foo'));
      let calls = 0;
      const deleted = await storage.delete(key, {
        validateDeletion: async () => {
          calls++;
          // Someone writes between our read and our delete: the delete must see it.
          if (calls === 1) await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 42 } }));
        },
      });
      assert.equal(calls, 2);
      assert.deepEqual(deleted.spec, { size: 42 });
      await rejectsWithCode(storage.get(key), 'KeyNotFound');
    });
  });
}

export function guaranteedUpdateCases(ctx: CaseContext): void {
  describe('guaranteedUpdate', () => {
    it('fails with KeyNotFound for a missing key; with ignoreNotFound passes null and creates', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-missing')}foo`;
      await rejectsWithCode(
        storage.guaranteedUpdate(key, (cur) => cur!),
        'KeyNotFound',
      );
      const seen: (KubeObject | null)[] = [];
      const created = await storage.guaranteedUpdate(
        key,
        (cur) => {
          seen.push(cur);
          return widget('foo');
        },
        { ignoreNotFound: true },
      );
      assert.deepEqual(seen, [null]);
      assert.deepEqual(await storage.get(key), created);
    });

    it('writes the new state with a new resourceVersion', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu')}foo`;
      const created = await storage.create(key, widget('foo'));
      const updated = await storage.guaranteedUpdate(key, (cur) => {
        assert.deepEqual(cur, created);
        return { ...cur!, spec: { size: 2 } };
      });
      assert.ok(rv(updated) > rv(created));
      assert.deepEqual(updated.spec, { size: 2 });
      assert.deepEqual(await storage.get(key), updated);
    });

    it('writes nothing when the data is unchanged: same resourceVersion, no watch event', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('gu-same');
      const key = `${dir}foo`;
      const created = await storage.create(key, widget('foo', { labels: { a: '1', b: '2' } }));
      const before = await storage.currentResourceVersion();
      const w = await storage.watch(dir, { resourceVersion: String(before) });
      t.after(() => w.stop());

      const same = await storage.guaranteedUpdate(key, (cur) => cur!);
      assert.deepEqual(same, created);
      // The same content with its fields in another order is the same data too.
      const reordered = await storage.guaranteedUpdate(key, (cur) => {
        const { spec, metadata, kind, apiVersion } = cur!;
        return {
          spec,
          metadata: { labels: { b: '2', a: '1' }, uid: metadata.uid, name: metadata.name },
          kind,
          apiVersion,
        };
      });
      assert.equal(reordered.metadata.resourceVersion, created.metadata.resourceVersion);
      assert.equal(await storage.currentResourceVersion(), before);

      // The next event the watch sees is a real change, not the no-ops.
      const changed = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 7 } }));
      const e = await new EventReader(w).next();
      assert.equal(summary(e), `MODIFIED foo ${changed.metadata.resourceVersion}`);
    });

    it('with a stale cached object, updates the current state', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-stale')}foo`;
      const stale = await storage.create(key, widget('foo', { spec: { size: 1, color: 'red' } }));
      await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 2, color: 'red' } }));
      const seen: number[] = [];
      const result = await storage.guaranteedUpdate(
        key,
        (cur) => {
          seen.push((cur!.spec as { size: number }).size);
          return { ...cur!, spec: { ...(cur!.spec as object), color: 'blue' } };
        },
        { cached: stale },
      );
      assert.deepEqual(result.spec, { size: 2, color: 'blue' }, 'the update must apply to the current state');
      assert.equal(seen.at(-1), 2);
    });

    it('with a cached object equal to the update, still writes when storage has changed', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-cached-same')}foo`;
      const stale = await storage.create(key, widget('foo'));
      await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 2 } }));
      // The function returns exactly the stale cached object: a no-op against the cache,
      // but a real change against what is stored.
      const { resourceVersion: _rv, ...meta } = stale.metadata;
      const result = await storage.guaranteedUpdate(key, () => ({ ...stale, metadata: meta }), {
        cached: stale,
      });
      assert.deepEqual(result.spec, { size: 1 });
      assert.deepEqual((await storage.get(key))?.spec, { size: 1 });
    });

    it('honours a uid precondition', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-uid')}foo`;
      await storage.create(key, widget('foo', { uid: 'A' }));
      await rejectsWithCode(
        storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 2 } }), {
          preconditions: { uid: 'B' },
        }),
        'InvalidObj',
        /Precondition failed: UID in precondition: B, UID in object meta: A$/,
      );
      const ok = await storage.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { size: 2 } }), {
        preconditions: { uid: 'A' },
      });
      assert.deepEqual(ok.spec, { size: 2 });
    });

    it('passes the update function’s error through unchanged and writes nothing', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-error')}foo`;
      const created = await storage.create(key, widget('foo'));
      const failure = new Error('rejected by the strategy');
      await assert.rejects(
        storage.guaranteedUpdate(key, () => {
          throw failure;
        }),
        (err) => err === failure,
      );
      assert.deepEqual(await storage.get(key), created);
    });

    it('retries on a conflicting write, re-running the update function on the new state', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-conflict')}foo`;
      await storage.create(key, widget('foo', { spec: { a: 0, b: 0 } }));
      let calls = 0;
      const result = await storage.guaranteedUpdate(key, async (cur) => {
        calls++;
        if (calls === 1)
          await storage.guaranteedUpdate(key, (c) => ({ ...c!, spec: { ...(c!.spec as object), a: 1 } }));
        return { ...cur!, spec: { ...(cur!.spec as object), b: 1 } };
      });
      assert.equal(calls, 2);
      assert.deepEqual(result.spec, { a: 1, b: 1 }, 'neither write may be lost');
    });

    it('applies concurrent updates each exactly once', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-concurrent')}counter`;
      await storage.create(key, widget('counter', { spec: { count: 0 } }));
      const n = 10;
      const results = await Promise.all(
        Array.from({ length: n }, () =>
          storage.guaranteedUpdate(key, (cur) => {
            const count = (cur!.spec as { count: number }).count;
            return { ...cur!, spec: { count: count + 1 } };
          }),
        ),
      );
      const final = await storage.get(key);
      assert.deepEqual(final?.spec, { count: n });
      const versions = new Set(results.map((r) => r.metadata.resourceVersion));
      assert.equal(versions.size, n, 'every update is its own write');
      const counts = results.map((r) => (r.spec as { count: number }).count).sort((a, b) => a - b);
      assert.deepEqual(
        counts,
        Array.from({ length: n }, (_, i) => i + 1),
      );
    });

    it('does not let the update function change the stored object by mutating its argument', async () => {
      const { storage } = ctx.env();
      const key = `${ctx.prefix('gu-mutate')}foo`;
      const created = await storage.create(key, widget('foo'));
      const failure = new Error('stop');
      await assert.rejects(
        storage.guaranteedUpdate(key, (cur) => {
          (cur!.spec as { size: number }).size = 99;
          throw failure;
        }),
        (err) => err === failure,
      );
      assert.deepEqual(await storage.get(key), created);
    });
  });
}
