// Who a write is recorded for in managedFields, and the checks of the fieldManager
// parameter (k8s.io/apiserver handlers/rest.go managerOrUserAgent and
// apimachinery's ValidatePatchOptions/ValidateFieldManager). The recording itself
// is the server-side apply engine's (pkg/registry/fieldmanager).

import { newInvalid } from '../../apis/meta/errors.js';
import { invalid, required, tooLong, type FieldError } from '../../apis/meta/field-errors.js';

export const FIELD_MANAGER_MAX_LENGTH = 128;

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * What is wrong with a fieldManager, as apimachinery's ValidateFieldManager says it:
 * more than 128 bytes, or a character that is not printable (its byte offset given).
 * Empty means "not set" and is fine here (apply requires it separately). Shared by
 * every write path, the query-parameter check and server-side apply alike.
 */
export function fieldManagerErrors(fieldManager: string, path = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH)
    errs.push(tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  let offset = 0;
  for (const ch of fieldManager) {
    if (!PRINTABLE.test(ch)) {
      const code = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalid(path, fieldManager, `invalid character U+${code} (at position ${offset})`));
    }
    offset += Buffer.byteLength(ch);
  }
  return errs;
}

/** 422 on <kind>.meta.k8s.io when fieldManager is too long or not printable. */
export function validateFieldManager(fieldManager: string, kind: OptionsKind): void {
  const errs = fieldManagerErrors(fieldManager);
  if (errs.length > 0) throw newInvalid({ group: 'meta.k8s.io', kind }, '', errs);
}

/** An apply names its manager: nothing else says whose configuration it is (ValidatePatchOptions). */
export function requireApplyFieldManager(fieldManager: string): void {
  if (fieldManager !== '') return;
  throw newInvalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
    required('fieldManager', 'is required for apply patch'),
  ]);
}

/**
 * The manager of a non-apply write: the fieldManager parameter, else the
 * User-Agent's product (up to its first `/`), its non-printable characters
 * dropped and cut at 128 bytes (handlers/rest.go prefixFromUserAgent).
 */
export function managerName(fieldManager: string, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const product = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of product) {
    if (!PRINTABLE.test(ch)) continue;
    const size = Buffer.byteLength(ch);
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += size;
  }
  return out;
}
