// Every stored OwnedAccessKey of a user or a team names that User or Team in its
// metadata.ownerReferences, so that deleting the owner deletes its keys through
// the garbage collector (a background delete, as for any dependent). The
// reference is not blockOwnerDeletion: a user's deletion never waits for its keys.
// While the owner exists (and is not being deleted) a client cannot remove it:
// a key that outlived its owner would be held by nobody.
//
// An orphaning delete of the owner (propagationPolicy Orphan) does remove it, as
// upstream's orphan finalizer does. The key then keeps, in formerOwnerAnnotation,
// the uid of the owner it lost: a User or Team re-created under the same name is
// another object (another uid) and never adopts it, neither on a later write nor
// through the start-up migration (owner-migration.ts), and the authenticator
// refuses it (access-key-usability.ts). Without the record, nothing would tell an
// orphaned key from one stored before keys named their owner. A key orphaned
// before the record existed gets it on its next write (the start-up migration
// writes it): the uid of a reference of its owner's kind and name that names
// another object, or UNKNOWN_FORMER_OWNER when it references no owner and is older
// than the current one, or when it references its current User but was made while a
// former User of the name existed (keyAdoptedFromFormerUser: adopted by the re-created
// User before adoptions were refused).
//
// The record can be wrong: a key Helm applied before its User, stored before keys
// carried a revision, is older than that User and recorded as UNKNOWN_FORMER_OWNER
// although it was made for it. An administrator re-adopts such a key deliberately by
// setting the record to the current owner's uid (which nothing sets by accident: an
// update that leaves the annotation out, or sets anything else, keeps the record);
// the key then references that owner and authenticates as it. The access-key
// admission refuses that change to anyone else (pkg/authorization/admission).

import { forbidden, type FieldError } from '../../../apis/meta/field-errors.js';
import { FieldPath } from '../../../apis/meta/field-errors.js';
import type { KubeObject, OwnerReference } from '../../../apis/meta/types.js';
import type { StorageDeadline } from '../../../storage/deadline.js';
import {
  formerOwnerAnnotation,
  keyAdoptedFromFormerUser,
  keyPredatesOwner,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
  UNKNOWN_FORMER_OWNER,
} from '../../../apis/management/v1/owned-access-key.js';
import { specOf } from '../common.js';

export type KeyOwnerKind = 'User' | 'Team';

/** Reads the current User or Team of that name (undefined when there is none). */
/** `deadline`: the request's, for the storage read. */
export type KeyOwnerLookup = (
  kind: KeyOwnerKind,
  name: string,
  deadline?: StorageDeadline,
) => Promise<KubeObject | undefined>;

/**
 * `lookup` for one write: each owner is read once however often the write asks (its
 * generation and its reference both need the User). Made per write and dropped with
 * it, so no answer outlives the request that read it: the next write reads the owner
 * as it is then.
 */
export function readingOnce(lookup: KeyOwnerLookup): KeyOwnerLookup {
  const read = new Map<string, Promise<KubeObject | undefined>>();
  return (kind, name, deadline) => {
    const id = `${kind}/${name}`;
    let owner = read.get(id);
    if (!owner) read.set(id, (owner = lookup(kind, name, deadline)));
    return owner;
  };
}

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

/** The uid of the owner the key lost to an orphaning delete, if it did. */
export function formerOwnerUid(group: string, key: KubeObject): string | undefined {
  return key.metadata.annotations?.[formerOwnerAnnotation(group)];
}

/**
 * The uid an update asks the stored record to become (`old` has one, the body sets
 * the annotation to another value that is not UNKNOWN_FORMER_OWNER), else
 * undefined. Read before keepFormerOwner restores the record; whether it is the
 * current owner's uid, and so a re-adoption, ensureKeyOwnerReference decides.
 */
export function requestedFormerOwner(group: string, obj: KubeObject, old: KubeObject): string | undefined {
  const stored = formerOwnerUid(group, old);
  const asked = formerOwnerUid(group, obj);
  if (stored === undefined || asked === undefined || asked === stored || asked === UNKNOWN_FORMER_OWNER) {
    return undefined;
  }
  return asked;
}

/**
 * Server-owned annotation: on create (no `old`) none is kept, whatever the client
 * sent; on update the stored value is kept, and when the update drops the
 * reference to the key's owner (the collector orphaning it), that owner's uid is
 * recorded. Called before ensureKeyOwnerReference, which reads it.
 */
export function keepFormerOwner(group: string, obj: KubeObject, old?: KubeObject): void {
  const annotation = formerOwnerAnnotation(group);
  const named = keyOwnerOf(obj);
  const droppedRef =
    old && named
      ? (old.metadata.ownerReferences ?? []).find(
          (r) => r.kind === named.kind && r.name === named.name && r.uid !== '' && !hasReference(obj, r.uid),
        )
      : undefined;
  const value = (old && formerOwnerUid(group, old)) ?? droppedRef?.uid;
  const annotations = { ...(obj.metadata.annotations ?? {}) };
  if (value === undefined) delete annotations[annotation];
  else annotations[annotation] = value;
  if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
  else delete obj.metadata.annotations;
}

/**
 * Our own rule (upstream's ownerReferences validation allows it): a reference
 * carrying the owner's uid must also carry its kind and name. The collector drops
 * references by uid, while keepFormerOwner recognises the owner's by kind and
 * name: a relabelled one (`{kind: Team, name: nobody, uid: <the user's uid>}`)
 * would be dropped by an orphaning delete with no former owner recorded, and a
 * User re-created under the name would adopt the key. Checked even while the
 * owner is being deleted, since that is when the collector drops it.
 */
function relabelledOwnerReference(
  obj: KubeObject,
  named: { kind: KeyOwnerKind; name: string },
  uid: string,
): FieldError | undefined {
  const refs = obj.metadata.ownerReferences ?? [];
  const i = refs.findIndex((r) => r.uid === uid && (r.kind !== named.kind || r.name !== named.name));
  if (i < 0) return undefined;
  const ref = refs[i]!;
  const owner = named.kind === 'User' ? 'user' : 'team';
  return forbidden(
    FieldPath.root('metadata').child('ownerReferences').index(i),
    `the uid of the key's owner ${named.kind} "${named.name}" may only be referenced as that ${owner}, not as ${ref.kind} "${ref.name}"`,
  );
}

/**
 * The former owner of a stored key (`stored`, not referencing `owner`, its current
 * owner by name) that recorded none: the uid its reference by kind and name holds when
 * that is another object's, or UNKNOWN_FORMER_OWNER when the key references no
 * owner of that name and is older than this one (keyPredatesOwner). Undefined when
 * the key may be this owner's: one stored before keys named their owner, made
 * after the owner was.
 */
function formerOwnerOfUnrecorded(
  group: string,
  stored: KubeObject,
  named: { kind: KeyOwnerKind; name: string },
  owner: KubeObject,
): string | undefined {
  const ref = (stored.metadata.ownerReferences ?? []).find(
    (r) => r.kind === named.kind && r.name === named.name && r.uid !== owner.metadata.uid,
  );
  if (ref) return ref.uid !== '' ? ref.uid : UNKNOWN_FORMER_OWNER;
  return keyPredatesOwner(stored, owner, keyRevisionAnnotation(group)) ? UNKNOWN_FORMER_OWNER : undefined;
}

/**
 * Whether the stored key, referencing its current User `owner` and recording no
 * former owner, was adopted by it from a former User (keyAdoptedFromFormerUser).
 */
export function adoptedFromFormerUser(
  group: string,
  stored: KubeObject,
  named: { kind: KeyOwnerKind; name: string },
  owner: KubeObject,
): boolean {
  return (
    named.kind === 'User' &&
    formerOwnerUid(group, stored) === undefined &&
    hasReference(stored, owner.metadata.uid ?? '') &&
    keyAdoptedFromFormerUser(stored, owner, keyRevisionAnnotation(group), tokenGenerationAnnotation(group))
  );
}

/**
 * Puts the reference to the key's current owner on `obj` when it lacks it. On an
 * update whose stored object had the reference, a body without it is refused
 * instead (the error is returned for validation to report), unless the owner is
 * being deleted: an orphaning delete of the owner removes it through the collector.
 * `readopt` (requestedFormerOwner): the uid the update set the former-owner record
 * to; when it is the current owner's (not being deleted), the record takes it and
 * the key is adopted (admission allows that to administrators only).
 */
export async function ensureKeyOwnerReference(
  group: string,
  lookup: KeyOwnerLookup,
  obj: KubeObject,
  old: KubeObject | undefined,
  deadline: StorageDeadline | undefined,
  readopt?: string,
): Promise<FieldError | undefined> {
  const named = keyOwnerOf(obj);
  if (!named) return undefined;
  const owner = await lookup(named.kind, named.name, deadline);
  const uid = owner?.metadata.uid;
  if (!owner || !uid) return undefined;
  const relabelled = relabelledOwnerReference(obj, named, uid);
  if (relabelled) return relabelled;
  // Re-adopted by an administrator: the record names the current owner from now on.
  if (readopt === uid && !owner.metadata.deletionTimestamp) {
    obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [formerOwnerAnnotation(group)]: uid };
  }
  if (hasReference(obj, uid)) {
    // Adopted from a former User before adoptions were refused: recorded now, on the
    // key's next write (the start-up migration makes one), from the stored key.
    if (old && formerOwnerUid(group, obj) === undefined && adoptedFromFormerUser(group, old, named, owner)) {
      obj.metadata.annotations = {
        ...(obj.metadata.annotations ?? {}),
        [formerOwnerAnnotation(group)]: UNKNOWN_FORMER_OWNER,
      };
    }
    return undefined;
  }
  if (owner.metadata.deletionTimestamp) {
    // The key is this owner's, which is going away, and holds no reference to it: one
    // the collector is dropping (matched by uid, as the collector drops it: also a
    // reference relabelled before relabelledOwnerReference refused that, which
    // keepFormerOwner, by kind and name, missed), or one created or rewritten while
    // the owner is being deleted. Either way an owner re-created under the name is
    // another object and must not adopt it.
    if (formerOwnerUid(group, obj) === undefined) {
      obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [formerOwnerAnnotation(group)]: uid };
    }
    return undefined;
  }
  // Orphaned from an owner of this name that is gone: this one is another object.
  const former = formerOwnerUid(group, obj);
  if (former !== undefined && former !== uid) return undefined;
  // Orphaned before orphaning deletes recorded it (or before keys named their owner):
  // recorded now, on the key's next write (the start-up migration makes one). Read
  // from the stored key: its references and its creation time, not the body's.
  const lost =
    old && former === undefined && !hasReference(old, uid)
      ? formerOwnerOfUnrecorded(group, old, named, owner)
      : undefined;
  if (lost !== undefined) {
    obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [formerOwnerAnnotation(group)]: lost };
    return undefined;
  }
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
