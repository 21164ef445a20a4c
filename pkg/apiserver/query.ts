// Query parameters of resource requests, decoded as apimachinery's parameter codec
// decodes them and checked as apimachinery's meta/v1 validation checks them. The
// registry validates how options combine; here we only make sure each is well formed.

import { newBadRequest, newInvalid, type ApiError } from '../apis/meta/errors.js';
import { notSupported, type FieldError } from '../apis/meta/field-errors.js';
import type { DeleteOptions, PropagationPolicy } from '../apis/meta/types.js';
import { fieldManagerErrors } from '../registry/generic/managed-fields.js';
import type { FieldValidation, GetOptions, ListOptions, WriteOptions } from '../registry/rest/interfaces.js';
import { queryBool } from './request-info.js';

const META_GROUP_NAME = 'meta.k8s.io';

/** An empty query, for requests without one. */
export const NO_QUERY = new URLSearchParams();

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function invalidOptions(kind: OptionsKind, errs: FieldError[]): ApiError {
  return newInvalid({ group: META_GROUP_NAME, kind }, '', errs);
}

/** dryRun may only be `All` (ValidateDryRun). */
function dryRunErrors(values: readonly string[]): FieldError[] {
  if (values.every((v) => v === 'All')) return [];
  return [notSupported('dryRun', values, ['All'])];
}

const FIELD_VALIDATION_VALUES: readonly string[] = ['', 'Ignore', 'Strict', 'Warn'];

/** dryRun, fieldManager and fieldValidation of POST, PUT and PATCH; 422 on bad values as upstream. */
export function writeOptionsFrom(query: URLSearchParams, kind: OptionsKind): WriteOptions {
  const dryRun = query.getAll('dryRun');
  const fieldValidation = query.get('fieldValidation') ?? '';
  const fieldManager = query.get('fieldManager') ?? '';
  // ValidateCreate/Update/PatchOptions' order: fieldManager, dryRun, fieldValidation;
  // checked before the body is read, on every write path (subresources included).
  const errs = [...fieldManagerErrors(fieldManager), ...dryRunErrors(dryRun)];
  if (!FIELD_VALIDATION_VALUES.includes(fieldValidation)) {
    errs.push(notSupported('fieldValidation', fieldValidation, FIELD_VALIDATION_VALUES));
  }
  if (errs.length > 0) throw invalidOptions(kind, errs);
  return {
    dryRun: dryRun.length > 0,
    fieldManager,
    fieldValidation: (fieldValidation || 'Warn') as FieldValidation,
  };
}

export function getOptionsFrom(query: URLSearchParams): GetOptions {
  const rv = query.get('resourceVersion');
  return rv === null ? {} : { resourceVersion: rv };
}

/** A decimal integer as Go's strconv.ParseInt reads it, or a 400 naming the parameter. */
function parseInteger(name: string, value: string): number {
  if (!/^[+-]?\d+$/.test(value)) {
    throw newBadRequest(
      `invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`,
    );
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw newBadRequest(
      `invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`,
    );
  }
  return n;
}

export function listOptionsFrom(query: URLSearchParams): ListOptions {
  const opts: {
    -readonly [K in keyof ListOptions]: ListOptions[K];
  } = {};
  const labelSelector = query.get('labelSelector');
  if (labelSelector !== null) opts.labelSelector = labelSelector;
  const fieldSelector = query.get('fieldSelector');
  if (fieldSelector !== null) opts.fieldSelector = fieldSelector;
  const rv = query.get('resourceVersion');
  if (rv !== null) opts.resourceVersion = rv;
  const rvMatch = query.get('resourceVersionMatch');
  if (rvMatch !== null) opts.resourceVersionMatch = rvMatch;
  const limit = query.get('limit');
  if (limit !== null && limit !== '') {
    const n = parseInteger('limit', limit);
    if (n < 0) throw newBadRequest(`invalid value for limit: ${n}: must be greater than or equal to 0`);
    opts.limit = n;
  }
  const cont = query.get('continue');
  if (cont !== null) opts.continue = cont;
  const bookmarks = queryBool(query.get('allowWatchBookmarks'));
  if (bookmarks !== undefined) opts.allowWatchBookmarks = bookmarks;
  const initial = queryBool(query.get('sendInitialEvents'));
  if (initial !== undefined) opts.sendInitialEvents = initial;
  const timeout = query.get('timeoutSeconds');
  if (timeout !== null && timeout !== '') opts.timeoutSeconds = parseInteger('timeoutSeconds', timeout);
  return opts;
}

/** DeleteOptions from the query string (used when the DELETE has no body). */
export function deleteOptionsFromQuery(query: URLSearchParams): DeleteOptions {
  const opts: DeleteOptions = {};
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null && grace !== '') opts.gracePeriodSeconds = parseInteger('gracePeriodSeconds', grace);
  const policy = query.get('propagationPolicy');
  // The registry reports an unsupported policy with the exact 422; pass it on as given.
  if (policy !== null && policy !== '') opts.propagationPolicy = policy as PropagationPolicy;
  const orphan = queryBool(query.get('orphanDependents'));
  if (orphan !== undefined) opts.orphanDependents = orphan;
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) opts.dryRun = dryRun;
  return opts;
}

function typeError(field: string, expected: string): ApiError {
  return newBadRequest(
    `DeleteOptions in version "v1" cannot be handled as a DeleteOptions: ${field} must be ${expected}`,
  );
}

/** DeleteOptions from a decoded body: kind (if any) must be DeleteOptions; field types are checked. */
export function deleteOptionsFromBody(body: unknown): DeleteOptions {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw newBadRequest('decoded object cannot be converted to DeleteOptions');
  }
  const b = body as Record<string, unknown>;
  if (b.kind !== undefined && b.kind !== 'DeleteOptions') {
    throw newBadRequest('decoded object cannot be converted to DeleteOptions');
  }
  const opts: DeleteOptions = {};
  if (b.gracePeriodSeconds !== undefined && b.gracePeriodSeconds !== null) {
    if (typeof b.gracePeriodSeconds !== 'number' || !Number.isInteger(b.gracePeriodSeconds)) {
      throw typeError('gracePeriodSeconds', 'an integer');
    }
    opts.gracePeriodSeconds = b.gracePeriodSeconds;
  }
  if (b.propagationPolicy !== undefined && b.propagationPolicy !== null) {
    if (typeof b.propagationPolicy !== 'string') throw typeError('propagationPolicy', 'a string');
    if (b.propagationPolicy !== '') opts.propagationPolicy = b.propagationPolicy as PropagationPolicy;
  }
  if (b.orphanDependents !== undefined && b.orphanDependents !== null) {
    if (typeof b.orphanDependents !== 'boolean') throw typeError('orphanDependents', 'a boolean');
    opts.orphanDependents = b.orphanDependents;
  }
  if (b.dryRun !== undefined && b.dryRun !== null) {
    if (!Array.isArray(b.dryRun) || !b.dryRun.every((v) => typeof v === 'string')) {
      throw typeError('dryRun', 'a list of strings');
    }
    opts.dryRun = b.dryRun as string[];
  }
  if (b.preconditions !== undefined && b.preconditions !== null) {
    const p = b.preconditions;
    if (typeof p !== 'object' || Array.isArray(p)) throw typeError('preconditions', 'an object');
    const pre = p as Record<string, unknown>;
    opts.preconditions = {};
    for (const key of ['uid', 'resourceVersion'] as const) {
      const v = pre[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') throw typeError(`preconditions.${key}`, 'a string');
      opts.preconditions[key] = v;
    }
  }
  return opts;
}

/** Checks what the HTTP layer must understand itself (dryRun); the registry checks the rest. */
export function validateDeleteDryRun(opts: DeleteOptions): boolean {
  const dryRun = opts.dryRun ?? [];
  const errs = dryRunErrors(dryRun);
  if (errs.length > 0) throw invalidOptions('DeleteOptions', errs);
  return dryRun.length > 0;
}
