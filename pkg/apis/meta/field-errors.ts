// Field errors: validation returns these, never throws. The text format and the
// cause reasons are apimachinery's (pkg/util/validation/field/errors.go), because
// kubectl prints them and people grep for them.

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueNotFound'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotFound: 'Not found',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** Types whose message omits the offending value, as apimachinery's ErrorBody does. */
const OMIT_VALUE: ReadonlySet<FieldErrorType> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'InternalError',
]);

export interface FieldError {
  readonly type: FieldErrorType;
  /** Dotted path with bracketed keys and indexes: `spec.data[my key]`, `spec.access[0].verbs`. */
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail?: string;
  /** True when badValue is absent on purpose (so `undefined` is not printed). */
  readonly omitValue?: boolean;
}

/** Builds field paths the way field.Path does: `.child`, `[index]`, `[key]`. */
export class FieldPath {
  private constructor(private readonly text: string) {}

  static root(name: string): FieldPath {
    return new FieldPath(name);
  }

  child(...names: string[]): FieldPath {
    let text = this.text;
    for (const name of names) text = text === '' ? name : `${text}.${name}`;
    return new FieldPath(text);
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }

  toString(): string {
    return this.text;
  }
}

type PathLike = FieldPath | string;

export function required(path: PathLike, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field: String(path), detail, omitValue: true };
}

export function invalid(path: PathLike, value: unknown, detail = ''): FieldError {
  return { type: 'FieldValueInvalid', field: String(path), badValue: value, detail };
}

export function typeInvalid(path: PathLike, value: unknown, detail = ''): FieldError {
  return { type: 'FieldValueTypeInvalid', field: String(path), badValue: value, detail };
}

export function notSupported(path: PathLike, value: unknown, valid: readonly string[]): FieldError {
  const detail = valid.length > 0 ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field: String(path), badValue: value, detail };
}

export function forbidden(path: PathLike, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field: String(path), detail, omitValue: true };
}

export function duplicate(path: PathLike, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field: String(path), badValue: value };
}

export function notFound(path: PathLike, value: unknown): FieldError {
  return { type: 'FieldValueNotFound', field: String(path), badValue: value };
}

export function tooLong(path: PathLike, maxLength: number): FieldError {
  return {
    type: 'FieldValueTooLong',
    field: String(path),
    detail: `must have at most ${maxLength} bytes`,
    omitValue: true,
  };
}

export function tooMany(path: PathLike, actual: number, max: number): FieldError {
  return {
    type: 'FieldValueTooMany',
    field: String(path),
    detail: `must have at most ${max} items`,
    badValue: actual,
    omitValue: true,
  };
}

export function internalError(path: PathLike, detail: string): FieldError {
  return { type: 'InternalError', field: String(path), detail, omitValue: true };
}

/** Formats a value as field.Error does: %v for scalars, %q for strings, JSON otherwise. */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** The error's text without the field: `Invalid value: "x": must be ...`. */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if (!OMIT_VALUE.has(e.type) && !e.omitValue) s += `: ${formatValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** The whole error: `spec.data[x]: Invalid value: "y": must be ...`. */
export function fieldErrorString(e: FieldError): string {
  const body = fieldErrorBody(e);
  return e.field ? `${e.field}: ${body}` : body;
}

/** Joins several errors the way utilerrors.NewAggregate prints them. */
export function aggregateMessage(messages: readonly string[]): string {
  if (messages.length === 1) return messages[0] ?? '';
  return `[${messages.join(', ')}]`;
}
