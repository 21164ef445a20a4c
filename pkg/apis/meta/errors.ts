// ApiError: an error that knows the Kubernetes Status it becomes. Constructors and
// message templates mirror k8s.io/apimachinery/pkg/api/errors/errors.go exactly,
// because kubectl prints these messages and client libraries switch on `reason`.

import { aggregateMessage, fieldErrorBody, fieldErrorString, type FieldError } from './field-errors.js';
import type { Status, StatusCause, StatusDetails } from './types.js';

export type StatusReason =
  | ''
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'StoreReadError'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable';

export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/** `teams.management.platform.dev`, or just `teams` for the core group. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export function qualifiedKind(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails, options?: ErrorOptions) {
    // A refusal (404, 403, 409, 422, 429, 503...) is an answer, not a fault: nothing
    // prints its stack (writeError logs only what is not an ApiError), yet V8 would
    // capture one at every construction, about 2 µs a refusal. So only a 500 keeps
    // its frames, for whoever logs it; the others' `stack` is just "ApiError: message".
    // A 500 made from a thrown error keeps that error, with its own stack, as `cause`.
    const limit = Error.stackTraceLimit;
    super(...ApiError.withoutFrames(code, message, options));
    Error.stackTraceLimit = limit;
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /**
   * Error's arguments, read (a message's string, the cause) before the frames are turned
   * off, so nothing can throw between turning them off and the constructor turning them
   * back on: a throw there would leave every later error of the process without a stack.
   */
  private static withoutFrames(code: number, message: string, options?: ErrorOptions): [string, ErrorOptions?] {
    const args: [string, ErrorOptions?] = [String(message)];
    if (options && 'cause' in options) args.push({ cause: options.cause });
    if (code !== 500) Error.stackTraceLimit = 0;
    return args;
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason || undefined,
      code: this.code,
    };
    // Upstream's NewTimeoutError always sets details, so its Status carries `details: {}`.
    if (this.details && (Object.keys(this.details).length > 0 || this.reason === 'Timeout'))
      status.details = this.details;
    if (!status.reason) delete status.reason;
    return status;
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

export function reasonOf(err: unknown): StatusReason | undefined {
  return isApiError(err) ? err.reason : undefined;
}

function grDetails(gr: GroupResource, name?: string): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (gr.group) d.group = gr.group;
  if (gr.resource) d.kind = gr.resource;
  return d;
}

export function newNotFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, grDetails(gr, name));
}

export function newAlreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, grDetails(gr, name));
}

export function newGenerateNameConflict(gr: GroupResource, name: string, retryAfterSeconds: number): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`,
    { ...grDetails(gr, name), retryAfterSeconds },
  );
}

export function newConflict(gr: GroupResource, name: string, message: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${message}`,
    grDetails(gr, name),
  );
}

/** The optimistic-lock message of registry/generic/registry/store.go. */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

export function newInvalid(gk: GroupKind, name: string, errs: readonly FieldError[]): ApiError {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  const details: StatusDetails = { name, kind: gk.kind, causes };
  if (gk.group) details.group = gk.group;
  const message = `${qualifiedKind(gk)} "${name}" is invalid: ${aggregateMessage(errs.map(fieldErrorString))}`;
  return new ApiError(422, 'Invalid', message, details);
}

export function newBadRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function newUnauthorized(message = 'Unauthorized'): ApiError {
  return new ApiError(401, 'Unauthorized', message);
}

export function newForbidden(gr: GroupResource, name: string, message: string): ApiError {
  let text: string;
  if (!gr.group && !gr.resource) text = `forbidden: ${message}`;
  else if (!name) text = `${qualifiedResource(gr)} is forbidden: ${message}`;
  else text = `${qualifiedResource(gr)} "${name}" is forbidden: ${message}`;
  return new ApiError(403, 'Forbidden', text, grDetails(gr, name));
}

export function newMethodNotSupported(gr: GroupResource, action: string): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`,
    grDetails(gr),
  );
}

export function newMethodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function newResourceExpired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function newGone(message: string): ApiError {
  return new ApiError(410, 'Gone', message);
}

export function newTooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds });
}

export function newTimeout(message: string, retryAfterSeconds = 0, causes?: StatusCause[]): ApiError {
  const details: StatusDetails = {};
  if (retryAfterSeconds) details.retryAfterSeconds = retryAfterSeconds;
  if (causes) details.causes = causes;
  return new ApiError(504, 'Timeout', `Timeout: ${message}`, details);
}

export function newTooLargeResourceVersion(requested: number, current: number, retryAfterSeconds = 1): ApiError {
  return newTimeout(`Too large resource version: ${requested}, current: ${current}`, retryAfterSeconds, [
    { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
  ]);
}

export function newServerTimeout(gr: GroupResource, operation: string, retryAfterSeconds: number): ApiError {
  return new ApiError(
    500,
    'ServerTimeout',
    `The ${operation} operation against ${qualifiedResource(gr)} could not be completed at this time, please try again.`,
    { ...grDetails(gr), retryAfterSeconds },
  );
}

/** Never carries internal detail to the client beyond the text given here; log the cause. */
export function newInternalError(message: string, cause?: unknown): ApiError {
  return new ApiError(
    500,
    'InternalError',
    `Internal error occurred: ${message}`,
    { causes: [{ message }] },
    cause === undefined ? undefined : { cause },
  );
}

export function newServiceUnavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message);
}

export function newUnsupportedMediaType(accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function newNotAcceptable(accepted: readonly string[]): ApiError {
  return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

export function newRequestEntityTooLarge(message: string): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
}

/** A 422 that is not about one object's fields, e.g. a failed JSON patch `test`. */
export function newUnprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

/** Any thrown value as an ApiError; unknown errors become a detail-free 500. */
export function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  return newInternalError('an unexpected error occurred, see the server log', err);
}
