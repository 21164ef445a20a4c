// Direct cluster endpoint tokens as bearer tokens of the platform itself. They are
// made for connected clusters, which verify them on their own, but the platform
// accepts them too, with the checks an access key gets: the token must verify
// (signature by a live key, issuer, audience, expiry), and when it was issued to a
// User that user must still exist, not be disabled, and not have bumped its
// tokenGeneration since. The token's scope goes with the identity, so the
// authorizer narrows what the token may do exactly as it does for a scoped key.
//
// Tokens that are not ours (not a JWT, or another issuer's JWT such as a host
// service account token) are left to the next authenticator (null); ours that fail
// a check are a 401 whose message says what to do.

import type { IncomingMessage } from 'node:http';

import { newUnauthorized } from '../apis/meta/errors.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import {
  looksLikeJwt,
  TokenVerificationError,
  type EndpointTokenClaims,
  type TokenIssuer,
} from '../tokens/token-issuer.js';
import { isUnlimitedScope } from '../tokens/scope.js';
import { bearerToken } from './bearer-token.js';
import type { AuthenticatedUser, Authenticator } from './interfaces.js';

const AUTHENTICATED_GROUP = 'system:authenticated';

/** Where the authenticator reads Users: the identity cache, or storage. */
export interface EndpointTokenUserSource {
  user(name: string): KubeObject | undefined | Promise<KubeObject | undefined>;
}

export const TOKEN_EXPIRED_MESSAGE = 'direct cluster endpoint token expired, please request a new one';

export class EndpointTokenAuthenticator implements Authenticator {
  constructor(
    private readonly issuer: Pick<TokenIssuer, 'verify'>,
    private readonly users: EndpointTokenUserSource,
  ) {}

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    const token = bearerToken(req);
    if (token === null || !looksLikeJwt(token)) return null;
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
    await this.checkUser(claims);
    return identityOf(claims);
  }

  /** A token issued to a User (it carries tokenGeneration) stands or falls with that User. */
  private async checkUser(claims: EndpointTokenClaims): Promise<void> {
    if (claims.tokenGeneration === undefined) return;
    const user = await this.users.user(claims.sub);
    if (!user) {
      throw newUnauthorized(
        `the user "${claims.sub}" of the direct cluster endpoint token does not exist; request a new token as an existing user`,
      );
    }
    const spec = isObject(user['spec']) ? user['spec'] : {};
    if (spec['disabled'] === true) {
      throw newUnauthorized(`the user "${claims.sub}" is disabled; ask an administrator to enable the user`);
    }
    const generation = typeof spec['tokenGeneration'] === 'number' ? spec['tokenGeneration'] : 0;
    if (generation > claims.tokenGeneration) {
      throw newUnauthorized(
        `the direct cluster endpoint token was revoked (the tokens of user "${claims.sub}" were invalidated); request a new one`,
      );
    }
  }
}

function identityOf(claims: EndpointTokenClaims): AuthenticatedUser {
  const groups = [...new Set([...(claims.groups ?? []), AUTHENTICATED_GROUP])];
  const user: AuthenticatedUser = { name: claims.sub, groups };
  return isUnlimitedScope(claims.scope) ? user : { ...user, scope: claims.scope };
}
