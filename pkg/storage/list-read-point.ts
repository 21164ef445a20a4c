// Where a list reads, from its options (k8s.io/apiserver storage: the
// resourceVersion / resourceVersionMatch / continue / limit rules of a list),
// decided once for KVStorage and the watch cache:
//
//   continue                    the token's key, at the token's revision (0: the latest)
//   no resourceVersion          the latest, consistently
//   NotOlderThan N              anything at least as new as N ("0": anything)
//   Exact N                     exactly N ("0": the latest)
//   N without a match, paged    exactly N (legacy); unpaged: not older than N

import { continuePoint } from './continue.js';
import { StorageError } from './errors.js';
import type { ListOptions } from './interfaces.js';
import { parseResourceVersion } from './resource-version.js';

export interface ListReadPoint {
  /** Where a continued list resumes; undefined for a first page. */
  readonly continueKey: string | undefined;
  /** Read exactly at this revision; 0 when not pinned. */
  readonly exact: number;
  /** The read must have seen at least this revision; 0 for no bound. */
  readonly minimum: number;
  /** Nothing pins or bounds the read: it must be of the latest revision (a consistent read). */
  readonly latest: boolean;
}

export function listReadPoint(
  options: ListOptions,
  keyPrefix: string,
  recursive: boolean,
  limit: number,
): ListReadPoint {
  const rv = options.resourceVersion ?? '';
  if (recursive && options.continue) {
    const resume = continuePoint(options.continue, keyPrefix, rv);
    return { continueKey: resume.key, exact: resume.revision, minimum: 0, latest: resume.revision === 0 };
  }
  const at = (exact: number, minimum: number, latest = false): ListReadPoint => ({
    continueKey: undefined,
    exact,
    minimum,
    latest,
  });
  if (rv === '') return at(0, 0, true);
  const parsed = parseResourceVersion(rv);
  switch (options.resourceVersionMatch ?? '') {
    case 'NotOlderThan':
      return at(0, parsed);
    case 'Exact':
      return at(parsed, 0, parsed === 0);
    case '':
      // Legacy: a resourceVersion with a limit means "exactly at", without one "not older than".
      return recursive && limit > 0 && parsed > 0 ? at(parsed, 0) : at(0, parsed);
    default:
      throw new StorageError(
        'InvalidError',
        '',
        `unknown ResourceVersionMatch value: ${String(options.resourceVersionMatch)}`,
      );
  }
}
