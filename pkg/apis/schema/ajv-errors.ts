// ajv's errors as Kubernetes field errors. Paths become field paths
// (`spec.data[my-key]`, `spec.access[0].verbs`) and messages follow the structural
// schema validation of apiextensions (kube-openapi's templates, `<path> in body ...`),
// so a CRD user and a user of this server read the same text.

import type { ErrorObject } from 'ajv';

import {
  FieldPath,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
  type FieldError,
} from '../meta/field-errors.js';
import { isObject } from '../meta/types.js';
import { childSchema, itemSchema, type SchemaNode } from './walk.js';

/** The JSON type name of a value, as kube-openapi names it in type errors. */
export function jsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

function decodePointerSegment(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * Turns ajv's JSON pointer into a field path by walking the data and the schema
 * together: list items and map entries get brackets, declared properties dots.
 */
export function pointerToPath(pointer: string, data: unknown, schema: SchemaNode): FieldPath {
  let path = FieldPath.root('');
  if (pointer === '') return path;
  let node: unknown = data;
  let nodeSchema: SchemaNode | undefined = schema;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = decodePointerSegment(raw);
    if (Array.isArray(node)) {
      path = path.index(Number(segment));
      node = node[Number(segment)];
      nodeSchema = nodeSchema ? itemSchema(nodeSchema) : undefined;
      continue;
    }
    const child = nodeSchema ? childSchema(nodeSchema, segment) : undefined;
    path = child && !child.property ? path.key(segment) : path.child(segment);
    node = isObject(node) ? node[segment] : undefined;
    nodeSchema = child?.schema;
  }
  return path;
}

function param(error: ErrorObject, name: string): unknown {
  return (error.params as Record<string, unknown>)[name];
}

function numberParam(error: ErrorObject, name: string): number {
  const value = param(error, name);
  return typeof value === 'number' ? value : -1;
}

/** Formats whose values are never echoed back: they are usually secrets. */
const SECRET_FORMATS: ReadonlySet<string> = new Set(['byte']);

function convertOne(error: ErrorObject, path: FieldPath): FieldError {
  const field = path.toString();
  const value: unknown = error.data;
  const inBody = `${field} in body`;
  switch (error.keyword) {
    case 'required':
      return required(path.child(String(param(error, 'missingProperty'))));
    case 'type': {
      const expected = param(error, 'type');
      const want = Array.isArray(expected) ? expected.join(',') : String(expected);
      const actual = jsonTypeName(value);
      return typeInvalid(field, actual, `${inBody} must be of type ${want}: ${JSON.stringify(actual)}`);
    }
    case 'format': {
      const format = String(param(error, 'format'));
      if (SECRET_FORMATS.has(format)) {
        return { ...typeInvalid(field, undefined, `${inBody} must be of type ${format}`), omitValue: true };
      }
      return typeInvalid(
        field,
        value,
        `${inBody} must be of type ${format}: ${JSON.stringify(String(value))}`,
      );
    }
    case 'enum': {
      const allowed = param(error, 'allowedValues');
      const values = Array.isArray(allowed)
        ? allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
        : [];
      return notSupported(field, value, values);
    }
    case 'minimum':
      return invalid(
        field,
        value,
        `${inBody} should be greater than or equal to ${numberParam(error, 'limit')}`,
      );
    case 'exclusiveMinimum':
      return invalid(field, value, `${inBody} should be greater than ${numberParam(error, 'limit')}`);
    case 'maximum':
      return invalid(
        field,
        value,
        `${inBody} should be less than or equal to ${numberParam(error, 'limit')}`,
      );
    case 'exclusiveMaximum':
      return invalid(field, value, `${inBody} should be less than ${numberParam(error, 'limit')}`);
    case 'multipleOf':
      return invalid(field, value, `${inBody} should be a multiple of ${numberParam(error, 'multipleOf')}`);
    case 'pattern':
      return invalid(field, value, `${inBody} should match '${String(param(error, 'pattern'))}'`);
    case 'minLength':
      return invalid(field, value, `${inBody} should be at least ${numberParam(error, 'limit')} chars long`);
    case 'maxLength':
      return tooLong(field, numberParam(error, 'limit'));
    case 'minItems':
      return invalid(field, value, `${inBody} should have at least ${numberParam(error, 'limit')} items`);
    case 'maxItems':
      return tooMany(field, Array.isArray(value) ? value.length : -1, numberParam(error, 'limit'));
    case 'uniqueItems':
      return invalid(field, value, `${inBody} shouldn't contain duplicates`);
    case 'minProperties':
      return invalid(
        field,
        value,
        `${inBody} should have at least ${numberParam(error, 'limit')} properties`,
      );
    case 'maxProperties':
      return tooMany(field, isObject(value) ? Object.keys(value).length : -1, numberParam(error, 'limit'));
    case 'additionalProperties':
      return invalid(
        field,
        value,
        `${field}.${String(param(error, 'additionalProperty'))} in body is a forbidden property`,
      );
    default:
      return invalid(field, value, error.message ?? `${inBody} is invalid`);
  }
}

/**
 * Converts ajv's errors for `data`. Where a value has the wrong type, the other
 * complaints about that same value are dropped (kube-openapi stops at the type too).
 */
export function convertAjvErrors(
  errors: readonly ErrorObject[],
  data: unknown,
  schema: SchemaNode,
): FieldError[] {
  const typeErrorAt = new Set<string>();
  for (const e of errors) if (e.keyword === 'type') typeErrorAt.add(e.instancePath);
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'type' && typeErrorAt.has(e.instancePath)) continue;
    const fe = convertOne(e, pointerToPath(e.instancePath, data, schema));
    const key = `${fe.type}\u0000${fe.field}\u0000${fe.detail ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}
