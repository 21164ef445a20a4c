// Deletion rules shared by DELETE and deletecollection (k8s.io/apiserver
// registry/rest/delete.go BeforeDelete and registry/generic/registry/store.go):
// DeleteOptions validation, preconditions, the garbage-collector finalizers a
// propagation policy asks for, and marking an object as being deleted.

import { newConflict, newInvalid, type GroupKind } from '../../apis/meta/errors.js';
import { invalid, notSupported, type FieldError } from '../../apis/meta/field-errors.js';
import type { DeleteOptions, KubeObject, Preconditions } from '../../apis/meta/types.js';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from '../../apis/meta/validation.js';
import { nowTimestamp } from './object.js';

/** 422 on DeleteOptions.meta.k8s.io when the options contradict themselves. */
export function validateDeleteOptions(options: DeleteOptions): void {
  const errs: FieldError[] = [];
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    errs.push(
      invalid(
        'propagationPolicy',
        options.propagationPolicy,
        'orphanDependents and deletionPropagation cannot be both set',
      ),
    );
  }
  const policy: unknown = options.propagationPolicy;
  if (policy !== undefined && policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
    errs.push(notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  const dryRun = options.dryRun ?? [];
  if (!dryRun.every((v) => v === 'All')) errs.push(notSupported('dryRun', dryRun, ['All']));
  if (errs.length > 0) throw newInvalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errs);
}

/**
 * Preconditions checked before anything is written; the conflict names the
 * Kind, not the resource, as upstream's BeforeDelete does.
 */
export function checkDeletePreconditions(
  obj: KubeObject,
  preconditions: Preconditions | undefined,
  gk: GroupKind,
): void {
  if (!preconditions) return;
  const name = obj.metadata.name ?? '';
  const gr = { group: gk.group, resource: gk.kind };
  if (preconditions.uid !== undefined && preconditions.uid !== (obj.metadata.uid ?? '')) {
    throw newConflict(
      gr,
      name,
      `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${obj.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (
    preconditions.resourceVersion !== undefined &&
    preconditions.resourceVersion !== (obj.metadata.resourceVersion ?? '')
  ) {
    throw newConflict(
      gr,
      name,
      `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}

function shouldOrphan(finalizers: readonly string[], options: DeleteOptions): boolean {
  if (options.orphanDependents !== undefined) return options.orphanDependents;
  if (options.propagationPolicy !== undefined) return options.propagationPolicy === 'Orphan';
  for (const f of finalizers) {
    if (f === FINALIZER_ORPHAN) return true;
    if (f === FINALIZER_FOREGROUND) return false;
  }
  return false;
}

function shouldDeleteInForeground(finalizers: readonly string[], options: DeleteOptions): boolean {
  if (options.orphanDependents !== undefined) return false;
  if (options.propagationPolicy !== undefined) return options.propagationPolicy === 'Foreground';
  for (const f of finalizers) {
    if (f === FINALIZER_FOREGROUND) return true;
    if (f === FINALIZER_ORPHAN) return false;
  }
  return false;
}

/**
 * The finalizers an object should carry for the garbage collector given the
 * delete options (store.go deletionFinalizersForGarbageCollection), and whether
 * they differ from what it has. Without a collector to honour them nothing is
 * added or removed: the finalizers the object has are left as they are.
 */
export function deletionFinalizers(
  obj: KubeObject,
  options: DeleteOptions,
  garbageCollection = true,
): { changed: boolean; finalizers: string[] } {
  const existing = obj.metadata.finalizers ?? [];
  if (!garbageCollection) return { changed: false, finalizers: [...existing] };
  const next = existing.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (shouldOrphan(existing, options)) next.push(FINALIZER_ORPHAN);
  if (shouldDeleteInForeground(existing, options)) next.push(FINALIZER_FOREGROUND);
  const a = new Set(existing);
  const b = new Set(next);
  const changed = a.size !== b.size || [...a].some((f) => !b.has(f));
  return { changed, finalizers: changed ? next : [...existing] };
}

/**
 * Marks an object as being deleted (store.go markAsDeleting): generation bumps
 * on the first mark, deletionTimestamp is set to now unless it is already
 * earlier, and the grace period is zero (our kinds have no graceful deletion).
 */
export function markAsDeleting(obj: KubeObject, now: Date = new Date()): void {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = (meta.generation ?? 0) + 1;
  const nowText = nowTimestamp(now);
  if (!meta.deletionTimestamp || Date.parse(meta.deletionTimestamp) > Date.parse(nowText)) {
    meta.deletionTimestamp = nowText;
  }
  meta.deletionGracePeriodSeconds = 0;
}
