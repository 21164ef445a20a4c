// Storage errors carry a code, as k8s.io/apiserver/pkg/storage/errors.go does. The
// generic registry translates them into ApiErrors at its boundary; nothing above the
// registry sees a StorageError.

export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'ResourceVersionConflicts'
  | 'InvalidObj'
  | 'Unreachable'
  | 'InvalidError'
  | 'TooLargeResourceVersion'
  | 'Expired'
  | 'InvalidContinue'
  | 'Internal'
  // The backend could not be reached or failed (down, partitioned, circuit open).
  | 'Unavailable'
  // The backend did not answer within the call's deadline; for a write, whether it
  // was applied is unknown.
  | 'Timeout';

export interface StorageErrorOptions extends ErrorOptions {
  /** For an Expired continuation: a token (rv -1) that continues the list at the latest revision. */
  readonly continueToken?: string;
  /** The stored value could not be transformed or decoded (upstream's ErrCodeCorruptObj, answered as a 500). */
  readonly corrupt?: boolean;
}

export class StorageError extends Error {
  override readonly name = 'StorageError';
  /** Set on an Expired error for a compacted continue token; the registry puts it in ListMeta.continue. */
  readonly continueToken: string | undefined;
  readonly corrupt: boolean;
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message: string,
    readonly resourceVersion = 0,
    options?: StorageErrorOptions,
  ) {
    super(message, options);
    this.continueToken = options?.continueToken;
    this.corrupt = options?.corrupt ?? false;
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}

export function keyNotFound(key: string, rv = 0): StorageError {
  return new StorageError('KeyNotFound', key, `StorageError: key not found, Code: 1, Key: ${key}, ResourceVersion: ${rv}`, rv);
}

export function keyExists(key: string, rv = 0): StorageError {
  return new StorageError('KeyExists', key, `StorageError: key exists, Code: 2, Key: ${key}, ResourceVersion: ${rv}`, rv);
}

export function resourceVersionConflict(key: string, rv: number, detail: string): StorageError {
  return new StorageError('ResourceVersionConflicts', key, detail, rv);
}

/** A precondition (uid or resourceVersion) did not hold. */
export function invalidObj(key: string, rv: number, detail: string): StorageError {
  return new StorageError(
    'InvalidObj',
    key,
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: ${rv}, AdditionalErrorMsg: ${detail}`,
    rv,
  );
}

export function tooLargeResourceVersion(requested: number, current: number): StorageError {
  return new StorageError(
    'TooLargeResourceVersion',
    '',
    `Too large resource version: ${requested}, current: ${current}`,
    current,
  );
}

export function expired(message: string, rv = 0): StorageError {
  return new StorageError('Expired', '', message, rv);
}

/** A compacted continuation: Expired, carrying a token that continues at the latest revision. */
export function expiredContinue(message: string, continueToken: string): StorageError {
  return new StorageError('Expired', '', message, 0, { continueToken });
}

/** storage.ErrResourceVersionSetOnCreate: upstream answers it as a 500. */
export function resourceVersionSetOnCreate(key: string): StorageError {
  return new StorageError('Internal', key, 'resourceVersion should not be set on objects to be created');
}

export function invalidContinue(message: string): StorageError {
  return new StorageError('InvalidContinue', '', message);
}

export function invalidResourceVersion(value: string): StorageError {
  return new StorageError(
    'InvalidError',
    '',
    `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(value)}: strconv.ParseUint: parsing ${JSON.stringify(value)}: invalid syntax`,
  );
}

/**
 * An object whose stored bytes cannot be read: upstream's corrupt object error
 * (Code 7), whose message names the key; `why` says what failed (never a value).
 */
export function corruptObject(key: string, rv: number, why: string, cause?: unknown): StorageError {
  return new StorageError(
    'Internal',
    key,
    `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: ${rv}, AdditionalErrorMsg: ${why}`,
    rv,
    cause === undefined ? { corrupt: true } : { corrupt: true, cause },
  );
}

/** At most this many unreadable objects are named in one list's error (upstream stops past 100). */
const MAX_CORRUPT_NAMED = 100;

/**
 * The unreadable objects met while listing. A list does not skip them silently, nor
 * stop at the first: it fails (500) naming every unreadable key, as upstream's list
 * with AllowUnsafeMalformedObjectDeletion does, so an operator sees all of them at
 * once; every other object stays intact and readable by name.
 */
export class CorruptObjects {
  private readonly errors: StorageError[] = [];

  /** Records `err` when it is a corrupt object and returns true; otherwise false (the caller rethrows). */
  add(err: unknown): boolean {
    if (!(err instanceof StorageError) || !err.corrupt) return false;
    if (this.errors.length <= MAX_CORRUPT_NAMED) this.errors.push(err);
    return true;
  }

  /** Throws the list's error when anything was unreadable. */
  throwIfAny(): void {
    const [first] = this.errors;
    if (first === undefined) return;
    if (this.errors.length === 1) throw first;
    const lines = this.errors.map((e) => `\t${e.message}\n`).join('');
    throw new StorageError(
      'Internal',
      '',
      `unable to transform or decode ${this.errors.length} objects: {\n${lines}}`,
      0,
      { corrupt: true },
    );
  }
}

/** The backend failed or could not be reached: the caller may retry. */
export function storageUnavailable(key: string, cause: unknown): StorageError {
  return new StorageError('Unavailable', key, 'storage is unavailable', 0, { cause });
}

/** The backend did not answer in time; `write` says the operation may still have been applied. */
export function storageTimeout(key: string, write: boolean): StorageError {
  return new StorageError(
    'Timeout',
    key,
    write ? 'storage did not answer in time: the operation may have succeeded' : 'storage did not answer in time',
  );
}
