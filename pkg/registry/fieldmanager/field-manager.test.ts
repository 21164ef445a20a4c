import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sharedSecretSchema } from '../../apis/management/v1/shared-secret.js';
import { teamSchema } from '../../apis/management/v1/team.js';
import type { KubeObject, ManagedFieldsEntry } from '../../apis/meta/types.js';
import { ApplyConflictError, FieldManager, LAST_APPLIED_ANNOTATION } from './index.js';

const GV = 'management.platform.dev/v1';

/** A clock the test moves: each tick is one second later. */
function clock(): { now: () => Date; tick: () => void } {
  let t = Date.parse('2026-01-01T00:00:00Z');
  return { now: () => new Date(t), tick: () => (t += 1000) };
}

function teams(now: () => Date, subresource = ''): FieldManager {
  return new FieldManager({ schema: teamSchema(), apiVersion: GV, kind: 'Team', subresource, now });
}

const empty = (): KubeObject => ({ apiVersion: GV, kind: 'Team', metadata: {} });

function team(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: GV, kind: 'Team', metadata: { name: 't', ...metadata }, spec };
}

/** The stored object after a write: the server gives it a uid. */
function stored(obj: KubeObject): KubeObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      uid: 'uid-1',
      resourceVersion: '1',
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
  };
}

function entry(obj: KubeObject, manager: string): ManagedFieldsEntry | undefined {
  return obj.metadata.managedFields?.find((e) => e.manager === manager);
}

function conflictOf(f: () => unknown): ApplyConflictError {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof ApplyConflictError, `expected a conflict, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a conflict');
}

describe('FieldManager', () => {
  it('records a create as an Update entry with the fields it set, never the server fields', () => {
    const c = clock();
    const out = teams(c.now).update(
      empty(),
      team({ displayName: 'A', users: ['alice'] }, { labels: { x: 'y' } }),
      'kubectl-create',
    );
    assert.deepEqual(out.metadata.managedFields, [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: GV,
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } },
          'f:spec': { '.': {}, 'f:displayName': {}, 'f:users': { '.': {}, 'v:"alice"': {} } },
        },
      },
    ]);
  });

  it('gives an update the fields it changed, takes them from others, and moves time only on change', () => {
    const c = clock();
    const fm = teams(c.now);
    const created = stored(fm.update(empty(), team({ displayName: 'A', description: 'd' }), 'creator'));
    c.tick();
    const edited = fm.update(created, { ...created, spec: { displayName: 'B', description: 'd' } }, 'editor');
    assert.deepEqual(entry(edited, 'editor')?.fieldsV1, { 'f:spec': { 'f:displayName': {} } });
    assert.equal(entry(edited, 'editor')?.time, '2026-01-01T00:00:01Z');
    assert.deepEqual(entry(edited, 'creator')?.fieldsV1, { 'f:spec': { '.': {}, 'f:description': {} } });
    assert.equal(entry(edited, 'creator')?.time, '2026-01-01T00:00:00Z');
    c.tick();
    // The same write again changes nothing: no entry moves.
    const again = fm.update(
      stored(edited),
      { ...stored(edited), spec: { displayName: 'B', description: 'd' } },
      'editor',
    );
    assert.deepEqual(again.metadata.managedFields, edited.metadata.managedFields);
  });

  it('keeps the live managedFields when a write omits them, and resets them on [] or [{}]', () => {
    const c = clock();
    const fm = teams(c.now);
    const created = stored(fm.update(empty(), team({ displayName: 'A' }), 'creator'));
    const omitted = { ...created, metadata: { ...created.metadata } };
    delete omitted.metadata.managedFields;
    assert.deepEqual(
      fm.update(created, omitted, 'other').metadata.managedFields,
      created.metadata.managedFields,
    );
    for (const reset of [[], [{}]]) {
      const out = fm.update(
        created,
        { ...created, metadata: { ...created.metadata, managedFields: reset } },
        'other',
      );
      assert.equal(out.metadata.managedFields, undefined, JSON.stringify(reset));
    }
    // A reset leaves the object untracked (upstream): even this write's own change is not recorded.
    const resetAndChange = fm.update(
      created,
      { ...created, metadata: { ...created.metadata, managedFields: [{}] }, spec: { displayName: 'B' } },
      'other',
    );
    assert.equal(resetAndChange.metadata.managedFields, undefined);
  });

  it('leaves an untracked object untracked until its first apply, which records before-first-apply', () => {
    const c = clock();
    const fm = teams(c.now);
    const untracked = stored(team({ displayName: 'A', description: 'old' }));
    const updated = fm.update(
      untracked,
      { ...untracked, spec: { displayName: 'B', description: 'old' } },
      'editor',
    );
    assert.equal(updated.metadata.managedFields, undefined);
    const applied = fm.apply(
      stored(updated),
      { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec: { displayName: 'C' } },
      'ci',
      true,
    );
    assert.deepEqual(
      applied.metadata.managedFields?.map((e) => [e.manager, e.operation]),
      [
        ['ci', 'Apply'],
        ['before-first-apply', 'Update'],
      ],
    );
    // What was there before keeps its owner; the forced field moved to the applier.
    assert.deepEqual(entry(applied, 'before-first-apply')?.fieldsV1, {
      'f:spec': { '.': {}, 'f:description': {} },
    });
  });

  it("refuses an apply to another manager's field with upstream's 409, and force takes it over", () => {
    const c = clock();
    const fm = teams(c.now);
    const apply = (
      live: KubeObject,
      spec: Record<string, unknown>,
      manager: string,
      force = false,
    ): KubeObject =>
      fm.apply(live, { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec }, manager, force);
    const first = stored(apply(empty(), { displayName: 'A', users: ['alice'] }, 'ci-pipeline'));
    const one = conflictOf(() => apply(first, { displayName: 'B' }, 'helm'));
    assert.equal(one.code, 409);
    assert.equal(one.message, 'Apply failed with 1 conflict: conflict with "ci-pipeline": .spec.displayName');
    assert.deepEqual(one.details?.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "ci-pipeline"', field: '.spec.displayName' },
    ]);
    // Shared ownership of a set member is no conflict; equal values are none either.
    const shared = stored(apply(first, { displayName: 'A', users: ['alice', 'bob'] }, 'helm'));
    const edited = stored(
      fm.update(
        shared,
        { ...shared, spec: { ...(shared['spec'] as object), description: 'x' } },
        'kubectl-edit',
      ),
    );
    const two = conflictOf(() => apply(edited, { displayName: 'C', description: 'y' }, 'flux'));
    assert.equal(
      two.message,
      'Apply failed with 3 conflicts: conflicts with "ci-pipeline":\n- .spec.displayName\nconflicts with "helm":\n- .spec.displayName\nconflicts with "kubectl-edit" using management.platform.dev/v1:\n- .spec.description',
    );
    assert.deepEqual(
      two.details?.causes?.map((x) => x.message),
      [
        'conflict with "ci-pipeline"',
        'conflict with "helm"',
        'conflict with "kubectl-edit" using management.platform.dev/v1',
      ],
    );
    const forced = apply(edited, { displayName: 'C', description: 'y' }, 'flux', true);
    assert.deepEqual(forced['spec'], { displayName: 'C', users: ['alice', 'bob'], description: 'y' });
    assert.equal(entry(forced, 'kubectl-edit'), undefined, "the loser's empty entry disappears");
    assert.deepEqual(entry(forced, 'ci-pipeline')?.fieldsV1, {
      'f:spec': { 'f:users': { 'v:"alice"': {} } },
    });
  });

  it('removes what an applier stops applying, unless another manager owns it', () => {
    const c = clock();
    const fm = teams(c.now);
    const apply = (live: KubeObject, spec: Record<string, unknown>, manager: string): KubeObject =>
      stored(fm.apply(live, { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec }, manager, false));
    let obj = apply(empty(), { displayName: 'A', description: 'd', users: ['alice', 'bob'] }, 'a');
    obj = apply(obj, { users: ['bob'] }, 'b');
    obj = apply(obj, { displayName: 'A' }, 'a');
    assert.deepEqual(obj['spec'], { displayName: 'A', users: ['bob'] });
  });

  it('writes nothing new for an apply that changes nothing', () => {
    const c = clock();
    const fm = teams(c.now);
    const config = { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec: { displayName: 'A' } };
    const first = stored(fm.apply(empty(), config, 'ci', false));
    c.tick();
    const second = fm.apply(first, config, 'ci', false);
    assert.deepEqual(second, first);
  });

  it('folds the oldest of more than 10 Update managers into ancient-changes', () => {
    const c = clock();
    const fm = teams(c.now);
    let obj = stored(fm.update(empty(), team({ displayName: 'x' }), 'm0'));
    for (let i = 1; i <= 11; i++) {
      c.tick();
      const labels = { ...(obj.metadata.labels ?? {}), [`l${i}`]: 'x' };
      obj = stored(fm.update(obj, { ...obj, metadata: { ...obj.metadata, labels } }, `m${i}`));
    }
    const managers = (obj.metadata.managedFields ?? []).map((e) => e.manager);
    assert.equal(managers.length, 10);
    // The 11th updater folded m0 and m1 (the oldest) into a bucket; the 12th folded m2 into it:
    // the bucket keeps their fields and the newest of their times.
    assert.ok(
      !managers.includes('m0') && !managers.includes('m1') && !managers.includes('m2'),
      managers.join(','),
    );
    const bucket = entry(obj, 'ancient-changes');
    assert.deepEqual(bucket?.fieldsV1, {
      'f:metadata': { 'f:labels': { '.': {}, 'f:l1': {}, 'f:l2': {} } },
      'f:spec': { '.': {}, 'f:displayName': {} },
    });
    assert.equal(bucket?.time, '2026-01-01T00:00:02Z');
  });

  it('sorts entries Apply first, then by time, then by manager', () => {
    const c = clock();
    const fm = teams(c.now);
    let obj = stored(fm.update(empty(), team({ displayName: 'x' }), 'zeta'));
    c.tick();
    obj = stored(fm.update(obj, { ...obj, spec: { displayName: 'x', description: 'y' } }, 'alpha'));
    obj = stored(
      fm.apply(
        obj,
        { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec: { users: ['u'] } },
        'applier',
        false,
      ),
    );
    assert.deepEqual(
      obj.metadata.managedFields?.map((e) => e.manager),
      ['applier', 'zeta', 'alpha'],
    );
  });

  it('records writes through the status subresource as such, ignoring managedFields in the body', () => {
    const c = clock();
    const status = new FieldManager({
      schema: sharedSecretSchema(),
      apiVersion: GV,
      kind: 'SharedSecret',
      subresource: 'status',
      now: c.now,
    });
    const live: KubeObject = {
      apiVersion: GV,
      kind: 'SharedSecret',
      metadata: { name: 's', uid: 'u', managedFields: [] },
      spec: { displayName: 'A' },
    };
    const live2 = { ...live, metadata: { name: 's', uid: 'u' } };
    const base = new FieldManager({
      schema: sharedSecretSchema(),
      apiVersion: GV,
      kind: 'SharedSecret',
      now: c.now,
    }).update({ apiVersion: GV, kind: 'SharedSecret', metadata: {} }, live2, 'creator');
    const next = {
      ...base,
      metadata: { ...base.metadata, managedFields: [] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const out = status.update(stored(base), next as KubeObject, 'controller');
    assert.deepEqual(entry(out, 'controller'), {
      manager: 'controller',
      operation: 'Update',
      apiVersion: GV,
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:status': {
          '.': {},
          'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
        },
      },
      subresource: 'status',
    });
    assert.ok(entry(out, 'creator'), 'the body cannot reset managedFields through a subresource');
  });

  it('rejects an applied object of another kind or with managedFields (400)', () => {
    const fm = teams(clock().now);
    assert.throws(
      () => fm.apply(empty(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't' } }, 'x', false),
      (err: Error & { code?: number }) =>
        err.code === 400 && err.message === 'invalid object type: /v1, Kind=ConfigMap',
    );
    assert.throws(
      () =>
        fm.apply(
          empty(),
          { apiVersion: GV, kind: 'Team', metadata: { name: 't', managedFields: [{ manager: 'x' }] } },
          'x',
          false,
        ),
      (err: Error & { code?: number }) =>
        err.code === 400 && err.message === 'metadata.managedFields must be nil',
    );
  });

  it("lets kubectl's first server-side apply take over what its client-side apply set", () => {
    const c = clock();
    const fm = teams(c.now);
    const config = { apiVersion: GV, kind: 'Team', metadata: { name: 't' }, spec: { displayName: 'A' } };
    const annotated = team(
      { displayName: 'A' },
      { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(config) } },
    );
    const created = stored(fm.update(empty(), annotated, 'kubectl-client-side-apply'));
    const next = { ...config, spec: { displayName: 'B' } };
    // Another manager conflicts; kubectl itself is let through and keeps the annotation current.
    conflictOf(() => fm.apply(created, next, 'someone-else', false));
    const out = fm.apply(created, next, 'kubectl', false);
    assert.deepEqual(out['spec'], { displayName: 'B' });
    assert.equal(out.metadata.annotations?.[LAST_APPLIED_ANNOTATION], JSON.stringify(next) + '\n');
  });
});
