// An applied configuration's unknown and wrong-typed fields are refused by the field
// manager's typed conversion, as upstream refuses them (structuredmerge.go, before
// handlers/patch.go ever looks at fieldValidation), and no refusal carries a value
// the client sent: the strict decoder's 422 used to echo the whole configuration,
// a SharedSecret's data included.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { isApiError } from '../../apis/meta/errors.js';
import { compileSchema } from '../../apis/schema/compile.js';
import { SqliteKV } from '../../storage/sqlite/index.js';
import { KVStorage } from '../../storage/store.js';
import { managementKinds } from '../management/kinds.js';
import type { FieldValidation } from '../rest/interfaces.js';
import { Store } from './store.js';
import { API_VERSION, PATCH, TestStrategy, newFixture, testInfo, type Fixture } from './testing/fixtures.js';

const SECRET = 'VG9QU2VDUmVU';
const MODES: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];

/** Asserts that `write` fails with `code` and `message`, and that its Status holds none of `secrets`. */
async function refusedWithout(
  secrets: readonly string[],
  write: Promise<unknown>,
  code: number,
  message: string,
): Promise<void> {
  await assert.rejects(write, (err: unknown) => {
    assert.ok(isApiError(err), String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.message, message);
    const status = JSON.stringify(err.toStatus());
    for (const secret of secrets) assert.ok(!status.includes(secret), status);
    return true;
  });
}

describe('an applied configuration that does not fit the schema', () => {
  let f: Fixture;
  beforeEach(() => {
    f = newFixture();
  });
  afterEach(() => f.close());

  const apply = (
    spec: Record<string, unknown>,
    fieldValidation: FieldValidation,
    warnings: string[],
  ): Promise<unknown> =>
    f.store.patch(
      { ...f.ctx(), warnings },
      'w1',
      'apply',
      { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w1' }, spec },
      { ...PATCH, fieldManager: 'ci', fieldValidation },
    );
  // Named by the configuration's own metadata (objectGVKNN): it has no namespace.
  const typed = (fault: string): string =>
    `failed to create typed patch object (/w1; ${API_VERSION}, Kind=Widget): ${fault}`;

  for (const exists of [false, true]) {
    it(`is refused with 500, in every validation mode, without a warning (object ${exists ? 'exists' : 'is new'})`, async () => {
      if (exists) await apply({ size: 1 }, 'Strict', []);
      for (const mode of MODES) {
        const warnings: string[] = [];
        await refusedWithout(
          [SECRET],
          apply({ size: 1, secrett: SECRET }, mode, warnings),
          500,
          typed('.spec.secrett: field not declared in schema'),
        );
        await refusedWithout(
          [SECRET],
          apply({ size: 1, settings: { password: { nested: SECRET } } }, mode, warnings),
          500,
          typed('.spec.settings.password: expected string, got map'),
        );
        assert.deepEqual(warnings, [], mode);
      }
    });
  }

  it('a merge patch with an unknown field is refused (Strict) without the patched object', async () => {
    await apply({ size: 1, secret: SECRET }, 'Strict', []);
    await refusedWithout(
      [SECRET],
      f.store.patch(
        f.ctx(),
        'w1',
        'merge',
        { spec: { secrett: SECRET } },
        { ...PATCH, fieldValidation: 'Strict' },
      ),
      422,
      ' "" is invalid: patch: Invalid value: strict decoding error: unknown field "spec.secrett"',
    );
  });
});

it('a SharedSecret apply with a nested data value is refused without its data (Strict)', async () => {
  const group = 'management.platform.dev';
  const kind = managementKinds(group).find((k) => k.info.kind === 'SharedSecret');
  assert.ok(kind);
  const strategy = new TestStrategy({ ...testInfo(true), ...kind.info });
  Object.defineProperty(strategy, 'schema', { value: kind.schema });
  const storage = new KVStorage(SqliteKV.open(':memory:'));
  const store = new Store({
    strategy,
    storage,
    keyPrefix: '/registry',
    compileSchema,
    now: () => new Date(),
  });
  const ctx = {
    user: { name: 'alice', groups: [] },
    namespace: 'default',
    userAgent: 'kubectl/v1.32',
    warnings: [],
  };
  const body = {
    apiVersion: `${group}/v1`,
    kind: 'SharedSecret',
    metadata: { name: 's1' },
    spec: { data: { password: { nested: SECRET }, other: 'UExBSU5TRUNSRVQ=' } },
  };
  try {
    await refusedWithout(
      [SECRET, 'UExBSU5TRUNSRVQ'],
      store.patch(ctx, 's1', 'apply', body, { ...PATCH, fieldManager: 'kubectl', fieldValidation: 'Strict' }),
      500,
      `failed to create typed patch object (/s1; ${group}/v1, Kind=SharedSecret): .spec.data.password: expected string, got map`,
    );
  } finally {
    await storage.close();
  }
});
