// The one-time migration of keys stored before keys carried an ownerReference to
// their User or Team: each such key is written once more through its Store, whose
// update adds the reference (owner-reference.ts). A key that already has it is not
// touched, so running this on every start is harmless; a conflict means another
// replica or a client wrote the key meanwhile, and that write added it too.
// A key orphaned by its owner's deletion (it records the owner it lost) is no
// such key: it is left alone, so that a User or Team re-created under the same
// name never gets it.

import { isApiError } from '../../../apis/meta/errors.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import type { RequestContext, RESTStorage } from '../../rest/interfaces.js';
import { formerOwnerUid, keyOwnerOf } from './owner-reference.js';

export interface KeyOwnerMigrationResult {
  /** Keys that got their reference. */
  readonly updated: number;
  /** Keys that could not be written (retried on the next start). */
  readonly failed: number;
}

function needsNoReference(group: string, key: KubeObject): boolean {
  const owner = keyOwnerOf(key);
  if (!owner || formerOwnerUid(group, key) !== undefined) return true;
  return (key.metadata.ownerReferences ?? []).some((r) => r.kind === owner.kind && r.name === owner.name);
}

export async function addKeyOwnerReferences(keys: RESTStorage): Promise<KeyOwnerMigrationResult> {
  if (!keys.list || !keys.patch) throw new Error(`${keys.info.resource} cannot be listed and patched`);
  const ctx: RequestContext = {
    user: { name: 'system:apiserver', groups: ['system:masters'] },
    namespace: '',
    userAgent: 'platform-apiserver/key-owner-migration',
    warnings: [],
  };
  const list = await keys.list(ctx, {});
  let updated = 0;
  let failed = 0;
  for (const key of list.items) {
    if (needsNoReference(keys.info.group, key)) continue;
    const before = key.metadata.resourceVersion;
    try {
      // An empty change: the update rules themselves add the reference.
      const { object } = await keys.patch(
        ctx,
        key.metadata.name ?? '',
        'merge',
        { metadata: { resourceVersion: before } },
        { dryRun: false, fieldManager: '', fieldValidation: 'Ignore' },
      );
      if (object.metadata.resourceVersion !== before) updated++;
    } catch (err) {
      if (isApiError(err) && (err.reason === 'NotFound' || err.reason === 'Conflict')) continue;
      failed++;
    }
  }
  return { updated, failed };
}
