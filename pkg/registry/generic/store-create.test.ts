import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';

import type { KubeObject } from '../../apis/meta/types.js';
import { API_VERSION, CREATE, newFixture, rejectsWith, widget, type Fixture } from './testing/fixtures.js';

describe('Store.create', () => {
  let f: Fixture;
  beforeEach(() => {
    f = newFixture();
  });
  afterEach(() => f.close());

  it('stores the object with the system fields filled in and returns it typed', async () => {
    const out = await f.store.create(f.ctx(), { metadata: { name: 'w1' }, spec: { size: 3 } }, CREATE);
    assert.equal(out.apiVersion, API_VERSION);
    assert.equal(out.kind, 'Widget');
    assert.equal(out.metadata.name, 'w1');
    assert.equal(out.metadata.namespace, 'default');
    assert.match(out.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(out.metadata.creationTimestamp, '2026-07-01T10:00:00Z');
    assert.equal(out.metadata.generation, 1);
    assert.match(out.metadata.resourceVersion ?? '', /^[1-9][0-9]*$/);
    assert.deepEqual(out.status, { phase: 'Pending' }, 'the strategy prepared the object');
    const got = await f.store.get(f.ctx(), 'w1', {});
    assert.equal(got.metadata.resourceVersion, out.metadata.resourceVersion);
    assert.equal(got.metadata.uid, out.metadata.uid);
  });

  it('ignores system fields a client sends', async () => {
    const out = await f.store.create(
      f.ctx(),
      widget('w1', {
        metadata: {
          name: 'w1',
          uid: 'mine',
          creationTimestamp: '2001-01-01T00:00:00Z',
          deletionTimestamp: '2001-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 30,
          generation: 7,
          resourceVersion: '99',
          selfLink: '/x',
        },
      }),
      CREATE,
    );
    assert.notEqual(out.metadata.uid, 'mine');
    assert.equal(out.metadata.creationTimestamp, '2026-07-01T10:00:00Z');
    assert.equal(out.metadata.deletionTimestamp, undefined);
    assert.equal(out.metadata.deletionGracePeriodSeconds, undefined);
    assert.equal(out.metadata.generation, 1);
    assert.equal(out.metadata.selfLink, undefined);
    assert.notEqual(out.metadata.resourceVersion, '99');
  });

  it('accepts creationTimestamp: null as kubectl sends it', async () => {
    const out = await f.store.create(f.ctx(), { metadata: { name: 'w1', creationTimestamp: null } }, CREATE);
    assert.equal(out.metadata.creationTimestamp, '2026-07-01T10:00:00Z');
  });

  it('answers 409 AlreadyExists for a taken name', async () => {
    await f.store.create(f.ctx(), widget('w1'), CREATE);
    await rejectsWith(f.store.create(f.ctx(), widget('w1'), CREATE), {
      code: 409,
      reason: 'AlreadyExists',
      message: 'widgets.test.example.dev "w1" already exists',
    });
  });

  it('says when the name is held by an object being deleted', async () => {
    await f.store.create(
      f.ctx(),
      widget('w1', { metadata: { name: 'w1', finalizers: ['example.com/hold'] } }),
      CREATE,
    );
    await f.store.delete(f.ctx(), 'w1', { dryRunAll: false });
    await rejectsWith(f.store.create(f.ctx(), widget('w1'), CREATE), {
      code: 409,
      reason: 'AlreadyExists',
      message: 'object is being deleted: widgets.test.example.dev "w1" already exists',
    });
  });

  describe('envelope', () => {
    it('rejects a body that is not an object', async () => {
      await rejectsWith(f.store.create(f.ctx(), ['a'], CREATE), {
        code: 400,
        reason: 'BadRequest',
        message: /^the object provided is unrecognized \(must be of type Widget\)/,
      });
    });

    it('rejects another API version', async () => {
      await rejectsWith(f.store.create(f.ctx(), widget('w1', { apiVersion: 'x/v2' }), CREATE), {
        code: 400,
        reason: 'BadRequest',
        message: `the API version in the data (x/v2) does not match the expected API version (${API_VERSION})`,
      });
    });

    it('rejects another kind', async () => {
      await rejectsWith(f.store.create(f.ctx(), widget('w1', { kind: 'Gizmo' }), CREATE), {
        code: 400,
        message: /^Gizmo in version "v1" cannot be handled as a Widget: /,
      });
    });

    it('rejects metadata of the wrong type', async () => {
      await rejectsWith(
        f.store.create(
          f.ctx(),
          widget('w1', { metadata: { name: 'w1', annotations: { a: ['b'] } } }),
          CREATE,
        ),
        {
          code: 400,
          message: /^Widget in version "v1" cannot be handled as a Widget: metadata\.annotations\[a\]/,
        },
      );
    });
  });

  describe('fieldValidation', () => {
    const body = (): Record<string, unknown> =>
      widget('w1', { metadata: { name: 'w1', colour: 'red' }, spec: { size: 1, foo: 1, bar: 2 } });

    it('Strict refuses unknown fields, inside metadata too, with every path', async () => {
      await rejectsWith(f.store.create(f.ctx(), body(), { ...CREATE, fieldValidation: 'Strict' }), {
        code: 400,
        reason: 'BadRequest',
        message:
          'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.colour", unknown field "spec.foo", unknown field "spec.bar"',
      });
    });

    it('Warn warns about each unknown field and drops it', async () => {
      const ctx = f.ctx();
      const out = await f.store.create(ctx, body(), { ...CREATE, fieldValidation: 'Warn' });
      assert.deepEqual(ctx.warnings, [
        'unknown field "metadata.colour"',
        'unknown field "spec.foo"',
        'unknown field "spec.bar"',
      ]);
      assert.deepEqual(out.spec, { size: 1 });
      assert.equal((out.metadata as Record<string, unknown>).colour, undefined);
    });

    it('Ignore drops unknown fields silently', async () => {
      const ctx = f.ctx();
      const out = await f.store.create(ctx, body(), { ...CREATE, fieldValidation: 'Ignore' });
      assert.deepEqual(ctx.warnings, []);
      assert.deepEqual(out.spec, { size: 1 });
    });
  });

  describe('names', () => {
    it('requires a name or generateName', async () => {
      await rejectsWith(f.store.create(f.ctx(), { spec: {} }, CREATE), {
        code: 422,
        reason: 'Invalid',
        message:
          'Widget.test.example.dev "" is invalid: metadata.name: Required value: name or generateName is required',
      });
    });

    it('requires DNS-1123 subdomain names', async () => {
      await rejectsWith(f.store.create(f.ctx(), widget('Bad/Name'), CREATE), {
        code: 422,
        message:
          /^Widget\.test\.example\.dev "Bad\/Name" is invalid: metadata\.name: Invalid value: "Bad\/Name": a lowercase RFC 1123 subdomain/,
      });
    });

    it('generates a name from generateName', async () => {
      const out = await f.store.create(f.ctx(), { metadata: { generateName: 'gen-' } }, CREATE);
      assert.match(out.metadata.name ?? '', /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(out.metadata.generateName, 'gen-');
    });

    it('truncates a long generateName so the name fits in 63 characters', async () => {
      const out = await f.store.create(f.ctx(), { metadata: { generateName: 'a'.repeat(70) } }, CREATE);
      assert.equal(out.metadata.name?.length, 63);
    });

    it('retries a generated name that collides, then gives up with a retryable 409', async () => {
      const suffixes = ['aaaaa', 'aaaaa', 'bbbbb'];
      const g = newFixture({ randomSuffix: () => suffixes.shift() ?? 'zzzzz' });
      try {
        const first = await g.store.create(g.ctx(), { metadata: { generateName: 'x-' } }, CREATE);
        assert.equal(first.metadata.name, 'x-aaaaa');
        const second = await g.store.create(g.ctx(), { metadata: { generateName: 'x-' } }, CREATE);
        assert.equal(second.metadata.name, 'x-bbbbb', 'the collision was retried with a new name');
        const third = await g.store.create(g.ctx(), { metadata: { generateName: 'x-' } }, CREATE);
        assert.equal(third.metadata.name, 'x-zzzzz');
        // From now on every attempt collides.
        await assert.rejects(
          g.store.create(g.ctx(), { metadata: { generateName: 'x-' } }, CREATE),
          (err: unknown) => {
            const e = err as { code: number; message: string; details?: { retryAfterSeconds?: number } };
            assert.equal(e.code, 409);
            assert.equal(
              e.message,
              'widgets.test.example.dev "x-zzzzz" already exists, the server was not able to generate a unique name for the object',
            );
            assert.equal(e.details?.retryAfterSeconds, 1);
            return true;
          },
        );
        assert.equal(g.strategy.prepareCalls, 1 + 2 + 1 + 8, 'each of the 8 attempts ran the whole create');
      } finally {
        await g.close();
      }
    });
  });

  describe('namespaces', () => {
    it('fills the namespace from the request', async () => {
      const out = await f.store.create(f.ctx('ns1'), widget('w1'), CREATE);
      assert.equal(out.metadata.namespace, 'ns1');
    });

    it('refuses a body namespace that differs from the request', async () => {
      await rejectsWith(
        f.store.create(f.ctx('ns1'), widget('w1', { metadata: { name: 'w1', namespace: 'ns2' } }), CREATE),
        {
          code: 400,
          message: 'the namespace of the provided object does not match the namespace sent on the request',
        },
      );
    });

    it('clears a namespace on a cluster-scoped kind', async () => {
      const g = newFixture({ namespaced: false });
      try {
        const out = await g.store.create(
          g.ctx(),
          widget('g1', { metadata: { name: 'g1', namespace: 'ns' } }),
          CREATE,
        );
        assert.equal(out.metadata.namespace, undefined);
        assert.equal(out.kind, 'Gadget');
        assert.equal((await g.store.get(g.ctx(), 'g1', {})).metadata.name, 'g1');
      } finally {
        await g.close();
      }
    });
  });

  describe('validation', () => {
    it('reports metadata, schema and kind errors as one 422 with causes', async () => {
      await rejectsWith(
        f.store.create(
          f.ctx(),
          widget('w1', { metadata: { name: 'w1', labels: { 'a b': 'c' } }, spec: { size: 'big' } }),
          CREATE,
        ),
        {
          code: 422,
          reason: 'Invalid',
          message:
            /^Widget\.test\.example\.dev "w1" is invalid: \[metadata\.labels: Invalid value: "a b": .*, spec\.size: /,
        },
      );
      await assert.rejects(
        f.store.create(f.ctx(), widget('w1', { spec: { size: -1 } }), CREATE),
        (err: unknown) => {
          const e = err as {
            message: string;
            details: { causes: unknown[]; kind: string; group: string; name: string };
          };
          assert.equal(
            e.message,
            'Widget.test.example.dev "w1" is invalid: spec.size: Invalid value: -1: must be greater than or equal to 0',
          );
          assert.deepEqual(e.details, {
            name: 'w1',
            kind: 'Widget',
            group: 'test.example.dev',
            causes: [
              {
                reason: 'FieldValueInvalid',
                message: 'Invalid value: -1: must be greater than or equal to 0',
                field: 'spec.size',
              },
            ],
          });
          return true;
        },
      );
    });

    it('refuses two controller owner references and conflicting GC finalizers', async () => {
      const ref = (uid: string): Record<string, unknown> => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: uid,
        uid,
        controller: true,
      });
      await rejectsWith(
        f.store.create(
          f.ctx(),
          widget('w1', { metadata: { name: 'w1', ownerReferences: [ref('a'), ref('b')] } }),
          CREATE,
        ),
        { code: 422, message: /Only one reference can have Controller set to true/ },
      );
      await rejectsWith(
        f.store.create(
          f.ctx(),
          widget('w1', { metadata: { name: 'w1', finalizers: ['orphan', 'foregroundDeletion'] } }),
          CREATE,
        ),
        { code: 422, message: /finalizer orphan and foregroundDeletion cannot be both set/ },
      );
    });

    it('dedups identical owner references with a warning', async () => {
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u1' };
      const ctx = f.ctx();
      const out = await f.store.create(
        ctx,
        widget('w1', { metadata: { name: 'w1', ownerReferences: [ref, ref] } }),
        CREATE,
      );
      assert.equal(out.metadata.ownerReferences?.length, 1);
      assert.equal(ctx.warnings.length, 1);
      assert.match(
        ctx.warnings[0] ?? '',
        /^\.metadata\.ownerReferences contains duplicate entries; .*duplicate UID\(s\) observed: u1$/,
      );
    });
  });

  describe('managedFields', () => {
    it('records an Update by the User-Agent product when no fieldManager is given', async () => {
      const out = await f.store.create(
        f.ctx(),
        widget('w1', {
          metadata: { name: 'w1', labels: { app: 'x' }, finalizers: ['example.com/f'] },
          spec: { size: 1, tags: ['a'] },
        }),
        CREATE,
      );
      assert.deepEqual(out.metadata.managedFields, [
        {
          manager: 'kubectl',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: '2026-07-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:labels': { '.': {}, 'f:app': {} },
              'f:finalizers': { '.': {}, 'v:"example.com/f"': {} },
            },
            // Status is the status subresource's: the main resource never owns it.
            'f:spec': { '.': {}, 'f:size': {}, 'f:tags': {} },
          },
        },
      ]);
    });

    it('uses the fieldManager parameter and refuses one longer than 128 characters', async () => {
      const out = await f.store.create(f.ctx(), widget('w1'), { ...CREATE, fieldManager: 'my-controller' });
      assert.equal(out.metadata.managedFields?.[0]?.manager, 'my-controller');
      await rejectsWith(f.store.create(f.ctx(), widget('w2'), { ...CREATE, fieldManager: 'm'.repeat(129) }), {
        code: 422,
        message:
          'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most 128 bytes',
      });
    });

    it('creates the object when the managedFields it brings cannot be read, and drops them', async () => {
      // A set-member key nested far deeper than any object may be: the engine cannot
      // read it, and a create drops the managedFields (upstream's UpdateNoErrors) rather
      // than failing with a 500.
      const deepKey = `v:${'['.repeat(200_000)}${']'.repeat(200_000)}`;
      const out = await f.store.create(
        f.ctx(),
        widget('w1', {
          metadata: {
            name: 'w1',
            managedFields: [
              {
                manager: 'old',
                operation: 'Update',
                apiVersion: API_VERSION,
                fieldsType: 'FieldsV1',
                fieldsV1: { 'f:spec': { [deepKey]: {} } },
              },
            ],
          },
        }),
        CREATE,
      );
      assert.equal(out.metadata.managedFields, undefined);
      assert.equal((await f.store.get(f.ctx(), 'w1', {})).metadata.uid, out.metadata.uid);
    });
  });

  describe('dryRun', () => {
    it('does everything but the write', async () => {
      const out = await f.store.create(
        f.ctx(),
        { metadata: { generateName: 'd-' }, spec: { size: 2 } },
        { ...CREATE, dryRun: true },
      );
      assert.match(out.metadata.name ?? '', /^d-/);
      assert.ok(out.metadata.uid);
      assert.equal(out.metadata.resourceVersion, undefined);
      const list = await f.store.list(f.ctx(), {});
      assert.deepEqual(list.items, []);
    });

    it('still reports a name that exists, and invalid objects', async () => {
      await f.store.create(f.ctx(), widget('w1'), CREATE);
      await rejectsWith(f.store.create(f.ctx(), widget('w1'), { ...CREATE, dryRun: true }), {
        code: 409,
        reason: 'AlreadyExists',
      });
      await rejectsWith(
        f.store.create(f.ctx(), widget('w2', { spec: { size: -1 } }), { ...CREATE, dryRun: true }),
        { code: 422 },
      );
    });
  });

  describe('decorate', () => {
    it('shows the writing request what reads never show', async () => {
      const out = await f.store.create(f.ctx(), widget('w1', { spec: { secret: 's3cret' } }), CREATE);
      assert.equal((out.spec as Record<string, unknown>).secret, 's3cret');
      const got: KubeObject = await f.store.get(f.ctx(), 'w1', {});
      assert.equal((got.spec as Record<string, unknown>).secret, '');
    });
  });
});
