// The guard upstream puts around admission once a write's managedFields are recorded
// (apiserver handlers/fieldmanager admission.go, NewManagedFieldsValidatingAdmissionController):
// admission runs after the field manager, so whatever it does to managedFields would
// be stored as is. Entries it leaves undecodable are put back as they were before
// admission, and the client is warned; entries it changed validly stay.

import type { KubeObject, ManagedFieldsEntry } from '../../apis/meta/types.js';
import { decodeManagedFields } from './managed.js';

/** Upstream's InvalidManagedFieldsAfterMutatingAdmissionWarningFormat, its `%v` the decoding error. */
export function invalidManagedFieldsAfterAdmissionWarning(reason: string): string {
  return (
    '.metadata.managedFields was in an invalid state after admission; this could be caused by ' +
    `an outdated mutating admission controller; please fix your requests: ${reason}`
  );
}

/**
 * After admission: when `obj`'s managedFields are no longer `before` (the same list)
 * and do not decode, restores `before` and returns the warning to send; else
 * undefined. Lists are compared by identity, as upstream compares its slices' entries:
 * the field manager made `before`, so an untouched list needs no decoding.
 */
export function restoreManagedFieldsIfInvalid(
  obj: KubeObject,
  before: ManagedFieldsEntry[] | undefined,
): string | undefined {
  const after: unknown = obj.metadata.managedFields;
  if (after === before) return undefined;
  const reason = managedFieldsError(after);
  if (reason === undefined) return undefined;
  if (before === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = before;
  return invalidManagedFieldsAfterAdmissionWarning(reason);
}

/** Why a value cannot be read as managedFields (upstream ValidateManagedFields), or undefined. */
function managedFieldsError(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return 'managedFields must be a list of entries';
  if (value.some((e) => typeof e !== 'object' || e === null || Array.isArray(e)))
    return 'a managed fields entry must be an object';
  try {
    decodeManagedFields(value as ManagedFieldsEntry[]);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
