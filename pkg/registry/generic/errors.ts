// The one place where storage errors become API errors (k8s.io/apiserver
// pkg/storage/errors/storage.go). Above the registry nothing sees a StorageError.

import {
  ApiError,
  isApiError,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newInternalError,
  newNotFound,
  newServerTimeout,
  newTimeout,
  newTooLargeResourceVersion,
  type GroupResource,
  type StatusReason,
} from '../../apis/meta/errors.js';
import type { ListMeta, Status, StatusDetails } from '../../apis/meta/types.js';
import { isStorageError, type StorageError } from '../../storage/errors.js';

export type Operation = 'get' | 'list' | 'create' | 'update' | 'delete' | 'watch';

/**
 * An ApiError whose Status carries list metadata: a 410 for a compacted
 * continue token tells the client, in `metadata.continue`, how to go on.
 */
export class ApiErrorWithListMeta extends ApiError {
  readonly listMeta: ListMeta;

  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    listMeta: ListMeta,
    details?: StatusDetails,
  ) {
    super(code, reason, message, details);
    this.listMeta = listMeta;
  }

  override toStatus(): Status {
    return { ...super.toStatus(), metadata: { ...this.listMeta } };
  }
}

const TOO_LARGE_RE = /Too large resource version: (\d+), current: (\d+)/;

function tooLarge(err: StorageError): ApiError {
  const m = TOO_LARGE_RE.exec(err.message);
  if (m) return newTooLargeResourceVersion(Number(m[1]), Number(m[2]));
  return newTimeout(err.message, 1, [
    { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
  ]);
}

function expired(err: StorageError): ApiError {
  if (err.continueToken)
    return new ApiErrorWithListMeta(410, 'Expired', err.message, { continue: err.continueToken });
  return new ApiError(410, 'Expired', err.message);
}

/** How long a client should wait before retrying a request that storage could not serve. */
const STORAGE_RETRY_AFTER_SECONDS = 1;

/** 503 with Retry-After: client-go and kubectl retry it, as against kube-apiserver with etcd down. */
function storageUnavailableError(gr: GroupResource, operation: Operation, err: StorageError): ApiError {
  return new ApiError(
    503,
    'ServiceUnavailable',
    `storage is unavailable: the ${operation} operation against ${qualifiedGroupResource(gr)} could not be completed, please try again`,
    { retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS },
    { cause: err },
  );
}

/** 504: storage did not answer in time; for a write, whether it was applied is unknown, and the message says so. */
function storageTimeoutError(gr: GroupResource, operation: Operation, err: StorageError): ApiError {
  const outcome = err.message.includes('may have succeeded') ? ': the operation may have succeeded' : '';
  return newTimeout(
    `storage did not answer the ${operation} operation against ${qualifiedGroupResource(gr)} in time${outcome}`,
    STORAGE_RETRY_AFTER_SECONDS,
  );
}

function qualifiedGroupResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function invalidContinue(err: StorageError): ApiError {
  const prefix = 'invalid continue token: ';
  return newBadRequest(err.message.startsWith(prefix) ? err.message : `${prefix}${err.message}`);
}

/**
 * Translates a storage error for `operation` on `name` into an ApiError; an
 * ApiError (thrown by the registry inside an update function) passes through,
 * and anything else is returned unchanged for the HTTP layer to report as a 500.
 */
export function interpretStorageError(
  err: unknown,
  gr: GroupResource,
  name: string,
  operation: Operation,
): unknown {
  if (isApiError(err) || !isStorageError(err)) return err;
  switch (err.code) {
    case 'KeyNotFound':
      return newNotFound(gr, operation === 'list' ? '' : name);
    case 'KeyExists':
      return operation === 'create' ? newAlreadyExists(gr, name) : newConflict(gr, name, err.message);
    case 'ResourceVersionConflicts':
    case 'InvalidObj':
      return newConflict(gr, name, err.message);
    case 'TooLargeResourceVersion':
      return tooLarge(err);
    case 'Expired':
      return expired(err);
    case 'InvalidContinue':
      return invalidContinue(err);
    case 'InvalidError':
      return newBadRequest(err.message);
    case 'Unreachable':
      return newServerTimeout(gr, operation, 2);
    case 'Internal':
      return newInternalError(err.message, err);
    case 'Unavailable':
      return storageUnavailableError(gr, operation, err);
    case 'Timeout':
      return storageTimeoutError(gr, operation, err);
  }
}
