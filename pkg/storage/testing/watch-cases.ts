// Conformance cases for watch, modelled on k8s.io/apiserver storage/testing/
// watcher_tests.go (RunTestWatch, RunTestWatchFromZero, RunTestWatchFromNonZero,
// RunTestWatchDeleteEventObjectHaveLatestRV, RunTestNamespaceScopedWatch,
// RunWatchSemantics, RunTestWatchDispatchBookmarkEvents) and the e2e watch.go tests.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { INITIAL_EVENTS_END_ANNOTATION } from '../../apis/meta/types.js';
import { isStorageError } from '../errors.js';
import type { StorageWatchEvent } from '../interfaces.js';
import type { CaseContext } from './helpers.js';
import { EventReader, labelEquals, rv, summary, TEST_API_VERSION, TEST_KIND, widget } from './helpers.js';

function ev(type: string, obj: { metadata: { name?: string; resourceVersion?: string } }): string {
  return `${type} ${obj.metadata.name ?? ''} ${obj.metadata.resourceVersion ?? ''}`;
}

export function watchCases(ctx: CaseContext): void {
  describe('watch', () => {
    for (const resourceVersion of ['', '0']) {
      it(`from resourceVersion "${resourceVersion}": ADDED for the current state, then every change`, async (t) => {
        const { storage } = ctx.env();
        const dir = ctx.prefix('watch-zero');
        const b = await storage.create(`${dir}b`, widget('b'));
        const a = await storage.create(`${dir}a`, widget('a'));
        const a2 = await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
        const w = await storage.watch(dir, { resourceVersion });
        t.after(() => w.stop());
        const reader = new EventReader(w);
        const initial = await reader.take(2);
        assert.deepEqual(initial.map(summary), [ev('ADDED', a2), ev('ADDED', b)]);
        assert.deepEqual(initial[0]?.object, a2, 'initial events carry the whole current object');
        assert.ok(rv(a2) > rv(a));

        const a3 = await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 3 } }));
        const bGone = await storage.delete(`${dir}b`);
        const c = await storage.create(`${dir}c`, widget('c'));
        const live = await reader.take(3);
        assert.deepEqual(live.map(summary), [ev('MODIFIED', a3), ev('DELETED', bGone), ev('ADDED', c)]);
        assert.deepEqual(live[0]?.object, a3);
      });
    }

    it('from a resourceVersion: exactly the changes after it, in order', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-from');
      const a = await storage.create(`${dir}a`, widget('a'));
      const a2 = await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const b = await storage.create(`${dir}b`, widget('b'));
      const aGone = await storage.delete(`${dir}a`);
      const w = await storage.watch(dir, { resourceVersion: a.metadata.resourceVersion });
      t.after(() => w.stop());
      const reader = new EventReader(w);
      const b2 = await storage.guaranteedUpdate(`${dir}b`, (cur) => ({ ...cur!, spec: { size: 5 } }));
      const events = await reader.take(4);
      assert.deepEqual(events.map(summary), [
        ev('MODIFIED', a2),
        ev('ADDED', b),
        ev('DELETED', aGone),
        ev('MODIFIED', b2),
      ]);
      assert.deepEqual(events[3]?.object, b2);
    });

    it('a DELETED event carries the last state with the delete’s resourceVersion', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-delete');
      const created = await storage.create(`${dir}foo`, widget('foo', { spec: { size: 4 } }));
      const w = await storage.watch(dir, { resourceVersion: created.metadata.resourceVersion });
      t.after(() => w.stop());
      const deleted = await storage.delete(`${dir}foo`);
      const e = await new EventReader(w).next();
      assert.equal(e.type, 'DELETED');
      assert.deepEqual(e.object, deleted);
      assert.deepEqual(e.object.spec, { size: 4 });
      assert.ok(rv(e.object) > rv(created));
    });

    it('with a selector: entering is ADDED, staying MODIFIED, leaving DELETED with the old object', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-selector');
      const key = `${dir}foo`;
      const start = await storage.currentResourceVersion();
      const w = await storage.watch(dir, {
        resourceVersion: String(start),
        predicate: labelEquals('team', 'blue'),
      });
      t.after(() => w.stop());
      const reader = new EventReader(w);
      const relabel = (team: string, size: number) =>
        storage.guaranteedUpdate(key, (cur) => ({
          ...cur!,
          metadata: { ...cur!.metadata, labels: { team } },
          spec: { size },
        }));

      await storage.create(key, widget('foo', { labels: { team: 'red' } })); // not selected: nothing
      const entered = await relabel('blue', 1);
      const stayed = await relabel('blue', 2);
      const left = await relabel('red', 3);
      await relabel('red', 4); // still not selected: nothing
      const back = await relabel('blue', 5);
      const gone = await storage.delete(key);
      const events = await reader.take(5);
      assert.deepEqual(
        events.map(
          (e) => `${e.type} ${e.object.metadata.resourceVersion} ${(e.object.spec as { size: number }).size}`,
        ),
        [
          `ADDED ${entered.metadata.resourceVersion} 1`,
          `MODIFIED ${stayed.metadata.resourceVersion} 2`,
          // The object as it was before it left the selection, at the revision it left.
          `DELETED ${left.metadata.resourceVersion} 2`,
          `ADDED ${back.metadata.resourceVersion} 5`,
          `DELETED ${gone.metadata.resourceVersion} 5`,
        ],
      );
      assert.deepEqual(events[2]?.object.metadata.labels, { team: 'blue' });
    });

    it('on a single key sees only that key', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-key');
      const start = await storage.currentResourceVersion();
      const w = await storage.watch(`${dir}foo`, { resourceVersion: String(start), recursive: false });
      t.after(() => w.stop());
      await storage.create(`${dir}foo-bar`, widget('foo-bar'));
      await storage.create(`${dir}fo`, widget('fo'));
      const foo = await storage.create(`${dir}foo`, widget('foo'));
      const e = await new EventReader(w).next();
      assert.equal(summary(e), ev('ADDED', foo));
    });

    it('on a prefix never sees a sibling that shares its first characters', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-siblings');
      const start = await storage.currentResourceVersion();
      const w = await storage.watch(`${dir}ns`, { resourceVersion: String(start), recursive: true });
      t.after(() => w.stop());
      await storage.create(`${dir}ns-other/a`, widget('a'));
      const mine = await storage.create(`${dir}ns/b`, widget('b'));
      const e = await new EventReader(w).next();
      assert.equal(summary(e), ev('ADDED', mine));
    });

    it('sendInitialEvents with bookmarks: ADDED for the state, a bookmark marking its end, then live events', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-list');
      const created = [];
      for (const n of ['a', 'b', 'c']) created.push(await storage.create(`${dir}${n}`, widget(n)));
      await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const a2 = await storage.get(`${dir}a`);
      for (const resourceVersion of ['', '0', created[0]!.metadata.resourceVersion!]) {
        const w = await storage.watch(dir, {
          resourceVersion,
          resourceVersionMatch: 'NotOlderThan',
          sendInitialEvents: true,
          allowWatchBookmarks: true,
        });
        t.after(() => w.stop());
        const reader = new EventReader(w);
        const initial = await reader.take(4);
        // The state, not the history: a appears once, as it is now.
        assert.deepEqual(initial.slice(0, 3).map(summary), [
          ev('ADDED', a2!),
          ev('ADDED', created[1]!),
          ev('ADDED', created[2]!),
        ]);
        const bookmark = initial[3]!;
        assert.equal(bookmark.type, 'BOOKMARK');
        assert.deepEqual(bookmark.object.metadata.annotations, { [INITIAL_EVENTS_END_ANNOTATION]: 'true' });
        assert.ok(rv(bookmark.object) >= rv(a2), 'the bookmark’s resourceVersion covers the state sent');
        assert.deepEqual(Object.keys(bookmark.object.metadata).sort(), ['annotations', 'resourceVersion']);
        assert.equal(bookmark.object.kind, TEST_KIND);
        assert.equal(bookmark.object.apiVersion, TEST_API_VERSION);
        w.stop();
      }
      const w = await storage.watch(dir, { sendInitialEvents: true, allowWatchBookmarks: true });
      t.after(() => w.stop());
      const reader = new EventReader(w);
      const bookmark = (await reader.take(4))[3]!;
      const d = await storage.create(`${dir}d`, widget('d'));
      const live = await reader.nextChange();
      assert.equal(summary(live), ev('ADDED', d));
      assert.ok(rv(d) > rv(bookmark.object), 'live events follow the bookmark’s revision');
    });

    it('sendInitialEvents without bookmarks: ADDED for the state, then live events, no bookmark', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-list-nobookmark');
      const a = await storage.create(`${dir}a`, widget('a'));
      const w = await storage.watch(dir, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' });
      t.after(() => w.stop());
      const reader = new EventReader(w);
      assert.equal(summary(await reader.next()), ev('ADDED', a));
      const b = await storage.create(`${dir}b`, widget('b'));
      assert.equal(summary(await reader.next()), ev('ADDED', b));
    });

    it('sendInitialEvents=false from "": only changes from now on', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-no-initial');
      await storage.create(`${dir}a`, widget('a'));
      const w = await storage.watch(dir, { sendInitialEvents: false, allowWatchBookmarks: true });
      t.after(() => w.stop());
      // The watch may subscribe after this call returns; a change made once it has
      // surely started is the first thing it reports.
      const reader = new EventReader(w);
      const b = await storage.create(`${dir}b`, widget('b'));
      const first = await reader.nextChange();
      assert.equal(summary(first), ev('ADDED', b));
    });

    it('sends periodic bookmarks carrying only the resourceVersion (and the watched kind)', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-bookmarks');
      const start = await storage.currentResourceVersion();
      const w = await storage.watch(dir, {
        resourceVersion: String(start),
        allowWatchBookmarks: true,
        bookmarkIntervalMs: 20,
      });
      t.after(() => w.stop());
      const reader = new EventReader(w);
      const a = await storage.create(`${dir}a`, widget('a'));
      // A bookmark at the start revision may come first when the write takes longer than
      // the interval (a real etcd fsyncs); only the order of changes is guaranteed.
      assert.equal(summary(await reader.nextChange()), ev('ADDED', a));
      let bookmark: StorageWatchEvent;
      do bookmark = await reader.next('a periodic bookmark');
      while (bookmark.type !== 'BOOKMARK');
      assert.deepEqual(bookmark.object, {
        kind: TEST_KIND,
        apiVersion: TEST_API_VERSION,
        metadata: { resourceVersion: bookmark.object.metadata.resourceVersion },
      });
      assert.ok(rv(bookmark.object) >= rv(a), 'a bookmark never goes back before an event already sent');
    });

    it('from a compacted resourceVersion: one ERROR 410 Expired, then the watch ends', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-compacted');
      const a = await storage.create(`${dir}a`, widget('a'));
      await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 3 } }));
      const current = await storage.currentResourceVersion();
      await storage.compact(current);
      const w = await storage.watch(dir, { resourceVersion: a.metadata.resourceVersion });
      const events = await new EventReader(w).drainToEnd();
      assert.equal(events.length, 1);
      const e = events[0]!;
      assert.equal(e.type, 'ERROR');
      const { message, ...rest } = e.object as unknown as { message: string };
      assert.deepEqual(rest, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'Expired',
        code: 410,
      });
      const m = /^too old resource version: (\d+) \((\d+)\)$/.exec(message);
      assert.ok(m, `unexpected message ${message}`);
      assert.equal(m[1], a.metadata.resourceVersion);
      assert.ok(Number(m[2]) > rv(a));

      // The compaction revision itself is still watchable.
      const ok = await storage.watch(dir, { resourceVersion: String(current) });
      const reader = new EventReader(ok);
      const a4 = await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 4 } }));
      assert.equal(summary(await reader.next()), ev('MODIFIED', a4));
      ok.stop();
    });

    it('from a resourceVersion newer than the store: one ERROR 504 Too large resource version, then the end', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-too-large');
      const current = await storage.currentResourceVersion();
      const requested = current + 1000;
      for (const sendInitialEvents of [undefined, true]) {
        const w = await storage.watch(dir, { resourceVersion: String(requested), sendInitialEvents });
        const events = await new EventReader(w).drainToEnd();
        assert.equal(events.length, 1);
        assert.equal(events[0]?.type, 'ERROR');
        const status = events[0]?.object as unknown as Record<string, unknown>;
        assert.equal(status['kind'], 'Status');
        assert.equal(status['code'], 504);
        assert.equal(status['reason'], 'Timeout');
        assert.match(
          String(status['message']),
          new RegExp(`^Timeout: Too large resource version: ${requested}, current: \\d+$`),
        );
        assert.deepEqual((status['details'] as { causes: unknown }).causes, [
          { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
        ]);
      }
    });

    it('rejects an invalid resourceVersion', async () => {
      const { storage } = ctx.env();
      await assert.rejects(storage.watch(ctx.prefix('watch-invalid'), { resourceVersion: 'x1' }), (err) =>
        isStorageError(err, 'InvalidError'),
      );
    });

    it('stop() ends the iteration and nothing later is delivered', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-stop');
      const start = await storage.currentResourceVersion();
      const w = await storage.watch(dir, { resourceVersion: String(start) });
      const reader = new EventReader(w);
      const a = await storage.create(`${dir}a`, widget('a'));
      assert.equal(summary(await reader.next()), ev('ADDED', a));
      w.stop();
      w.stop(); // idempotent
      await storage.create(`${dir}b`, widget('b'));
      assert.deepEqual(await reader.drainToEnd(), []);
    });

    it('breaking out of the iteration stops the watch', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-break');
      const w = await storage.watch(dir, {});
      const a = await storage.create(`${dir}a`, widget('a'));
      for await (const e of w) {
        assert.equal(summary(e), ev('ADDED', a));
        break;
      }
      await storage.create(`${dir}b`, widget('b'));
      const after = [];
      for await (const e of w) after.push(e);
      assert.deepEqual(after, []);
    });

    it('concurrent watchers see the same events in the same order, strictly increasing', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-order');
      const start = await storage.currentResourceVersion();
      const w1 = await storage.watch(dir, { resourceVersion: String(start) });
      const w2 = await storage.watch(dir, { resourceVersion: String(start) });
      t.after(() => {
        w1.stop();
        w2.stop();
      });
      // An unread watcher must not hold the others back.
      const idle = await storage.watch(dir, { resourceVersion: String(start) });
      t.after(() => idle.stop());

      const keys = ['a', 'b', 'c', 'd', 'e'];
      await Promise.all(keys.map((k) => storage.create(`${dir}${k}`, widget(k, { spec: { n: 0 } }))));
      await Promise.all(
        keys.flatMap((k) =>
          [1, 2, 3].map(() =>
            storage.guaranteedUpdate(`${dir}${k}`, (cur) => ({
              ...cur!,
              spec: { n: ((cur!.spec as { n: number }).n ?? 0) + 1 },
            })),
          ),
        ),
      );
      await Promise.all(keys.slice(0, 2).map((k) => storage.delete(`${dir}${k}`)));
      const total = keys.length * 4 + 2;
      const [e1, e2] = await Promise.all([new EventReader(w1).take(total), new EventReader(w2).take(total)]);
      assert.deepEqual(e1.map(summary), e2.map(summary));
      const rvs = e1.map((e) => rv(e.object));
      for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i]! > rvs[i - 1]!, 'revisions strictly increase');
    });

    it('started while writes are happening: every object exactly once, no gap, no duplicate', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-racing');
      const n = 40;
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < n; i++) {
        const name = `obj-${String(i).padStart(3, '0')}`;
        writes.push(storage.create(`${dir}${name}`, widget(name)));
        if (i === n / 2) {
          // Start the watch in the middle of the burst.
          const w = await storage.watch(dir, {});
          t.after(() => w.stop());
          writes.push(
            (async () => {
              const events = await new EventReader(w).take(n);
              const seen = events.map((e) => e.object.metadata.name);
              assert.ok(events.every((e) => e.type === 'ADDED'));
              assert.equal(new Set(seen).size, n, 'each object appears exactly once');
            })(),
          );
        }
      }
      await Promise.all(writes);
    });

    it('watching from each revision of a history replays the rest of it', async (t) => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('watch-replay');
      const writes = [
        await storage.create(`${dir}a`, widget('a')),
        await storage.create(`${dir}b`, widget('b')),
        await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } })),
        await storage.delete(`${dir}b`),
        await storage.create(`${dir}b`, widget('b', { spec: { size: 3 } })),
      ];
      const types = ['ADDED', 'ADDED', 'MODIFIED', 'DELETED', 'ADDED'];
      for (let from = 0; from < writes.length; from++) {
        const w = await storage.watch(dir, { resourceVersion: writes[from]!.metadata.resourceVersion });
        t.after(() => w.stop());
        const expected = writes.slice(from + 1).map((o, i) => ev(types[from + 1 + i]!, o));
        if (expected.length === 0) {
          w.stop();
          continue;
        }
        const got = await new EventReader(w).take(expected.length);
        assert.deepEqual(got.map(summary), expected, `from ${writes[from]!.metadata.resourceVersion}`);
        w.stop();
      }
    });
  });
}
