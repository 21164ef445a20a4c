// Server-side apply and managed fields: the engine the Store and the HTTP layer
// call. See README.md in this folder for how to call it.

export {
  ANCIENT_CHANGES_MANAGER,
  BEFORE_FIRST_APPLY_MANAGER,
  defaultResetFields,
  FieldManager,
  FieldManagerError,
  LAST_APPLIED_ANNOTATION,
  MAX_UPDATE_MANAGERS,
  NEVER_OWNED_FIELDS,
  type FieldManagerOptions,
} from './field-manager.js';
export { ApplyConflictError, conflictMessage, type ApplyConflict } from './conflict.js';
export { isResetManagedFields } from './managed.js';
export { invalidManagedFieldsAfterAdmissionWarning, restoreManagedFieldsIfInvalid } from './admission.js';
