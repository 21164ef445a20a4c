// Conformance cases for getList, modelled on store_tests.go RunTestList,
// RunTestListContinuation(WithFilter), RunTestListInconsistentContinuation,
// RunTestGetListNonRecursive, RunTestGetListRecursivePrefix, RunTestConsistentList.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apis/meta/types.js';
import type { ListOptions, ListResult } from '../interfaces.js';
import type { CaseContext } from './helpers.js';
import { labelEquals, names, nameIn, rejectsWithCode, widget } from './helpers.js';

function decodeToken(token: string | undefined): unknown {
  assert.ok(token, 'expected a continue token');
  return JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
}

function token(obj: unknown): string {
  return Buffer.from(JSON.stringify(obj), 'utf8').toString('base64url');
}

/** Lists every page of a paged list as a client would: later pages send only limit, selector and continue. */
async function allPages(
  list: (opts: ListOptions) => Promise<ListResult>,
  opts: ListOptions,
): Promise<ListResult[]> {
  const pages = [await list(opts)];
  let cont = pages[0]?.continue;
  while (cont) {
    const page = await list({ limit: opts.limit, predicate: opts.predicate, continue: cont });
    pages.push(page);
    cont = page.continue;
    assert.ok(pages.length < 100, 'paging does not terminate');
  }
  return pages;
}

export function listCases(ctx: CaseContext): void {
  describe('getList', () => {
    it('lists in key order at the store’s current revision, not the newest item’s', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list');
      for (const n of ['c', 'a', 'b']) await storage.create(`${dir}${n}`, widget(n));
      // A write elsewhere moves the store's revision past every item here.
      await storage.create(`${ctx.prefix('list-elsewhere')}x`, widget('x'));
      const current = await storage.currentResourceVersion();
      for (const resourceVersion of [undefined, '']) {
        const list = await storage.getList(dir, { resourceVersion });
        assert.deepEqual(names(list.items), ['a', 'b', 'c']);
        assert.equal(list.resourceVersion, String(current));
        assert.equal(list.continue, undefined);
        assert.equal(list.remainingItemCount, undefined);
        for (const item of list.items)
          assert.deepEqual(await storage.get(`${dir}${item.metadata.name}`), item);
      }
      const any = await storage.getList(dir, { resourceVersion: '0' });
      assert.deepEqual(names(any.items), ['a', 'b', 'c']);
    });

    it('returns an empty list with the current revision for an empty prefix', async () => {
      const { storage } = ctx.env();
      const list = await storage.getList(ctx.prefix('list-empty'));
      assert.deepEqual(list.items, []);
      assert.equal(list.resourceVersion, String(await storage.currentResourceVersion()));
    });

    it('pages with limit and continue: exact token format, remainingItemCount, one revision for all pages', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-paging');
      for (const n of ['a', 'b', 'c', 'd', 'e']) await storage.create(`${dir}${n}`, widget(n));
      const first = await storage.getList(dir, { limit: 2 });
      assert.deepEqual(names(first.items), ['a', 'b']);
      assert.equal(first.remainingItemCount, 3);
      assert.deepEqual(decodeToken(first.continue), {
        v: 'meta.k8s.io/v1',
        rv: Number(first.resourceVersion),
        start: 'b\u0000',
      });
      assert.equal(
        first.continue,
        token({ v: 'meta.k8s.io/v1', rv: Number(first.resourceVersion), start: 'b\u0000' }),
        'the token is base64url (no padding) of the compact JSON',
      );

      // Writes after the first page do not show in later pages: they read the first page's revision.
      await storage.create(`${dir}bb`, widget('bb'));
      await storage.guaranteedUpdate(`${dir}c`, (cur) => ({ ...cur!, spec: { size: 100 } }));
      await storage.delete(`${dir}d`);

      const second = await storage.getList(dir, { limit: 2, continue: first.continue });
      assert.deepEqual(names(second.items), ['c', 'd']);
      assert.deepEqual(second.items[0]?.spec, { size: 1 });
      assert.equal(second.resourceVersion, first.resourceVersion);
      assert.equal(second.remainingItemCount, 1);
      const third = await storage.getList(dir, { limit: 2, continue: second.continue });
      assert.deepEqual(names(third.items), ['e']);
      assert.equal(third.resourceVersion, first.resourceVersion);
      assert.equal(third.continue, undefined);
      assert.equal(third.remainingItemCount, undefined);
    });

    it('a limit equal to the number of items returns no continue token', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-exact-limit');
      for (const n of ['a', 'b']) await storage.create(`${dir}${n}`, widget(n));
      const list = await storage.getList(dir, { limit: 2 });
      assert.deepEqual(names(list.items), ['a', 'b']);
      assert.equal(list.continue, undefined);
      assert.equal(list.remainingItemCount, undefined);
    });

    it('with a selector, reads on until the page is full, and reports no remainingItemCount', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-filter');
      const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
      const selected = new Set(['b', 'g', 'h', 'j']);
      for (const n of all)
        await storage.create(`${dir}${n}`, widget(n, { labels: { pick: selected.has(n) ? 'yes' : 'no' } }));
      const predicate = labelEquals('pick', 'yes');

      const first = await storage.getList(dir, { limit: 2, predicate });
      assert.deepEqual(
        names(first.items),
        ['b', 'g'],
        'the first page skips unselected items until it is full',
      );
      assert.equal(first.remainingItemCount, undefined);
      assert.deepEqual(decodeToken(first.continue), {
        v: 'meta.k8s.io/v1',
        rv: Number(first.resourceVersion),
        start: 'g\u0000',
      });

      const pages = await allPages((o) => storage.getList(dir, o), { limit: 2, predicate });
      assert.deepEqual(
        pages.flatMap((p) => names(p.items)),
        ['b', 'g', 'h', 'j'],
      );
      for (const p of pages) {
        assert.ok(p.items.length <= 2);
        assert.equal(p.resourceVersion, first.resourceVersion);
        assert.equal(p.remainingItemCount, undefined);
      }

      const rare = await storage.getList(dir, { limit: 1, predicate: nameIn('j') });
      assert.deepEqual(names(rare.items), ['j'], 'a rare match far down the list is found on the first page');
    });

    it('pages concatenate to exactly the full list', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-concat');
      const created: string[] = [];
      for (let i = 0; i < 23; i++) {
        const n = `item-${String(i).padStart(4, '0')}`;
        created.push(n);
        await storage.create(`${dir}${n}`, widget(n));
      }
      const full = await storage.getList(dir);
      for (const limit of [1, 5, 22, 23, 24]) {
        const pages = await allPages((o) => storage.getList(dir, o), { limit });
        assert.deepEqual(
          pages.flatMap((p) => p.items),
          full.items,
          `limit ${limit}`,
        );
        let seen = 0;
        for (const p of pages) {
          seen += p.items.length;
          if (p.continue)
            assert.equal((p.remainingItemCount ?? 0) + seen, created.length, 'remaining + seen = total');
        }
      }
    });

    it('lists all namespaces with continue keys relative to the prefix', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-namespaces');
      for (const [ns, n] of [
        ['ns1', 'a'],
        ['ns1', 'b'],
        ['ns2', 'a'],
      ] as const) {
        await storage.create(`${dir}${ns}/${n}`, widget(n, { namespace: ns }));
      }
      const first = await storage.getList(dir, { limit: 2 });
      assert.deepEqual(
        first.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
        ['ns1/a', 'ns1/b'],
      );
      assert.deepEqual(decodeToken(first.continue), {
        v: 'meta.k8s.io/v1',
        rv: Number(first.resourceVersion),
        start: 'ns1/b\u0000',
      });
      const ns1 = await storage.getList(`${dir}ns1/`);
      assert.equal(ns1.items.length, 2);
    });

    it('a prefix never matches a sibling that shares its first characters', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-siblings');
      await storage.create(`${dir}ns/a`, widget('a', { namespace: 'ns' }));
      await storage.create(`${dir}ns-other/b`, widget('b', { namespace: 'ns-other' }));
      await storage.create(`${dir}ns0/c`, widget('c', { namespace: 'ns0' }));
      for (const key of [`${dir}ns`, `${dir}ns/`]) {
        const list = await storage.getList(key, { recursive: true });
        assert.deepEqual(names(list.items), ['a'], `listing ${key}`);
      }
    });

    it('reads a single key as a list of zero or one when not recursive', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-single');
      const obj = await storage.create(`${dir}foo`, widget('foo'));
      await storage.create(`${dir}foo-bar`, widget('foo-bar'));
      const one = await storage.getList(`${dir}foo`, { recursive: false });
      assert.deepEqual(one.items, [obj]);
      assert.equal(one.resourceVersion, String(await storage.currentResourceVersion()));
      const none = await storage.getList(`${dir}missing`, { recursive: false });
      assert.deepEqual(none.items, []);
      const filtered = await storage.getList(`${dir}foo`, { recursive: false, predicate: nameIn('other') });
      assert.deepEqual(filtered.items, []);
      const atCreate = await storage.getList(`${dir}foo`, {
        recursive: false,
        resourceVersion: obj.metadata.resourceVersion,
        resourceVersionMatch: 'Exact',
      });
      assert.deepEqual(atCreate.items, [obj]);
      assert.equal(atCreate.resourceVersion, obj.metadata.resourceVersion);
    });

    it('Exact reads the state at each historical revision', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-exact');
      const history: { rv: string; state: string[] }[] = [];
      const record = async (state: string[]): Promise<void> => {
        history.push({ rv: String(await storage.currentResourceVersion()), state });
      };
      await record([]);
      await storage.create(`${dir}a`, widget('a'));
      await record(['a:1']);
      await storage.create(`${dir}b`, widget('b'));
      await record(['a:1', 'b:1']);
      await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      await record(['a:2', 'b:1']);
      await storage.delete(`${dir}b`);
      await record(['a:2']);
      await storage.create(`${dir}b`, widget('b', { spec: { size: 3 } }));
      await record(['a:2', 'b:3']);
      const show = (items: KubeObject[]): string[] =>
        items.map((o) => `${o.metadata.name}:${(o.spec as { size: number }).size}`);
      for (const h of history) {
        const exact = await storage.getList(dir, { resourceVersion: h.rv, resourceVersionMatch: 'Exact' });
        assert.deepEqual(show(exact.items), h.state, `Exact at ${h.rv}`);
        assert.equal(exact.resourceVersion, h.rv);
        // Legacy: a resourceVersion with a limit and no match means Exact too.
        const legacy = await storage.getList(dir, { resourceVersion: h.rv, limit: 10 });
        assert.deepEqual(show(legacy.items), h.state, `legacy limit at ${h.rv}`);
        assert.equal(legacy.resourceVersion, h.rv);
        // And paging an old revision stays at it.
        const pages = await allPages((o) => storage.getList(dir, o), {
          resourceVersion: h.rv,
          resourceVersionMatch: 'Exact',
          limit: 1,
        });
        assert.deepEqual(show(pages.flatMap((p) => p.items)), h.state, `paged Exact at ${h.rv}`);
        for (const p of pages) assert.equal(p.resourceVersion, h.rv);
      }
    });

    it('NotOlderThan returns data at least as new; newer than the store fails with TooLargeResourceVersion', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-not-older');
      const a = await storage.create(`${dir}a`, widget('a'));
      const updated = await storage.guaranteedUpdate(`${dir}a`, (cur) => ({ ...cur!, spec: { size: 2 } }));
      const updatedRV = Number(updated.metadata.resourceVersion);
      const current = await storage.currentResourceVersion();
      for (const resourceVersionMatch of ['NotOlderThan', ''] as const) {
        // At an older revision the answer may come from any revision not older than it (a
        // watch cache serves whatever it has caught up to), but it must be one consistent
        // snapshot: the update is in it exactly when the list's revision covers the update.
        const older = await storage.getList(dir, {
          resourceVersion: a.metadata.resourceVersion,
          resourceVersionMatch,
        });
        const olderRV = Number(older.resourceVersion);
        assert.ok(olderRV >= Number(a.metadata.resourceVersion), `${olderRV} is older than requested`);
        assert.deepEqual(older.items[0]?.spec, olderRV >= updatedRV ? { size: 2 } : { size: 1 });
        // At the newest write's revision, the data must include that write.
        const list = await storage.getList(dir, { resourceVersion: String(updatedRV), resourceVersionMatch });
        assert.ok(Number(list.resourceVersion) >= updatedRV);
        assert.deepEqual(list.items[0]?.spec, { size: 2 });
        await rejectsWithCode(
          storage.getList(dir, { resourceVersion: String(current + 10), resourceVersionMatch }),
          'TooLargeResourceVersion',
          `Too large resource version: ${current + 10}, current: ${current}`,
        );
      }
      await rejectsWithCode(
        storage.getList(dir, { resourceVersion: String(current + 10), resourceVersionMatch: 'Exact' }),
        'TooLargeResourceVersion',
        new RegExp(`^Too large resource version: ${current + 10}, current: \\d+$`),
      );
    });

    it('rejects an invalid resourceVersion or resourceVersionMatch', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-invalid');
      await rejectsWithCode(
        storage.getList(dir, { resourceVersion: 'abc' }),
        'InvalidError',
        /invalid resource version/,
      );
      await rejectsWithCode(
        storage.getList(dir, { resourceVersion: '-1' }),
        'InvalidError',
        /invalid resource version/,
      );
      await rejectsWithCode(
        // @ts-expect-error an unsupported value, as a client could send one
        storage.getList(dir, { resourceVersion: '1', resourceVersionMatch: 'Newest' }),
        'InvalidError',
        'unknown ResourceVersionMatch value: Newest',
      );
    });

    it('rejects malformed continue tokens with the upstream messages', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-bad-continue');
      await storage.create(`${dir}a`, widget('a'));
      const cases: [string, string | RegExp][] = [
        [
          'not base64!',
          /^invalid continue token: continue key is not valid: illegal base64 data at input byte 3$/,
        ],
        [
          Buffer.from('{"v":', 'utf8').toString('base64url'),
          /^invalid continue token: continue key is not valid: /,
        ],
        [
          token('just a string'),
          /^invalid continue token: continue key is not valid: json: cannot unmarshal string/,
        ],
        [
          token({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }),
          'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
        ],
        [
          token({ v: 'meta.k8s.io/v1', rv: 5, start: '' }),
          'invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
        ],
        [
          token({ v: 'other/v9', rv: 5, start: 'a' }),
          'invalid continue token: continue key is not valid: server does not recognize this encoded version other/v9',
        ],
        [
          token({ v: 'meta.k8s.io/v1', rv: 5, start: '../../x' }),
          'invalid continue token: continue key is not valid: ../../x',
        ],
        [
          token({ v: 'meta.k8s.io/v1', rv: 5, start: 'a//b' }),
          'invalid continue token: continue key is not valid: a//b',
        ],
      ];
      for (const [bad, message] of cases) {
        await rejectsWithCode(storage.getList(dir, { continue: bad, limit: 1 }), 'InvalidContinue', message);
      }
      const good = token({ v: 'meta.k8s.io/v1', rv: -1, start: 'a\u0000' });
      await rejectsWithCode(
        storage.getList(dir, { continue: good, resourceVersion: '5' }),
        'InvalidError',
        'specifying resource version is not allowed when using continue',
      );
      // "0" with a continue token is allowed.
      const withZero = await storage.getList(dir, { continue: good, resourceVersion: '0' });
      assert.ok(Array.isArray(withZero.items));
    });

    it('after compaction: Exact fails with Expired; a continuation fails with Expired and a token that continues at the latest revision', async () => {
      const { storage } = ctx.env();
      const dir = ctx.prefix('list-compacted');
      for (const n of ['a', 'b', 'c']) await storage.create(`${dir}${n}`, widget(n));
      const first = await storage.getList(dir, { limit: 1 });
      assert.deepEqual(names(first.items), ['a']);
      const oldRv = first.resourceVersion;
      await storage.guaranteedUpdate(`${dir}c`, (cur) => ({ ...cur!, spec: { size: 9 } }));
      await storage.create(`${dir}d`, widget('d'));
      const current = await storage.currentResourceVersion();
      await storage.compact(current);

      await rejectsWithCode(
        storage.getList(dir, { resourceVersion: oldRv, resourceVersionMatch: 'Exact' }),
        'Expired',
        'The resourceVersion for the provided list is too old.',
      );
      await rejectsWithCode(
        storage.getList(dir, { resourceVersion: oldRv, limit: 5 }),
        'Expired',
        'The resourceVersion for the provided list is too old.',
      );

      let fresh: string | undefined;
      await assert.rejects(storage.getList(dir, { limit: 1, continue: first.continue }), (err: unknown) => {
        assert.ok(err instanceof Error && 'code' in err && err.code === 'Expired');
        assert.equal(
          err.message,
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
        fresh = (err as { continueToken?: string }).continueToken;
        return true;
      });
      assert.deepEqual(decodeToken(fresh), { v: 'meta.k8s.io/v1', rv: -1, start: 'a\u0000' });

      const second = await storage.getList(dir, { limit: 1, continue: fresh });
      assert.deepEqual(names(second.items), ['b']);
      assert.ok(Number(second.resourceVersion) >= current, 'an rv -1 token reads the latest revision');
      const rest = await allPages((o) => storage.getList(dir, o), { limit: 1, continue: second.continue });
      const restItems = rest.flatMap((p) => p.items);
      assert.deepEqual(names(restItems), ['c', 'd']);
      assert.deepEqual(restItems[0]?.spec, { size: 9 }, 'the remainder shows the newer state');
      for (const p of rest) assert.equal(p.resourceVersion, second.resourceVersion);

      // Exact at the compaction revision itself is still readable.
      const atCompaction = await storage.getList(dir, {
        resourceVersion: String(current),
        resourceVersionMatch: 'Exact',
      });
      assert.deepEqual(names(atCompaction.items), ['a', 'b', 'c', 'd']);
      assert.equal(atCompaction.resourceVersion, String(current));
    });
  });
}
