// Every stored OwnedAccessKey of a user or a team names that User or Team in its
// metadata.ownerReferences, so that deleting the owner deletes its keys through
// the garbage collector (a background delete, as for any dependent). The
// reference is not blockOwnerDeletion: a user's deletion never waits for its keys.
// While the owner exists (and is not being deleted) a client cannot remove it:
// a key that outlived its owner would be held by nobody.

import { forbidden, type FieldError } from '../../../apis/meta/field-errors.js';
import { FieldPath } from '../../../apis/meta/field-errors.js';
import type { KubeObject, OwnerReference } from '../../../apis/meta/types.js';
import type { StorageDeadline } from '../../../storage/deadline.js';
import { specOf } from '../common.js';

export type KeyOwnerKind = 'User' | 'Team';

/** Reads the current User or Team of that name (undefined when there is none). */
/** `deadline`: the request's, for the storage read. */
export type KeyOwnerLookup = (
  kind: KeyOwnerKind,
  name: string,
  deadline?: StorageDeadline,
) => Promise<KubeObject | undefined>;

/** The owner a key's spec names: spec.user, else spec.team (subject keys have none). */
export function keyOwnerOf(key: KubeObject): { kind: KeyOwnerKind; name: string } | undefined {
  const spec = specOf(key);
  if (typeof spec['user'] === 'string' && spec['user'] !== '') return { kind: 'User', name: spec['user'] };
  if (typeof spec['team'] === 'string' && spec['team'] !== '') return { kind: 'Team', name: spec['team'] };
  return undefined;
}

/** The reference the server keeps on a key of this owner. */
export function keyOwnerReference(group: string, kind: KeyOwnerKind, owner: KubeObject): OwnerReference {
  return { apiVersion: `${group}/v1`, kind, name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '' };
}

function hasReference(obj: KubeObject, uid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid);
}

/**
 * Puts the reference to the key's current owner on `obj` when it lacks it. On an
 * update whose stored object had the reference, a body without it is refused
 * instead (the error is returned for validation to report), unless the owner is
 * being deleted: an orphaning delete of the owner removes it through the collector.
 */
export async function ensureKeyOwnerReference(
  group: string,
  lookup: KeyOwnerLookup,
  obj: KubeObject,
  old: KubeObject | undefined,
  deadline: StorageDeadline | undefined,
): Promise<FieldError | undefined> {
  const named = keyOwnerOf(obj);
  if (!named) return undefined;
  const owner = await lookup(named.kind, named.name, deadline);
  const uid = owner?.metadata.uid;
  if (!owner || !uid || hasReference(obj, uid)) return undefined;
  if (owner.metadata.deletionTimestamp) return undefined;
  if (old && hasReference(old, uid)) {
    return forbidden(
      FieldPath.root('metadata').child('ownerReferences'),
      `the reference to the key's owner ${named.kind} "${named.name}" cannot be removed while the ${named.kind === 'User' ? 'user' : 'team'} exists: deleting the ${named.kind === 'User' ? 'user' : 'team'} deletes its access keys`,
    );
  }
  obj.metadata.ownerReferences = [
    ...(obj.metadata.ownerReferences ?? []),
    keyOwnerReference(group, named.kind, owner),
  ];
  return undefined;
}
