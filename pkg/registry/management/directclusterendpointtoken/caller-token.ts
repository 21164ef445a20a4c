// A platform token for the caller of a request: subject the caller, groups the
// caller's own (without `system:` groups, which are each cluster's business and
// which Kubernetes refuses from JWTs), the tokenGeneration of the caller's User
// when the caller is one, so that bumping it revokes the token, and the access key
// the caller authenticated with (name, uid and a digest of its value), without which the management API
// does not accept the token: the platform re-checks that key on every request, so
// revoking it revokes the token. Shared by the DirectClusterEndpointToken resource
// and the kubeconfig subresource.

import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { AccessKeyScope } from '../../../apis/management/v1/common.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import type { StorageDeadline } from '../../../storage/deadline.js';
import type { TokenIssuer } from '../../../tokens/token-issuer.js';

export interface CallerTokenIssuer {
  readonly issuer: Pick<TokenIssuer, 'issue'>;
  /** The caller's User, or undefined when the caller is not a User (a team key, a host identity). */
  readonly users: {
    /** `deadline`: the request's, for the storage read. */
    user(name: string, deadline?: StorageDeadline): KubeObject | undefined | Promise<KubeObject | undefined>;
  };
}

export async function issueCallerToken(
  tokens: CallerTokenIssuer,
  caller: AuthenticatedUser,
  ttlSeconds: number,
  scope: AccessKeyScope | undefined,
  /** The request's, for the read of the caller's User. */
  deadline?: StorageDeadline,
): Promise<string> {
  const user = await tokens.users.user(caller.name, deadline);
  const spec = user && isObject(user['spec']) ? user['spec'] : undefined;
  const generation = spec?.['tokenGeneration'];
  const { token } = await tokens.issuer.issue({
    subject: caller.name,
    groups: caller.groups.filter((g) => !g.startsWith('system:')),
    ttlSeconds,
    ...(scope ? { scope } : {}),
    ...(user ? { tokenGeneration: typeof generation === 'number' ? generation : 0 } : {}),
    ...(caller.accessKeyName && caller.accessKeyUid && caller.accessKeyDigest
      ? {
          accessKey: { name: caller.accessKeyName, uid: caller.accessKeyUid, digest: caller.accessKeyDigest },
        }
      : {}),
  });
  return token;
}
