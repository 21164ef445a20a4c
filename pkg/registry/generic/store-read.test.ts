import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { isApiError } from '../../apis/meta/errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import {
  API_VERSION,
  CREATE,
  collect,
  newFixture,
  rejectsWith,
  widget,
  type Fixture,
} from './testing/fixtures.js';

const names = (items: readonly KubeObject[]): string[] =>
  items.map((i) => `${i.metadata.namespace ?? ''}/${i.metadata.name ?? ''}`);

describe('Store reads', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = newFixture();
    for (const [ns, name, tier] of [
      ['a', 'w1', 'web'],
      ['a', 'w2', 'db'],
      ['b', 'w1', 'web'],
      ['b', 'w3', 'cache'],
    ] as const) {
      await f.store.create(
        f.ctx(ns),
        widget(name, { metadata: { name, labels: { tier } }, spec: { size: 2, secret: 'x' } }),
        CREATE,
      );
    }
  });
  afterEach(() => f.close());

  describe('get', () => {
    it('returns the object typed and decorated for a reader', async () => {
      const got = await f.store.get(f.ctx('a'), 'w1', {});
      assert.equal(got.kind, 'Widget');
      assert.equal(got.apiVersion, API_VERSION);
      assert.equal((got.spec as Record<string, unknown>).secret, '');
    });

    it('answers 404 in another namespace', async () => {
      await rejectsWith(f.store.get(f.ctx('b'), 'w2', {}), {
        code: 404,
        message: 'widgets.test.example.dev "w2" not found',
      });
    });

    it('honours resourceVersion: too large is a 504, garbage a 400', async () => {
      await rejectsWith(f.store.get(f.ctx('a'), 'w1', { resourceVersion: '999999' }), {
        code: 504,
        reason: 'Timeout',
        message: /^Timeout: Too large resource version: 999999, current: \d+$/,
      });
      await rejectsWith(f.store.get(f.ctx('a'), 'w1', { resourceVersion: 'abc' }), {
        code: 400,
        reason: 'BadRequest',
      });
      assert.equal((await f.store.get(f.ctx('a'), 'w1', { resourceVersion: '0' })).metadata.name, 'w1');
    });

    it('refuses names that cannot be a key', async () => {
      await rejectsWith(f.store.get(f.ctx('a'), '..', {}), {
        code: 400,
        message: 'Name parameter invalid: "..": may not be \'..\'',
      });
    });
  });

  describe('list', () => {
    it('lists one namespace, or all of them, in key order', async () => {
      const list = await f.store.list(f.ctx('a'), {});
      assert.equal(list.kind, 'WidgetList');
      assert.equal(list.apiVersion, API_VERSION);
      assert.deepEqual(names(list.items), ['a/w1', 'a/w2']);
      assert.equal(list.items[0]?.kind, 'Widget');
      assert.equal((list.items[0]?.spec as Record<string, unknown>).secret, '');
      const all = await f.store.list(f.ctx(''), {});
      assert.deepEqual(names(all.items), ['a/w1', 'a/w2', 'b/w1', 'b/w3']);
      assert.equal(all.metadata.resourceVersion, String(await f.storage.currentResourceVersion()));
    });

    it('answers items: [] when nothing matches', async () => {
      const list = await f.store.list(f.ctx('empty'), {});
      assert.deepEqual(list.items, []);
    });

    it('filters by label selector', async () => {
      assert.deepEqual(
        names((await f.store.list(f.ctx(''), { labelSelector: 'tier in (web,cache)' })).items),
        ['a/w1', 'b/w1', 'b/w3'],
      );
      assert.deepEqual(names((await f.store.list(f.ctx(''), { labelSelector: 'tier!=web' })).items), [
        'a/w2',
        'b/w3',
      ]);
      await rejectsWith(f.store.list(f.ctx(''), { labelSelector: 'tier in (web' }), {
        code: 400,
        reason: 'BadRequest',
      });
    });

    it('filters by metadata.name and metadata.namespace field selectors', async () => {
      assert.deepEqual(names((await f.store.list(f.ctx(''), { fieldSelector: 'metadata.name=w1' })).items), [
        'a/w1',
        'b/w1',
      ]);
      assert.deepEqual(
        names((await f.store.list(f.ctx(''), { fieldSelector: 'metadata.name=w1,metadata.name=w2' })).items),
        [],
      );
      assert.deepEqual(
        names((await f.store.list(f.ctx('a'), { fieldSelector: 'metadata.namespace=b' })).items),
        [],
      );
      assert.deepEqual(
        names((await f.store.list(f.ctx(''), { fieldSelector: 'metadata.namespace=b' })).items),
        ['b/w1', 'b/w3'],
      );
      assert.deepEqual(
        names(
          (await f.store.list(f.ctx(''), { fieldSelector: 'metadata.namespace=b,metadata.name=w3' })).items,
        ),
        ['b/w3'],
      );
      assert.deepEqual(
        names((await f.store.list(f.ctx('a'), { fieldSelector: 'metadata.name!=w1' })).items),
        ['a/w2'],
      );
    });

    it('refuses field selectors on other fields', async () => {
      await rejectsWith(f.store.list(f.ctx(''), { fieldSelector: 'spec.size=2' }), {
        code: 400,
        reason: 'BadRequest',
        message: '"spec.size" is not a known field selector: only "metadata.name", "metadata.namespace"',
      });
    });

    it('pages with limit and continue, counting what remains', async () => {
      const first = await f.store.list(f.ctx(''), { limit: 3 });
      assert.deepEqual(names(first.items), ['a/w1', 'a/w2', 'b/w1']);
      assert.equal(first.metadata.remainingItemCount, 1);
      assert.ok(first.metadata.continue);
      await f.store.create(f.ctx('c'), widget('w9'), CREATE);
      const second = await f.store.list(f.ctx(''), { limit: 3, continue: first.metadata.continue });
      assert.deepEqual(names(second.items), ['b/w3'], "the page is read at the first page's revision");
      assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
      assert.equal(second.metadata.continue, undefined);
    });

    it('validates list options with the upstream messages', async () => {
      const cases: [Parameters<Fixture['store']['list']>[1], number, string][] = [
        [
          { resourceVersionMatch: 'NotOlderThan' },
          422,
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        ],
        [
          { resourceVersion: '0', resourceVersionMatch: 'Exact' },
          422,
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ],
        [
          { resourceVersion: '1', resourceVersionMatch: 'Sometimes' },
          422,
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""',
        ],
        [
          { sendInitialEvents: true },
          422,
          'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
        ],
        [
          { resourceVersion: '5', continue: 'abc' },
          400,
          'specifying resource version is not allowed when using continue',
        ],
      ];
      for (const [options, code, message] of cases) {
        await rejectsWith(f.store.list(f.ctx(''), options), { code, message });
      }
    });

    it('refuses a garbled continue token', async () => {
      await rejectsWith(f.store.list(f.ctx(''), { limit: 1, continue: '!!!' }), {
        code: 400,
        message: /^invalid continue token: /,
      });
    });

    it('reads an exact historical revision', async () => {
      const before = await f.store.list(f.ctx(''), {});
      await f.store.create(f.ctx('c'), widget('w9'), CREATE);
      const exact = await f.store.list(f.ctx(''), {
        resourceVersion: before.metadata.resourceVersion,
        resourceVersionMatch: 'Exact',
      });
      assert.equal(exact.items.length, 4);
      assert.equal(exact.metadata.resourceVersion, before.metadata.resourceVersion);
    });

    it('a compacted continue token is a 410 whose Status carries a token to go on with', async () => {
      const first = await f.store.list(f.ctx(''), { limit: 2 });
      await f.store.create(f.ctx('c'), widget('w9'), CREATE);
      await f.storage.compact(await f.storage.currentResourceVersion());
      await assert.rejects(
        f.store.list(f.ctx(''), { limit: 2, continue: first.metadata.continue }),
        (err: unknown) => {
          assert.ok(isApiError(err));
          assert.equal(err.code, 410);
          assert.equal(err.reason, 'Expired');
          const status = err.toStatus();
          assert.ok(status.metadata.continue, 'the Status names a continue token');
          assert.match(err.message, /^The provided continue parameter is too old/);
          return true;
        },
      );
    });
  });

  describe('watch', () => {
    it('delivers typed, decorated events after a resourceVersion', async () => {
      const rv = (await f.store.list(f.ctx('a'), {})).metadata.resourceVersion;
      const watcher = await f.store.watch(f.ctx('a'), { resourceVersion: rv });
      try {
        await f.store.create(f.ctx('a'), widget('w5', { spec: { secret: 's' } }), CREATE);
        await f.store.create(f.ctx('b'), widget('w6'), CREATE);
        await f.store.delete(f.ctx('a'), 'w2', { dryRunAll: false });
        const events = await collect(watcher, 2);
        assert.deepEqual(
          events.map((e) => [e.type, e.object.metadata.name]),
          [
            ['ADDED', 'w5'],
            ['DELETED', 'w2'],
          ],
        );
        assert.equal(events[0]?.object.kind, 'Widget');
        assert.equal((events[0]?.object.spec as Record<string, unknown>).secret, '');
      } finally {
        watcher.stop();
      }
    });

    it('starts with the current state when no resourceVersion is given', async () => {
      const watcher = await f.store.watch(f.ctx(''), { labelSelector: 'tier=web' });
      try {
        const events = await collect(watcher, 2);
        assert.deepEqual(
          events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`),
          ['ADDED a/w1', 'ADDED b/w1'],
        );
      } finally {
        watcher.stop();
      }
    });

    it('watches one object through a metadata.name field selector', async () => {
      const rv = (await f.store.list(f.ctx('a'), {})).metadata.resourceVersion;
      const watcher = await f.store.watch(f.ctx('a'), {
        resourceVersion: rv,
        fieldSelector: 'metadata.name=w1',
      });
      try {
        await f.store.patch(
          f.ctx('a'),
          'w2',
          'merge',
          { spec: { size: 5 } },
          { dryRun: false, fieldManager: '', fieldValidation: 'Strict' },
        );
        await f.store.patch(
          f.ctx('a'),
          'w1',
          'merge',
          { spec: { size: 6 } },
          { dryRun: false, fieldManager: '', fieldValidation: 'Strict' },
        );
        const events = await collect(watcher, 1);
        assert.deepEqual(
          events.map((e) => [e.type, e.object.metadata.name]),
          [['MODIFIED', 'w1']],
        );
      } finally {
        watcher.stop();
      }
    });

    it('sends initial events and an annotated bookmark for a watch-list request', async () => {
      const watcher = await f.store.watch(f.ctx('a'), {
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
      });
      try {
        const events = await collect(watcher, 3);
        assert.deepEqual(
          events.map((e) => e.type),
          ['ADDED', 'ADDED', 'BOOKMARK'],
        );
        const bookmark = events[2]?.object;
        assert.equal(bookmark?.kind, 'Widget');
        assert.equal(bookmark?.apiVersion, API_VERSION);
        assert.equal(bookmark?.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
      } finally {
        watcher.stop();
      }
    });

    it('validates watch options', async () => {
      await rejectsWith(f.store.watch(f.ctx('a'), { sendInitialEvents: true }), {
        code: 422,
        message:
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      });
      await rejectsWith(f.store.watch(f.ctx('a'), { resourceVersionMatch: 'Exact', resourceVersion: '1' }), {
        code: 422,
        message:
          'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
      });
      await rejectsWith(f.store.watch(f.ctx('a'), { labelSelector: '=x' }), { code: 400 });
    });
  });

  describe('convertToTable', () => {
    it("has Name, the kind's columns and Age, one row per item, and the list metadata", async () => {
      const list = await f.store.list(f.ctx(''), { limit: 2 });
      f.clock = new Date('2026-07-03T14:00:00.000Z');
      const table = f.store.convertToTable(f.ctx(''), list, 'Metadata');
      assert.equal(table.kind, 'Table');
      assert.equal(table.apiVersion, 'meta.k8s.io/v1');
      assert.deepEqual(
        table.columnDefinitions.map((c) => [c.name, c.type, c.format]),
        [
          ['Name', 'string', 'name'],
          ['Size', 'integer', ''],
          ['Age', 'date', ''],
        ],
      );
      assert.deepEqual(table.rows[0]?.cells, ['w1', 2, '2d4h']);
      assert.deepEqual(table.rows[0]?.object, {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: list.items[0]?.metadata,
      });
      assert.equal(table.metadata.resourceVersion, list.metadata.resourceVersion);
      assert.equal(table.metadata.continue, list.metadata.continue);
      assert.equal(table.metadata.remainingItemCount, 2);
    });

    it('includes the whole object, or nothing, as asked', async () => {
      const one = await f.store.get(f.ctx('a'), 'w1', {});
      const full = f.store.convertToTable(f.ctx('a'), one, 'Object');
      assert.equal(full.rows.length, 1);
      assert.deepEqual(full.rows[0]?.object, one);
      assert.equal(full.metadata.resourceVersion, one.metadata.resourceVersion);
      const none = f.store.convertToTable(f.ctx('a'), one, 'None');
      assert.equal('object' in (none.rows[0] ?? {}), false);
    });
  });
});

describe('Store.watch iteration', () => {
  it('stops the storage watch when the consumer stops iterating', async () => {
    const f = newFixture();
    try {
      await f.store.create(f.ctx('a'), widget('w1'), CREATE);
      const watcher = await f.store.watch(f.ctx('a'), {});
      for await (const e of watcher) {
        assert.equal(e.type, 'ADDED');
        break;
      }
      // The storage watch is gone: a later change is not delivered.
      await f.store.create(f.ctx('a'), widget('w2'), CREATE);
      const rest = await collect(watcher, 1, 500);
      assert.deepEqual(rest, []);
    } finally {
      await f.close();
    }
  });
});
