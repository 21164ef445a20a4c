// Bearer tokens that are not the platform's own (not an access key, not one of our
// signed tokens) are asked about at the host cluster's TokenReview API, as
// k8s.io/apiserver's delegating authenticator does: a host user's or service
// account's token works here too. Answers are cached for 10 s by a hash of the
// token (never the token itself), so a busy caller costs the host one review per
// 10 s and a revoked token stops working within that time.
//
// Put it after the platform's own token authenticators in the union: it treats
// every bearer token it sees as the host's, and one the host does not know is a 401.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { newUnauthorized } from '../apis/meta/errors.js';
import type { HostCluster, HostUserInfo, TokenReviewResult } from '../hostcluster/types.js';
import { TtlCache } from '../util/ttl-cache.js';
import { recordHostReview } from '../metrics/platform.js';
import { bearerToken } from './bearer-token.js';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';
import type { Logger } from '../util/log/index.js';

const AUTHENTICATED_GROUP = 'system:authenticated';

export interface TokenReviewAuthenticatorOptions {
  /** Audiences to ask for; empty means the host's default (its API server). */
  readonly audiences?: readonly string[];
  /** How long an answer is kept (default 10 s, as kube-apiserver's --authentication-token-webhook-cache-ttl for delegation). */
  readonly cacheTtlMs?: number;
  readonly maxCacheEntries?: number;
  readonly logger?: Logger;
  readonly now?: () => number;
}

export class TokenReviewAuthenticator implements Authenticator {
  private readonly cache: TtlCache<TokenReviewResult>;
  private readonly ttlMs: number;
  private readonly audiences: readonly string[];
  private readonly users = new WeakMap<TokenReviewResult, AuthenticatedUser>();

  constructor(
    private readonly host: Pick<HostCluster, 'tokenReview'>,
    private readonly options: TokenReviewAuthenticatorOptions = {},
  ) {
    this.cache = new TtlCache(options.maxCacheEntries ?? 4096, options.now);
    this.ttlMs = options.cacheTtlMs ?? 10_000;
    this.audiences = options.audiences ?? [];
  }

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    const token = bearerToken(req);
    if (token === null) return null;
    const key = createHash('sha256').update(token).digest('base64url');
    let review: TokenReviewResult;
    try {
      review = await recordHostReview(
        'tokenreview',
        (load) => this.cache.getOrLoad(key, load, () => this.ttlMs),
        () => this.host.tokenReview(token, this.audiences),
      );
    } catch (err) {
      // The host could not answer: the caller is not authenticated (as upstream), and the log says why.
      this.options.logger?.warn('token review: the host cluster did not answer', {
        error: (err as Error).message,
      });
      throw newUnauthorized();
    }
    if (!review.authenticated || !review.user || review.user.username === '') throw newUnauthorized();
    if (this.audiences.length > 0 && !(review.audiences ?? []).some((a) => this.audiences.includes(a)))
      throw newUnauthorized();
    // One identity per cached answer, so what authorization works out about it is remembered too.
    let user = this.users.get(review);
    if (!user) this.users.set(review, (user = identityOf(review.user)));
    return user;
  }
}

function identityOf(u: HostUserInfo): AuthenticatedUser {
  const groups = [...u.groups];
  if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  return {
    name: u.username,
    groups,
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}),
    hostIdentity: true,
  };
}
