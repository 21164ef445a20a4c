// ObjectMeta validation: the rules every kind shares (k8s.io/apimachinery
// pkg/api/validation/objectmeta.go and pkg/util/validation). Messages are
// apimachinery's, because kubectl prints them and people search for them.
// Everything here returns FieldError[] (or string[] of problems); nothing throws.

import {
  FieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
  typeInvalid,
  type FieldError,
} from './field-errors.js';
import { isObject, type ObjectMeta, type OwnerReference } from './types.js';

export const FIELD_IMMUTABLE = 'field is immutable';
export const IS_NEGATIVE = 'must be greater than or equal to 0';
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** The regex explanation apimachinery appends: `msg (e.g. 'a' or 'b', regex used for validation is '...')`. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(' or ')}, regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

/** apimachinery's pattern checks: the length problem, then the pattern's own message. */
function lengthAndPattern(value: string, maxLength: number, pattern: RegExp, message: string): string[] {
  const errs: string[] = [];
  if (value.length > maxLength) errs.push(maxLenError(maxLength));
  if (!pattern.test(value)) errs.push(message);
  return errs;
}

const DNS1123_SUBDOMAIN_ERROR = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123_SUBDOMAIN_FMT,
  'example.com',
);

export function isDNS1123Subdomain(value: string): string[] {
  return lengthAndPattern(value, 253, DNS1123_SUBDOMAIN_RE, DNS1123_SUBDOMAIN_ERROR);
}

/** The label key rule (a qualified name's name part). */
const LABEL_KEY_ERROR = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LABEL_KEY_FMT,
  'MyName',
  'my.name',
  '123-abc',
);

/** A "qualified name" (label key, annotation key, finalizer): `[prefix/]name`. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a valid label key ${LABEL_KEY_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${LABEL_KEY_ERROR}`);
  return errs;
}

const LABEL_VALUE_ERROR = regexError(
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LABEL_VALUE_FMT,
  'MyValue',
  'my_value',
  '12345',
);

export function isValidLabelValue(value: string): string[] {
  return lengthAndPattern(value, 63, LABEL_VALUE_RE, LABEL_VALUE_ERROR);
}

/** Whether a name can be used as one segment of a URL path or a storage key. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const c of ['/', '%']) if (name.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
}

/**
 * Validates a name; `prefix` is true for generateName, whose last character
 * may be a dash because random characters follow it.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);

export const nameIsDNSLabel: NameValidator = (name, prefix) =>
  isDNS1123Label(prefix ? maskTrailingDash(name) : name);

export function validateLabels(labels: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(invalid(path, k, m));
    for (const m of isValidLabelValue(v)) errs.push(invalid(path, v, m));
  }
  return errs;
}

export function validateAnnotations(
  annotations: Record<string, string> | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    // Annotation keys are qualified names except that case does not matter.
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, m));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

function validateOwnerReference(ref: OwnerReference, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = ref.apiVersion ?? '';
  const parts = apiVersion.split('/');
  if (apiVersion.length === 0) {
    errs.push(required(path.child('apiVersion'), 'must not be empty'));
  } else if (parts.length > 2 || (parts[parts.length - 1] ?? '') === '') {
    errs.push(invalid(path.child('apiVersion'), apiVersion, 'must be <group>/<version> or <version>'));
  }
  if (!ref.kind) errs.push(required(path.child('kind'), 'must not be empty'));
  if (!ref.name) errs.push(required(path.child('name'), 'must not be empty'));
  if (!ref.uid) errs.push(required(path.child('uid'), 'must not be empty'));
  // Events may never own anything (apimachinery's BannedOwners).
  if (apiVersion === 'v1' && ref.kind === 'Event') {
    errs.push(invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return errs;
}

export function validateOwnerReferences(
  refs: readonly OwnerReference[] | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  (refs ?? []).forEach((ref, i) => {
    errs.push(...validateOwnerReference(ref, path.index(i)));
    if (ref.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController) {
        errs.push(
          invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  });
  return errs;
}

export function validateFinalizers(finalizers: readonly string[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const list = finalizers ?? [];
  for (const f of list) for (const m of isQualifiedName(f)) errs.push(invalid(path, f, m));
  if (list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(
      invalid(path, list, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`),
    );
  }
  return errs;
}

/** A Go `%#v` rendering of a string slice, which the no-new-finalizers message uses. */
function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

export function validateNoNewFinalizers(
  newFinalizers: readonly string[] | undefined,
  oldFinalizers: readonly string[] | undefined,
  path: FieldPath,
): FieldError[] {
  const old = new Set(oldFinalizers ?? []);
  const extra = [...new Set(newFinalizers ?? [])].filter((f) => !old.has(f)).sort();
  if (extra.length === 0) return [];
  return [
    forbidden(
      path,
      `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
    ),
  ];
}

function validateCommon(meta: ObjectMeta, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if ((meta.generation ?? 0) < 0) errs.push(invalid(path.child('generation'), meta.generation, IS_NEGATIVE));
  errs.push(...validateLabels(meta.labels, path.child('labels')));
  errs.push(...validateAnnotations(meta.annotations, path.child('annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')));
  return errs;
}

/**
 * ObjectMeta rules on create (ValidateObjectMetaAccessor): name or generateName,
 * the name rule, namespace presence by scope, labels, annotations, owner
 * references and finalizers. Name generation has already happened.
 */
export function validateObjectMeta(
  meta: ObjectMeta,
  namespaced: boolean,
  nameFn: NameValidator = nameIsDNSSubdomain,
  path: FieldPath = FieldPath.root('metadata'),
): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const m of nameFn(meta.generateName, true))
      errs.push(invalid(path.child('generateName'), meta.generateName, m));
  }
  if (!meta.name) {
    errs.push(required(path.child('name'), 'name or generateName is required'));
  } else {
    for (const m of nameFn(meta.name, false)) errs.push(invalid(path.child('name'), meta.name, m));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(required(path.child('namespace')));
    else
      for (const m of nameIsDNSLabel(meta.namespace, false))
        errs.push(invalid(path.child('namespace'), meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  }
  errs.push(...validateCommon(meta, path));
  errs.push(...validateFinalizers(meta.finalizers, path.child('finalizers')));
  return errs;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** ObjectMeta rules on update (ValidateObjectMetaAccessorUpdate). */
export function validateObjectMetaUpdate(
  meta: ObjectMeta,
  old: ObjectMeta,
  path: FieldPath = FieldPath.root('metadata'),
): FieldError[] {
  const errs: FieldError[] = [];
  if (old.deletionTimestamp) {
    errs.push(...validateNoNewFinalizers(meta.finalizers, old.finalizers, path.child('finalizers')));
  }
  if (!meta.resourceVersion) {
    errs.push(
      invalid(path.child('resourceVersion'), meta.resourceVersion ?? '', 'must be specified for an update'),
    );
  }
  if ((meta.generation ?? 0) < (old.generation ?? 0)) {
    errs.push(invalid(path.child('generation'), meta.generation ?? 0, 'must not be decremented'));
  }
  const immutable: (keyof ObjectMeta)[] = [
    'name',
    'namespace',
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
  ];
  for (const f of immutable) {
    if (!sameValue(meta[f], old[f])) errs.push(invalid(path.child(f), meta[f] ?? null, FIELD_IMMUTABLE));
  }
  errs.push(...validateCommon(meta, path));
  errs.push(...validateFinalizers(meta.finalizers, path.child('finalizers')));
  return errs;
}

// ---- shape checks ---------------------------------------------------------
// A body is untyped JSON; before any rule above can run, metadata must have
// the types ObjectMeta declares. These checks stand in for Go's typed decode.

const STRING_FIELDS = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion'] as const;
const TIME_FIELDS = ['creationTimestamp', 'deletionTimestamp'] as const;

/** The fields ObjectMeta knows, for unknown-field detection. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

export const OWNER_REFERENCE_FIELDS: ReadonlySet<string> = new Set([
  'apiVersion',
  'kind',
  'name',
  'uid',
  'controller',
  'blockOwnerDeletion',
]);

export const MANAGED_FIELDS_ENTRY_FIELDS: ReadonlySet<string> = new Set([
  'manager',
  'operation',
  'apiVersion',
  'time',
  'fieldsType',
  'fieldsV1',
  'subresource',
]);

const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function isInteger(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v);
}

function checkStringMap(value: unknown, path: FieldPath, errs: FieldError[]): void {
  if (value === null || value === undefined) return;
  if (!isObject(value)) {
    errs.push(typeInvalid(path, value, 'must be an object of strings'));
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') errs.push(typeInvalid(path.key(k), v, 'must be a string'));
  }
}

/** Unknown fields inside metadata, as field paths (`metadata.foo`, `metadata.ownerReferences[0].bar`). */
export function unknownObjectMetaFields(
  meta: unknown,
  path: FieldPath = FieldPath.root('metadata'),
): string[] {
  if (!isObject(meta)) return [];
  const out: string[] = [];
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) out.push(path.child(k).toString());
  const nested: [string, ReadonlySet<string>][] = [
    ['ownerReferences', OWNER_REFERENCE_FIELDS],
    ['managedFields', MANAGED_FIELDS_ENTRY_FIELDS],
  ];
  for (const [field, known] of nested) {
    const list = meta[field];
    if (!Array.isArray(list)) continue;
    list.forEach((item: unknown, i) => {
      if (!isObject(item)) return;
      for (const k of Object.keys(item))
        if (!known.has(k)) out.push(path.child(field).index(i).child(k).toString());
    });
  }
  return out;
}

/** Removes what unknownObjectMetaFields reports, in place. */
export function pruneObjectMeta(meta: unknown): void {
  if (!isObject(meta)) return;
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) delete meta[k];
  const nested: [string, ReadonlySet<string>][] = [
    ['ownerReferences', OWNER_REFERENCE_FIELDS],
    ['managedFields', MANAGED_FIELDS_ENTRY_FIELDS],
  ];
  for (const [field, known] of nested) {
    const list = meta[field];
    if (!Array.isArray(list)) continue;
    for (const item of list as unknown[]) {
      if (!isObject(item)) continue;
      for (const k of Object.keys(item)) if (!known.has(k)) delete item[k];
    }
  }
}

/**
 * Type errors in metadata (a string where a number belongs, an annotation
 * that is a list). Nulls are accepted where Go would decode them to zero values.
 */
export function validateObjectMetaTypes(
  meta: unknown,
  path: FieldPath = FieldPath.root('metadata'),
): FieldError[] {
  const errs: FieldError[] = [];
  if (meta === undefined || meta === null) return errs;
  if (!isObject(meta)) return [typeInvalid(path, meta, 'must be an object')];
  for (const f of STRING_FIELDS) {
    const v = meta[f];
    if (v !== undefined && v !== null && typeof v !== 'string')
      errs.push(typeInvalid(path.child(f), v, 'must be a string'));
  }
  for (const f of TIME_FIELDS) {
    const v = meta[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || !RFC3339_RE.test(v) || Number.isNaN(Date.parse(v))) {
      errs.push(typeInvalid(path.child(f), v, 'must be an RFC 3339 date-time'));
    }
  }
  for (const f of ['generation', 'deletionGracePeriodSeconds'] as const) {
    const v = meta[f];
    if (v !== undefined && v !== null && !isInteger(v))
      errs.push(typeInvalid(path.child(f), v, 'must be an integer'));
  }
  checkStringMap(meta.labels, path.child('labels'), errs);
  checkStringMap(meta.annotations, path.child('annotations'), errs);
  const finalizers = meta.finalizers;
  if (finalizers !== undefined && finalizers !== null) {
    if (!Array.isArray(finalizers))
      errs.push(typeInvalid(path.child('finalizers'), finalizers, 'must be a list of strings'));
    else
      finalizers.forEach((f: unknown, i) => {
        if (typeof f !== 'string')
          errs.push(typeInvalid(path.child('finalizers').index(i), f, 'must be a string'));
      });
  }
  const refs = meta.ownerReferences;
  if (refs !== undefined && refs !== null) {
    if (!Array.isArray(refs)) {
      errs.push(typeInvalid(path.child('ownerReferences'), refs, 'must be a list of objects'));
    } else {
      refs.forEach((ref: unknown, i) => {
        const p = path.child('ownerReferences').index(i);
        if (!isObject(ref)) {
          errs.push(typeInvalid(p, ref, 'must be an object'));
          return;
        }
        for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
          const v = ref[f];
          if (v !== undefined && v !== null && typeof v !== 'string')
            errs.push(typeInvalid(p.child(f), v, 'must be a string'));
        }
        for (const f of ['controller', 'blockOwnerDeletion']) {
          const v = ref[f];
          if (v !== undefined && v !== null && typeof v !== 'boolean')
            errs.push(typeInvalid(p.child(f), v, 'must be a boolean'));
        }
      });
    }
  }
  const managed = meta.managedFields;
  if (managed !== undefined && managed !== null) {
    if (!Array.isArray(managed)) {
      errs.push(typeInvalid(path.child('managedFields'), managed, 'must be a list of objects'));
    } else {
      managed.forEach((entry: unknown, i) => {
        const p = path.child('managedFields').index(i);
        if (!isObject(entry)) {
          errs.push(typeInvalid(p, entry, 'must be an object'));
          return;
        }
        const op = entry.operation;
        if (op !== undefined && op !== 'Apply' && op !== 'Update') {
          errs.push(notSupported(p.child('operation'), op, ['Apply', 'Update']));
        }
      });
    }
  }
  return errs;
}
