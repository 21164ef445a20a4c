// What other packages use from the generic registry: the Store, the selector
// parsing and matching behind list/watch, and the storage-to-API error mapping.

export { Store, type StoreOptions } from './store.js';
export { ApiErrorWithListMeta, interpretStorageError, type Operation } from './errors.js';
export {
  predicateFrom,
  selectionPredicate,
  validateListOptions,
  type SelectionPredicate,
} from './list-options.js';
export { convertToTable, META_API_VERSION } from './table.js';
export { MAX_JSON_PATCH_OPERATIONS } from './patch.js';
export {
  EVERYTHING_LABELS,
  labelSelectorFromRequirements,
  parseLabelSelector,
  type LabelRequirement,
  type LabelSelector,
} from '../../apis/meta/labels.js';
export {
  EVERYTHING_FIELDS,
  objectMetaFieldsSet,
  parseFieldSelector,
  type FieldRequirement,
  type FieldSelector,
} from '../../apis/meta/fields.js';
