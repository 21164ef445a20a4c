// `users/<name>/accesskeys` and `teams/<name>/accesskeys` (GET): the OwnedAccessKeys
// a user or a team owns, as the keys Store shows them (every key value empty).
// Who may ask is authorization's business (the owner, the team's members, access
// rules naming the subresource, administrators); this only answers.

import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { ownerAccessKeysSchema } from '../../../apis/management/v1/self.js';
import type { GetOptions, RequestContext, RESTStorage, SubresourceStorage } from '../../rest/interfaces.js';
import type { KindStorageContext } from '../kind.js';
import { ownedAccessKeyKind } from '../owned-access-key/kind.js';

export const ACCESS_KEYS_SUBRESOURCE = 'accesskeys';

export interface OwnerAccessKeysOptions {
  readonly owner: 'user' | 'team';
  /** The Store of the owners (users or teams): a missing owner is a 404. */
  readonly owners: RESTStorage;
  /** The OwnedAccessKey Store. */
  readonly keys: RESTStorage;
}

function ownerOf(key: KubeObject, field: 'user' | 'team'): string {
  const spec = key['spec'];
  return isObject(spec) && typeof spec[field] === 'string' ? spec[field] : '';
}

export function ownerAccessKeysSubresource(options: OwnerAccessKeysOptions): SubresourceStorage {
  const { owner, owners, keys } = options;
  const kind = owner === 'user' ? 'UserAccessKeys' : 'TeamAccessKeys';
  return {
    info: { name: ACCESS_KEYS_SUBRESOURCE, kind, verbs: ['get'] },
    schema: ownerAccessKeysSchema(owner),
    async get(ctx: RequestContext, parentName: string, _options: GetOptions): Promise<KubeObject> {
      if (!owners.get || !keys.list) throw new Error('owners need get and keys need list');
      await owners.get(ctx, parentName, {});
      const list = await keys.list({ ...ctx, namespace: '', signal: ctx.signal }, {});
      return {
        apiVersion: `${owners.info.group}/${owners.info.version}`,
        kind,
        metadata: { name: parentName },
        accessKeys: list.items.filter((key) => ownerOf(key, owner) === parentName),
      };
    },
  };
}

/** The subresources hook of an owner kind (KindDefinition.subresources): its `accesskeys`. */
export function accessKeysOfOwner(
  owner: 'user' | 'team',
): (context: KindStorageContext) => SubresourceStorage[] {
  return ({ store, storeOf }) => [
    ownerAccessKeysSubresource({ owner, owners: store, keys: storeOf(ownedAccessKeyKind) }),
  ];
}
