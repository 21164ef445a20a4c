// Host identities (callers the host cluster authenticated: through its aggregator's
// front-proxy headers or its TokenReview) are authorized by the host's RBAC, via
// SubjectAccessReview, as k8s.io/apiserver's delegating authorizer does:
//
//   - system:masters is always allowed, without asking;
//   - the host allows          -> allow;
//   - the host explicitly denies (status.denied) -> deny, nobody else may allow;
//   - otherwise (no opinion, or the host could not answer) -> no opinion, so the
//     platform's own rules (admins, self, access rules) still decide.
//
// Platform identities (access keys, signed tokens) are never sent to the host: a
// platform user "alice" is not the host's "alice". Answers are cached 10 s.

import type {
  HostCluster,
  SubjectAccessReviewResult,
  SubjectAccessReviewSpec,
} from '../hostcluster/types.js';
import { TtlCache } from '../util/ttl-cache.js';
import { recordHostReview } from '../metrics/platform.js';
import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';
import type { Logger } from '../util/log/index.js';

export const MASTERS_GROUP = 'system:masters';

export interface SubjectAccessReviewAuthorizerOptions {
  /** How long an allow is kept (default 10 s). */
  readonly allowTtlMs?: number;
  /** How long anything else is kept (default 10 s). */
  readonly denyTtlMs?: number;
  readonly maxCacheEntries?: number;
  readonly logger?: Logger;
  readonly now?: () => number;
}

export class SubjectAccessReviewAuthorizer implements Authorizer {
  private readonly cache: TtlCache<SubjectAccessReviewResult>;

  constructor(
    private readonly host: Pick<HostCluster, 'subjectAccessReview'>,
    private readonly options: SubjectAccessReviewAuthorizerOptions = {},
  ) {
    this.cache = new TtlCache(options.maxCacheEntries ?? 4096, options.now);
  }

  async authorize(attrs: Attributes): Promise<AuthorizationResult> {
    if (attrs.user.hostIdentity !== true) return { decision: 'no-opinion' };
    if (attrs.user.groups.includes(MASTERS_GROUP)) return { decision: 'allow' };
    const spec = reviewSpec(attrs);
    let result: SubjectAccessReviewResult;
    try {
      result = await recordHostReview(
        'subjectaccessreview',
        (load) =>
          this.cache.getOrLoad(JSON.stringify(spec), load, (r) =>
            r.allowed ? (this.options.allowTtlMs ?? 10_000) : (this.options.denyTtlMs ?? 10_000),
          ),
        () => this.host.subjectAccessReview(spec),
      );
    } catch (err) {
      this.options.logger?.warn('subject access review: the host cluster did not answer', {
        user: attrs.user.name,
        error: (err as Error).message,
      });
      return { decision: 'no-opinion' };
    }
    if (result.allowed)
      return result.reason ? { decision: 'allow', reason: result.reason } : { decision: 'allow' };
    if (result.denied)
      return result.reason ? { decision: 'deny', reason: result.reason } : { decision: 'deny' };
    return { decision: 'no-opinion' };
  }
}

/** The review for a request, with a stable field order so equal requests share a cache entry. */
export function reviewSpec(attrs: Attributes): SubjectAccessReviewSpec {
  const { user } = attrs;
  const extra = user.extra
    ? Object.fromEntries(
        Object.keys(user.extra)
          .sort()
          .map((k) => [k, [...(user.extra?.[k] ?? [])]]),
      )
    : undefined;
  const subject = {
    user: user.name,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: [...user.groups],
    ...(extra && Object.keys(extra).length > 0 ? { extra } : {}),
  };
  if (!attrs.isResourceRequest)
    return { ...subject, nonResourceAttributes: { path: attrs.path, verb: attrs.verb } };
  return {
    ...subject,
    resourceAttributes: {
      ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
      verb: attrs.verb,
      group: attrs.apiGroup,
      version: attrs.apiVersion,
      resource: attrs.resource,
      ...(attrs.subresource ? { subresource: attrs.subresource } : {}),
      ...(attrs.name ? { name: attrs.name } : {}),
    },
  };
}
