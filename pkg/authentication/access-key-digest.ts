// Which value of an access key a token or a client certificate was made with: the
// digest they record, so that they die when the key's value is rotated.

import { createHash } from 'node:crypto';
import type { KubeObject } from '../apis/meta/types.js';
import { storedKeyHash } from '../identity/identity-cache.js';

/**
 * Which value of a key this is: a digest of its uid and its revision (a random
 * value the server draws again whenever the key's value changes, in
 * `revisionAnnotation`), so it changes when the key is rotated and, being of no
 * function of the key's value, allows no offline guessing of a short client-chosen
 * key from a token or a certificate that records it. A token or certificate made
 * with a leaked value dies with that value. A key stored before keys had a
 * revision falls back to a digest of its stored hash (what its existing tokens
 * and certificates recorded) until it is rotated. '' for a key without a stored
 * hash or a uid.
 */
export function accessKeyDigest(key: KubeObject, revisionAnnotation: string): string {
  const stored = storedKeyHash(key);
  const uid = key.metadata.uid ?? '';
  if (!stored || !uid) return '';
  const revision = key.metadata.annotations?.[revisionAnnotation];
  const input = revision
    ? `platform-key-revision\u0000${uid}\u0000${revision}`
    : `platform-token-binding\u0000${uid}\u0000${stored}`;
  return createHash('sha256').update(input).digest('base64url').slice(0, 22);
}
