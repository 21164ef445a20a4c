// Direct cluster endpoint tokens as bearer tokens of the platform itself. They are
// made for connected clusters, which verify them on their own (signature by a live
// key, issuer, audience, expiry). The platform accepts one only while the
// credential it was minted with still works, so that revoking anything upstream of
// a token revokes the token ("a token is only as good as its key"):
//
//   - the token must carry the `accessKey` claim (name, uid and value digest of the
//     OwnedAccessKey its caller authenticated with). Tokens minted by callers that used no key
//     (front-proxy, client certificates, the host's TokenReview) and tokens minted
//     before the claim existed are for connected clusters only: 401 here.
//   - the key's value must be the one the token was minted with: rotating a key
//     (a new spec.key, as after a leak) ends its tokens as it ends its old value.
//   - that key must be usable now by exactly the access-key authenticator's rules
//     (AccessKeyUsability: same object, same identity cache): it exists with the
//     same uid, is not disabled or expired, its User or Team exists, the User is not
//     disabled and has not bumped tokenGeneration past the key's. Deleting,
//     disabling, expiring or rotating the key, or disabling or deleting its owner,
//     therefore ends every token it minted, on every replica, within the bound of
//     the key itself. A token's use is no activity of the key: it does not extend
//     a key's ttlAfterLastActivity.
//   - the key must still speak for the token's subject, and the User must not have
//     bumped tokenGeneration past the token's own claim.
//
// The identity is marked tokenDerived: such a caller may never mint credentials
// (pkg/authorization/credential-minting.ts). Its scope goes with it, so the
// authorizer narrows what the token may do exactly as it does for a scoped key.
//
// Tokens that are not ours (not a JWT, or another issuer's JWT such as a host
// service account token) are left to the next authenticator (null); ours that fail
// a check are a 401 whose message says what to do; one whose key is refused says so
// in one sentence with the key's reason and remedy ("this direct cluster endpoint
// token no longer works because the access key "k" is disabled; ask an administrator
// to enable it or use another key": credentialRefusal).

import type { IncomingMessage } from 'node:http';

import { newUnauthorized } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { userTokenGeneration } from '../identity/token-generation.js';
import {
  looksLikeJwt,
  TokenVerificationError,
  type AccessKeyClaim,
  type EndpointTokenClaims,
  type TokenIssuer,
} from '../tokens/token-issuer.js';
import { isUnlimitedScope, scopeExcess } from '../tokens/scope.js';
import { accessKeyIdentity } from './access-key.js';
import { credentialRefusal, type AccessKeyUsability } from './access-key-usability.js';
import { bearerToken } from './bearer-token.js';
import type { Authenticator } from './interfaces.js';
import type { Awaitable } from '../util/awaitable.js';
import type { AuthenticatedUser } from './user/user.js';

export const TOKEN_EXPIRED_MESSAGE = 'direct cluster endpoint token expired, please request a new one';

/** The 401 for a token minted without an access key (or before tokens named their key). */
export const TOKEN_NOT_FOR_MANAGEMENT_MESSAGE =
  'this direct cluster endpoint token is for the connected cluster, not the management API: it was not minted with an access key; use an access key here';

export class EndpointTokenAuthenticator implements Authenticator {
  constructor(
    private readonly issuer: Pick<TokenIssuer, 'verify'>,
    /** The access-key authenticator's own checks and identity cache. */
    private readonly keys: AccessKeyUsability,
  ) {}

  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    const token = bearerToken(req);
    // Most bearer tokens are access keys: not ours, said at once (no promise).
    if (token === null || !looksLikeJwt(token)) return null;
    return this.authenticateJwt(token);
  }

  private async authenticateJwt(token: string): Promise<AuthenticatedUser | null> {
    let claims: EndpointTokenClaims;
    try {
      claims = await this.issuer.verify(token);
    } catch (err) {
      if (!(err instanceof TokenVerificationError)) throw err;
      switch (err.problem) {
        case 'malformed':
        case 'foreign':
          return null;
        case 'expired':
          throw newUnauthorized(TOKEN_EXPIRED_MESSAGE);
        case 'unknown-key':
          throw newUnauthorized(
            'the direct cluster endpoint token was signed with a key that is no longer accepted; request a new token',
          );
        case 'not-yet-valid':
          throw newUnauthorized(
            'the direct cluster endpoint token is not valid yet; check the clocks of the client and the server',
          );
        case 'invalid':
          throw newUnauthorized('the direct cluster endpoint token is invalid; request a new token');
      }
    }
    if (!claims.accessKey) throw newUnauthorized(TOKEN_NOT_FOR_MANAGEMENT_MESSAGE);
    await this.keys.whenSynced();
    const key = this.usableKey(claims.accessKey);
    const owner = accessKeyIdentity(key, this.keys.source, this.keys.revisionAnnotation);
    if (owner?.name !== claims.sub) {
      throw newUnauthorized(
        `the access key "${claims.accessKey.name}" no longer belongs to "${claims.sub}", the subject of this direct cluster endpoint token; request a new token`,
      );
    }
    this.checkNotNarrowed(claims, owner);
    this.checkTokenGeneration(claims);
    const user: AuthenticatedUser = { name: owner.name, groups: owner.groups, tokenDerived: true };
    return isUnlimitedScope(claims.scope) ? user : { ...user, scope: claims.scope };
  }

  /** The key the token was minted with, when it may still authenticate; a 401 otherwise. */
  private usableKey(claim: AccessKeyClaim): KubeObject {
    const key = this.keys.source.accessKey(claim.name);
    if (!key || key.metadata.uid !== claim.uid) {
      throw newUnauthorized(
        `the access key "${claim.name}" this direct cluster endpoint token was minted with no longer exists; request a new token with a working key`,
      );
    }
    if (this.keys.digest(key) !== claim.digest) {
      throw newUnauthorized(
        `the access key "${claim.name}" was rotated since this direct cluster endpoint token was minted; request a new token with its new value`,
      );
    }
    try {
      this.keys.check(key);
    } catch (err) {
      throw credentialRefusal('this direct cluster endpoint token', err);
    }
    return key;
  }

  /** A key whose scope was narrowed since the token was minted narrows its tokens too: they are refused. */
  private checkNotNarrowed(claims: EndpointTokenClaims, owner: AuthenticatedUser): void {
    const excess = scopeExcess(claims.scope, owner.scope);
    if (excess.length === 0) return;
    throw newUnauthorized(
      `the scope of the access key "${claims.accessKey?.name ?? ''}" no longer covers this direct cluster endpoint token's (${excess.join(', ')}); request a new token`,
    );
  }

  private checkTokenGeneration(claims: EndpointTokenClaims): void {
    if (claims.tokenGeneration === undefined) return;
    const user = this.keys.source.user(claims.sub);
    if (user && userTokenGeneration(user) > claims.tokenGeneration) {
      throw newUnauthorized(
        `the direct cluster endpoint token was revoked (the tokens of user "${claims.sub}" were invalidated); request a new one`,
      );
    }
  }
}
