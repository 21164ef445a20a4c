import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { isApiError } from '../../apis/meta/errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { PatchOptions } from '../rest/interfaces.js';
import {
  API_VERSION,
  CREATE,
  PATCH,
  UPDATE,
  collect,
  newFixture,
  rejectsWith,
  type Fixture,
} from './testing/fixtures.js';

function applied(
  name: string,
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { apiVersion: API_VERSION, kind: 'Widget', metadata: { name }, spec, ...extra };
}

function apply(
  f: Fixture,
  name: string,
  body: unknown,
  options: Partial<PatchOptions> = {},
): Promise<{ object: KubeObject; created: boolean }> {
  return f.store.patch(f.ctx(), name, 'apply', body, { ...PATCH, fieldManager: 'ci', ...options });
}

/** Each manager's owned top-level spec fields, e.g. { ci: ['f:color'] }. */
function specOwners(obj: KubeObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of obj.metadata.managedFields ?? []) {
    const spec = (e.fieldsV1?.['f:spec'] ?? {}) as Record<string, unknown>;
    out[`${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`] = Object.keys(spec)
      .filter((k) => k !== '.')
      .sort();
  }
  return out;
}

describe('server-side apply through the Store', () => {
  let f: Fixture;
  beforeEach(() => {
    f = newFixture();
  });
  afterEach(() => f.close());

  it('refuses an applied configuration that repeats an owner reference, as structuredmerge.go does', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c1', uid: 'u1' };
    const body = applied('w1', { size: 1 }, { metadata: { name: 'w1', ownerReferences: [ref, ref] } });
    const refused = {
      code: 500,
      message:
        'failed to create typed patch object (/w1; test.example.dev/v1, Kind=Widget): .metadata.ownerReferences: duplicate entries for key [uid="u1"]',
    };
    // Parsed without AllowDuplicates, the configuration is refused before any merge,
    // whether it would create the object or change it; nothing is written.
    await rejectsWith(apply(f, 'w1', body), refused);
    await f.store.create(f.ctx(), applied('w1', { size: 2 }), CREATE);
    await rejectsWith(apply(f, 'w1', body), refused);
    const stored = await f.store.get(f.ctx(), 'w1', {});
    assert.equal(stored.metadata.ownerReferences, undefined);
    assert.deepEqual(stored.spec, { size: 2 });
  });

  it('requires a fieldManager, with upstream’s wording', async () => {
    await rejectsWith(apply(f, 'w1', applied('w1', { size: 1 }), { fieldManager: '' }), {
      code: 422,
      message:
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    });
    await rejectsWith(apply(f, 'w1', applied('w1', { size: 1 }), { fieldManager: 'x'.repeat(129) }), {
      code: 422,
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most 128 bytes',
    });
  });

  it('creates an object that does not exist, owned by the applier; a second identical apply writes nothing', async () => {
    const first = await apply(f, 'w1', applied('w1', { size: 3, color: 'red' }));
    assert.equal(first.created, true);
    assert.equal(first.object.metadata.uid !== undefined, true);
    assert.deepEqual(first.object.spec, { size: 3, color: 'red' });
    assert.deepEqual(specOwners(first.object), { 'ci/Apply': ['f:color', 'f:size'] });
    const watcher = await f.store.watch(f.ctx(), { resourceVersion: first.object.metadata.resourceVersion });
    try {
      f.clock = new Date('2026-07-01T12:00:00Z');
      const again = await apply(f, 'w1', applied('w1', { size: 3, color: 'red' }));
      assert.equal(again.created, false);
      assert.equal(again.object.metadata.resourceVersion, first.object.metadata.resourceVersion);
      assert.deepEqual(again.object.metadata.managedFields, first.object.metadata.managedFields);
      assert.equal((await collect(watcher, 1, 300)).length, 0, 'no watch event for an unchanged apply');
    } finally {
      watcher.stop();
    }
  });

  it('names the object by the URL: a body without that name is refused', async () => {
    await rejectsWith(
      apply(f, 'w1', { apiVersion: API_VERSION, kind: 'Widget', metadata: { generateName: 'w-' }, spec: {} }),
      {
        code: 400,
        message: 'the name of the object () does not match the name on the URL (w1)',
      },
    );
    assert.equal((await f.store.list(f.ctx(), {})).items.length, 0);
  });

  it('refuses an applied configuration without its apiVersion and kind', async () => {
    await rejectsWith(apply(f, 'w1', { metadata: { name: 'w1' }, spec: { size: 1 } }), {
      code: 400,
      message: /^invalid object type/,
    });
  });

  it('conflicts with another manager’s field (409 with causes); force takes it over', async () => {
    await f.store.create(
      f.ctx(),
      { apiVersion: API_VERSION, metadata: { name: 'w1' }, spec: { size: 1 } },
      { ...CREATE, fieldManager: 'ci-pipeline' },
    );
    await assert.rejects(
      apply(f, 'w1', applied('w1', { size: 2 }), { fieldManager: 'helm' }),
      (err: unknown) => {
        assert.ok(isApiError(err));
        assert.equal(err.code, 409);
        assert.equal(err.reason, 'Conflict');
        assert.equal(
          err.message,
          `Apply failed with 1 conflict: conflict with "ci-pipeline" using ${API_VERSION}: .spec.size`,
        );
        assert.deepEqual(err.details?.causes, [
          {
            reason: 'FieldManagerConflict',
            message: `conflict with "ci-pipeline" using ${API_VERSION}`,
            field: '.spec.size',
          },
        ]);
        return true;
      },
    );
    const forced = await apply(f, 'w1', applied('w1', { size: 2 }), { fieldManager: 'helm', force: true });
    assert.equal((forced.object.spec as { size: number }).size, 2);
    // The loser lost the field; it keeps only the spec object itself, which it created.
    assert.deepEqual(specOwners(forced.object), { 'ci-pipeline/Update': [], 'helm/Apply': ['f:size'] });
  });

  it('removes fields the applier stopped applying, unless another manager owns them', async () => {
    await apply(f, 'w1', applied('w1', { size: 1, color: 'red', tags: ['a'] }));
    const dropped = await apply(f, 'w1', applied('w1', { size: 1 }));
    assert.deepEqual(dropped.object.spec, { size: 1 });
  });

  it('records exactly what each non-apply write changed', async () => {
    const created = await f.store.create(
      f.ctx(),
      { apiVersion: API_VERSION, metadata: { name: 'w1' }, spec: { size: 1 } },
      { ...CREATE, fieldManager: 'creator' },
    );
    const edited = structuredClone(created);
    (edited.spec as Record<string, unknown>).color = 'blue';
    await f.store.update(f.ctx(), 'w1', edited, { ...UPDATE, fieldManager: 'editor' });
    const patched = await f.store.patch(
      f.ctx(),
      'w1',
      'merge',
      { spec: { tags: ['x'] } },
      { ...PATCH, fieldManager: 'patcher' },
    );
    assert.deepEqual(specOwners(patched.object), {
      'creator/Update': ['f:size'],
      'editor/Update': ['f:color'],
      'patcher/Update': ['f:tags'],
    });
  });

  it('dry runs create and change nothing', async () => {
    const dry = await apply(f, 'w1', applied('w1', { size: 5 }), { dryRun: true });
    assert.equal(dry.created, true);
    assert.equal((dry.object.spec as { size: number }).size, 5);
    assert.equal((await f.store.list(f.ctx(), {})).items.length, 0);
  });

  it('refuses unknown fields while typing the configuration, whatever fieldValidation says', async () => {
    // structuredmerge.go refuses them before handlers/patch.go looks at fieldValidation.
    for (const fieldValidation of ['Strict', 'Ignore'] as const) {
      await rejectsWith(apply(f, 'w1', applied('w1', { size: 1, shape: 'round' }), { fieldValidation }), {
        code: 500,
        message:
          'failed to create typed patch object (/w1; test.example.dev/v1, Kind=Widget): .spec.shape: field not declared in schema',
      });
    }
  });

  it('applies status through the status subresource only, recorded with subresource: status', async () => {
    await apply(f, 'w1', applied('w1', { size: 1 }));
    const sub = f.store.subresources.get('status');
    assert.ok(sub?.patch);
    const out = await sub.patch(
      f.ctx(),
      'w1',
      'apply',
      applied('w1', { size: 99 }, { status: { phase: 'Ready' } }),
      { ...PATCH, fieldManager: 'status-controller' },
    );
    assert.deepEqual(out.object.status, { phase: 'Ready' });
    assert.deepEqual(out.object.spec, { size: 1 });
    const entry = out.object.metadata.managedFields?.find((e) => e.manager === 'status-controller');
    assert.equal(entry?.operation, 'Apply');
    assert.equal(entry?.subresource, 'status');
    assert.deepEqual(entry?.fieldsV1, { 'f:status': { 'f:phase': {} } });
    // An apply to the status of an object that does not exist is a 404, not a create.
    await rejectsWith(
      sub.patch(f.ctx(), 'nope', 'apply', applied('nope', {}, { status: { phase: 'X' } }), {
        ...PATCH,
        fieldManager: 's',
      }),
      {
        code: 404,
      },
    );
  });
});

describe('the manager of a non-apply write', () => {
  it('is the User-Agent up to its first "/", non-printable characters dropped, cut at 128 bytes', async () => {
    const f = newFixture();
    try {
      const agent = `my\u0007tool${'x'.repeat(200)}/1.0`;
      const out = await f.store.create(
        f.ctx('default', agent),
        { apiVersion: API_VERSION, metadata: { name: 'w1' }, spec: { size: 1 } },
        CREATE,
      );
      const manager = out.metadata.managedFields?.[0]?.manager ?? '';
      assert.equal(manager.startsWith('mytoolx'), true, manager);
      assert.equal(manager.length, 128);
    } finally {
      await f.close();
    }
  });
});
