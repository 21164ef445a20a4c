// Conformance cases for the KV primitives every backend implements (pkg/storage/kv.ts):
// conditional writes, reads at a revision, compaction errors, and watch history.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KVEvent, KVWatch } from '../kv.js';
import { CompactedError, FutureRevisionError, prefixEnd } from '../kv.js';
import type { CaseContext } from './helpers.js';
import { withTimeout } from './helpers.js';

const buf = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Collects a KV watch's events; `until(n)` waits for the n-th. */
class KVEventLog {
  readonly events: KVEvent[] = [];
  error: Error | undefined;
  private waiters: (() => void)[] = [];
  readonly handlers = {
    onEvents: (events: readonly KVEvent[]): void => {
      this.events.push(...events);
      this.wake();
    },
    onError: (err: Error): void => {
      this.error = err;
      this.wake();
    },
  };

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  async until(n: number): Promise<KVEvent[]> {
    await withTimeout(
      (async () => {
        while (this.events.length < n && !this.error) await new Promise<void>((r) => this.waiters.push(r));
      })(),
      `${n} KV events`,
    );
    if (this.error) throw this.error;
    return this.events.slice(0, n);
  }

  async untilError(): Promise<Error> {
    await withTimeout(
      (async () => {
        while (!this.error) await new Promise<void>((r) => this.waiters.push(r));
      })(),
      'a KV watch error',
    );
    return this.error!;
  }
}

function show(e: KVEvent): string {
  const prev = e.prevKv ? ` prev=${e.prevKv.value.toString('utf8')}@${e.prevKv.modRevision}` : '';
  const value = e.type === 'put' ? `=${e.kv.value.toString('utf8')}` : '';
  return `${e.type} ${e.kv.key}${value}@${e.kv.modRevision}${prev}`;
}

export function kvCases(ctx: CaseContext): void {
  describe('kv', () => {
    it('create, update and delete are conditional and report the current value when the condition fails', async () => {
      const { kv } = ctx.env();
      const key = `${ctx.prefix('kv-txn')}k`;
      const c = await kv.create(key, buf('v1'));
      assert.ok(c.ok);
      const again = await kv.create(key, buf('other'));
      assert.equal(again.ok, false);
      assert.equal(again.current?.value.toString('utf8'), 'v1');
      assert.equal(again.current?.modRevision, c.revision);

      const stale = await kv.update(key, buf('v2'), c.revision - 1);
      assert.equal(stale.ok, false);
      assert.equal(stale.current?.modRevision, c.revision);
      const u = await kv.update(key, buf('v2'), c.revision);
      assert.ok(u.ok);
      assert.ok(u.revision > c.revision);
      const got = await kv.get(key);
      assert.equal(got.kv?.value.toString('utf8'), 'v2');
      assert.equal(got.kv?.createRevision, c.revision);
      assert.equal(got.kv?.modRevision, u.revision);
      assert.equal(got.revision, await kv.currentRevision());

      const badDelete = await kv.delete(key, c.revision);
      assert.equal(badDelete.ok, false);
      assert.equal(badDelete.current?.modRevision, u.revision);
      const d = await kv.delete(key, 0);
      assert.ok(d.ok);
      assert.equal(d.deleted?.value.toString('utf8'), 'v2');
      assert.equal(d.revision, await kv.currentRevision());
      assert.equal((await kv.get(key)).kv, undefined);
      assert.equal((await kv.delete(key, 0)).ok, false);
      assert.equal((await kv.update(key, buf('v3'), u.revision)).ok, false);
    });

    it('reads ranges and keys at a past revision, with limit, more and count', async () => {
      const { kv } = ctx.env();
      const dir = ctx.prefix('kv-range');
      const end = prefixEnd(dir);
      const a = await kv.create(`${dir}a`, buf('a1'));
      const b = await kv.create(`${dir}b`, buf('b1'));
      const at2 = await kv.currentRevision();
      await kv.update(`${dir}a`, buf('a2'), a.revision);
      await kv.delete(`${dir}b`, b.revision);
      await kv.create(`${dir}c`, buf('c1'));

      const now = await kv.range(dir, end);
      assert.deepEqual(
        now.kvs.map((x) => `${x.key.slice(dir.length)}=${x.value.toString('utf8')}`),
        ['a=a2', 'c=c1'],
      );
      assert.equal(now.revision, await kv.currentRevision());
      assert.equal(now.more, false);

      const past = await kv.range(dir, end, { revision: at2, count: true });
      assert.deepEqual(
        past.kvs.map((x) => `${x.key.slice(dir.length)}=${x.value.toString('utf8')}`),
        ['a=a1', 'b=b1'],
      );
      assert.equal(past.revision, at2);
      assert.equal(past.count, 2);

      const page = await kv.range(dir, end, { limit: 1, count: true });
      assert.equal(page.kvs.length, 1);
      assert.equal(page.more, true);
      assert.equal(page.count, 2);
      const rest = await kv.range(`${page.kvs[0]!.key}\u0000`, end, { limit: 1, revision: page.revision });
      assert.deepEqual(
        rest.kvs.map((x) => x.key),
        [`${dir}c`],
      );
      assert.equal(rest.more, false);

      assert.equal((await kv.get(`${dir}b`, at2)).kv?.value.toString('utf8'), 'b1');
      assert.equal((await kv.get(`${dir}b`)).kv, undefined);
    });

    it('refuses reads at compacted and at future revisions', async () => {
      const { kv } = ctx.env();
      const dir = ctx.prefix('kv-compact');
      const a = await kv.create(`${dir}a`, buf('a1'));
      await kv.update(`${dir}a`, buf('a2'), a.revision);
      const current = await kv.currentRevision();
      await kv.compact(current);
      assert.ok((await kv.compactedRevision()) >= current);
      await assert.rejects(
        kv.range(dir, prefixEnd(dir), { revision: a.revision }),
        (err) => err instanceof CompactedError,
      );
      await assert.rejects(kv.get(`${dir}a`, a.revision), (err) => err instanceof CompactedError);
      const at = await kv.range(dir, prefixEnd(dir), { revision: current });
      assert.equal(at.kvs[0]?.value.toString('utf8'), 'a2', 'the compaction revision itself stays readable');
      await assert.rejects(
        kv.range(dir, prefixEnd(dir), { revision: current + 1000 }),
        (err) => err instanceof FutureRevisionError,
      );
    });

    it('watches from a revision: history then live, with previous values, in order', async (t) => {
      const { kv } = ctx.env();
      const dir = ctx.prefix('kv-watch');
      const a = await kv.create(`${dir}a`, buf('a1'));
      const a2 = await kv.update(`${dir}a`, buf('a2'), a.revision);
      await kv.create(`${ctx.prefix('kv-watch-elsewhere')}x`, buf('x'));
      const log = new KVEventLog();
      let w: KVWatch | undefined = kv.watch(dir, a.revision, log.handlers);
      t.after(() => w?.cancel());
      const del = await kv.delete(`${dir}a`, a2.revision);
      const b = await kv.create(`${dir}b`, buf('b1'));
      const events = await log.until(4);
      assert.deepEqual(events.map(show), [
        `put ${dir}a=a1@${a.revision}`,
        `put ${dir}a=a2@${a2.revision} prev=a1@${a.revision}`,
        `delete ${dir}a@${del.revision} prev=a2@${a2.revision}`,
        `put ${dir}b=b1@${b.revision}`,
      ]);
      w.cancel();
      w = undefined;
    });

    it('a watch from a compacted revision reports CompactedError', async () => {
      const { kv } = ctx.env();
      const dir = ctx.prefix('kv-watch-compacted');
      const a = await kv.create(`${dir}a`, buf('a1'));
      await kv.update(`${dir}a`, buf('a2'), a.revision);
      const current = await kv.currentRevision();
      await kv.compact(current);
      const log = new KVEventLog();
      const w = kv.watch(dir, a.revision, log.handlers);
      try {
        const err = await log.untilError();
        assert.ok(err instanceof CompactedError, `expected CompactedError, got ${String(err)}`);
        assert.equal(log.events.length, 0);
      } finally {
        w.cancel();
      }
    });
  });
}
