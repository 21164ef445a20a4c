// Resource versions are storage revisions written as decimal strings. Parsing follows
// k8s.io/apiserver storage.APIObjectVersioner.ParseResourceVersion: "" and "0" both
// mean 0 ("no particular version"), anything else must be an unsigned integer.

import { invalidResourceVersion } from './errors.js';

const DECIMAL = /^[0-9]+$/;

/** Parses a resourceVersion; throws an InvalidError StorageError for anything but an unsigned integer. */
export function parseResourceVersion(s: string): number {
  if (s === '' || s === '0') return 0;
  if (!DECIMAL.test(s)) throw invalidResourceVersion(s);
  const n = Number(s);
  // Revisions are int64 in etcd; beyond 2^53 a JS number would silently round, so refuse.
  if (!Number.isSafeInteger(n)) throw invalidResourceVersion(s);
  return n;
}

/** The wire form of a revision. */
export function formatResourceVersion(rev: number): string {
  return String(rev);
}
