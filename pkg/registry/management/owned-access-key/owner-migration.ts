// The one start-up migration of stored keys, run on every start (idempotent):
//
//   - A key stored before keys carried an ownerReference to their User or Team is
//     written once more through its Store, whose update adds the reference
//     (owner-reference.ts).
//   - A key orphaned from a former owner before orphaning deletes recorded that
//     owner (formerOwnerAnnotation) is written likewise, and the same update rules
//     record it instead: the uid of its reference to an owner of that kind and name
//     that is another object than the current one, or UNKNOWN_FORMER_OWNER for a
//     key that references no owner and is older than the current one (it cannot
//     have been made for an owner that did not exist yet). From then on the
//     re-created owner never adopts the key and the key authenticates nobody (the
//     authenticator refuses such keys already, from the same facts).
//
//   - A key a re-created User adopted before adoptions were refused (it references
//     that User, but was made while a former User of the name existed:
//     keyAdoptedFromFormerUser) is written likewise and records UNKNOWN_FORMER_OWNER.
//
// Only keys that need it are written: a key with its reference (and not adopted from
// a former User), one that records
// its former owner, or one whose owner does not exist or is being deleted is not
// touched, so a second run writes nothing. A conflict means another replica or a
// client wrote the key meanwhile, and that write applied the same rules.

import { isApiError } from '../../../apis/meta/errors.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import type { RequestContext, RESTStorage } from '../../rest/interfaces.js';
import {
  adoptedFromFormerUser,
  formerOwnerUid,
  keyOwnerOf,
  type KeyOwnerKind,
  type KeyOwnerLookup,
} from './owner-reference.js';

export interface KeyOwnerMigrationResult {
  /** Keys that got their reference. */
  readonly updated: number;
  /** Keys that were found to be a former owner's and now record it (their names: no key material). */
  readonly orphaned: readonly string[];
  /** Keys that could not be written (retried on the next start). */
  readonly failed: number;
}

const MIGRATION_CONTEXT: RequestContext = {
  user: { name: 'system:apiserver', groups: ['system:masters'] },
  namespace: '',
  userAgent: 'platform-apiserver/key-owner-migration',
  warnings: [],
};

/**
 * The owners as stored now, read with one list of Users and one of Teams: what the
 * migration compares every key with. A read per owner would cost a storage round
 * trip per User at every start, before the server is ready.
 */
export async function listedKeyOwners(users: RESTStorage, teams: RESTStorage): Promise<KeyOwnerLookup> {
  const byKind = new Map<KeyOwnerKind, Map<string, KubeObject>>();
  for (const [kind, store] of [
    ['User', users],
    ['Team', teams],
  ] as const) {
    if (!store.list) throw new Error(`${store.info.resource} cannot be listed`);
    const { items } = await store.list(MIGRATION_CONTEXT, {});
    byKind.set(kind, new Map(items.map((o) => [o.metadata.name ?? '', o])));
  }
  return (kind, name) => Promise.resolve(byKind.get(kind)?.get(name));
}

/** True when the key, as stored, references its current owner `owner` (and so needs no write). */
function referencesOwner(key: KubeObject, kind: KeyOwnerKind, owner: KubeObject): boolean {
  return (key.metadata.ownerReferences ?? []).some(
    (r) => r.kind === kind && r.name === owner.metadata.name && r.uid === owner.metadata.uid,
  );
}

export async function migrateKeyOwners(
  keys: RESTStorage,
  owners: KeyOwnerLookup,
): Promise<KeyOwnerMigrationResult> {
  if (!keys.list || !keys.patch) throw new Error(`${keys.info.resource} cannot be listed and patched`);
  const ctx = MIGRATION_CONTEXT;
  const group = keys.info.group;
  // Many keys share an owner: each owner is looked up once per run (listedKeyOwners reads none).
  const read = new Map<string, Promise<KubeObject | undefined>>();
  const ownerOf = (kind: KeyOwnerKind, name: string): Promise<KubeObject | undefined> => {
    const id = `${kind}/${name}`;
    let found = read.get(id);
    if (!found) read.set(id, (found = owners(kind, name)));
    return found;
  };
  const list = await keys.list(ctx, {});
  let updated = 0;
  const orphaned: string[] = [];
  let failed = 0;
  for (const key of list.items) {
    const named = keyOwnerOf(key);
    if (!named || formerOwnerUid(group, key) !== undefined) continue;
    const name = key.metadata.name ?? '';
    const before = key.metadata.resourceVersion;
    try {
      const owner = await ownerOf(named.kind, named.name);
      if (!owner || owner.metadata.deletionTimestamp) continue;
      if (referencesOwner(key, named.kind, owner) && !adoptedFromFormerUser(group, key, named, owner))
        continue;
      // An empty change: the update rules themselves add the reference or record the former owner.
      const { object } = await keys.patch(
        ctx,
        name,
        'merge',
        { metadata: { resourceVersion: before } },
        { dryRun: false, fieldManager: '', fieldValidation: 'Ignore' },
      );
      if (formerOwnerUid(group, object) !== undefined) orphaned.push(name);
      else if (object.metadata.resourceVersion !== before) updated++;
    } catch (err) {
      if (isApiError(err) && (err.reason === 'NotFound' || err.reason === 'Conflict')) continue;
      failed++;
    }
  }
  return { updated, orphaned, failed };
}
