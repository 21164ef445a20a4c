// The host double's stand-in for the review APIs: TokenReview
// (authentication.k8s.io/v1, what the server's webhook token authenticator asks)
// and SubjectAccessReview (authorization.k8s.io/v1, what its delegated authorizer
// asks), answered from the tokens and RBAC-like grants a test gives the double.
// The wording of the answers and errors follows kube-apiserver's, written here from
// its reference and not from the server's own client code.

import { StatusError } from './host-errors.js';

/** Who a token authenticates as. */
export interface DoubleUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** A token the double knows: its user and, optionally, its audiences. */
export interface DoubleToken {
  readonly user: DoubleUser;
  readonly audiences?: readonly string[];
}

/** The spec of a SubjectAccessReview as received. */
export interface ReceivedSubjectAccessReview {
  readonly user?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  readonly resourceAttributes?: Readonly<Record<string, string>>;
  readonly nonResourceAttributes?: Readonly<Record<string, string>>;
}

export interface SubjectAccessReviewAnswer {
  readonly allowed: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
}

export type SubjectAccessReviewer = (spec: ReceivedSubjectAccessReview) => SubjectAccessReviewAnswer;

/** An RBAC-like grant the default reviewer answers from. Empty lists match nothing; "*" matches all. */
export interface AccessGrant {
  readonly users?: readonly string[];
  readonly groups?: readonly string[];
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  /** `resource` or `resource/subresource`. */
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  /** Paths; a trailing `*` matches a prefix. */
  readonly nonResourceURLs?: readonly string[];
}

/** The audience a token has when the test names none (the cluster's default service account audience). */
const DEFAULT_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** The TokenReview kube-apiserver would return for `body` (201: unauthenticated is a status, not an error). */
export function answerTokenReview(
  body: Record<string, unknown>,
  tokens: ReadonlyMap<string, DoubleToken>,
): Record<string, unknown> {
  const spec = asRecord(body.spec);
  const token = typeof spec.token === 'string' ? spec.token : '';
  const requested = Array.isArray(spec.audiences)
    ? spec.audiences.filter((a): a is string => typeof a === 'string')
    : [];
  const entry = tokens.get(token);
  const base = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: { creationTimestamp: null },
    spec,
  };
  if (!entry) return { ...base, status: { user: {} } };
  const tokenAudiences = entry.audiences ?? DEFAULT_AUDIENCES;
  const audiences =
    requested.length > 0 ? requested.filter((a) => tokenAudiences.includes(a)) : tokenAudiences;
  if (requested.length > 0 && audiences.length === 0)
    return { ...base, status: { user: {}, error: 'token audiences are invalid' } };
  const u = entry.user;
  return {
    ...base,
    status: {
      authenticated: true,
      user: {
        username: u.username,
        ...(u.uid ? { uid: u.uid } : {}),
        groups: [...(u.groups ?? []), 'system:authenticated'],
        ...(u.extra ? { extra: u.extra } : {}),
      },
      audiences,
    },
  };
}

/** The spec of a SubjectAccessReview body, as the double records it. */
export function subjectAccessReviewSpec(body: Record<string, unknown>): ReceivedSubjectAccessReview {
  return asRecord(body.spec) as ReceivedSubjectAccessReview;
}

/** The validation errors kube-apiserver reports for a SubjectAccessReview spec (422 when any). */
export function subjectAccessReviewErrors(spec: ReceivedSubjectAccessReview): string[] {
  const errs: string[] = [];
  if ((spec.resourceAttributes === undefined) === (spec.nonResourceAttributes === undefined))
    errs.push(
      'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  if (!spec.user && (!spec.groups || spec.groups.length === 0))
    errs.push('spec.user: Invalid value: "": at least one of user or group must be specified');
  return errs;
}

/** The SubjectAccessReview returned for `spec` with the reviewer's answer. */
export function subjectAccessReviewResponse(
  spec: ReceivedSubjectAccessReview,
  answer: SubjectAccessReviewAnswer,
): Record<string, unknown> {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: { creationTimestamp: null },
    spec,
    status: {
      allowed: answer.allowed,
      ...(answer.denied ? { denied: true } : {}),
      ...(answer.reason ? { reason: answer.reason } : {}),
    },
  };
}

/** The default reviewer: system:masters may do anything; others what a grant allows. */
export function reviewByGrants(
  grants: readonly AccessGrant[],
  spec: ReceivedSubjectAccessReview,
): SubjectAccessReviewAnswer {
  const groups = spec.groups ?? [];
  if (groups.includes('system:masters')) return { allowed: true };
  const wild = (list: readonly string[] | undefined, value: string): boolean =>
    (list ?? []).some((v) => v === '*' || v === value);
  for (const g of grants) {
    const subject = wild(g.users, spec.user ?? '') || (g.groups ?? []).some((x) => groups.includes(x));
    if (!subject) continue;
    if (spec.resourceAttributes) {
      const a = spec.resourceAttributes;
      const resource = a.subresource ? `${a.resource ?? ''}/${a.subresource}` : (a.resource ?? '');
      if (
        wild(g.verbs, a.verb ?? '') &&
        wild(g.apiGroups, a.group ?? '') &&
        wild(g.resources, resource) &&
        (g.resourceNames === undefined ||
          g.resourceNames.length === 0 ||
          g.resourceNames.includes(a.name ?? ''))
      )
        return { allowed: true, reason: 'granted by the test double' };
    } else if (spec.nonResourceAttributes) {
      const a = spec.nonResourceAttributes;
      const path = a.path ?? '';
      const urlMatch = (g.nonResourceURLs ?? []).some((u) =>
        u.endsWith('*') ? path.startsWith(u.slice(0, -1)) : u === path,
      );
      if (wild(g.verbs, a.verb ?? '') && urlMatch)
        return { allowed: true, reason: 'granted by the test double' };
    }
  }
  return { allowed: false };
}

/** The review resource a path names (/apis/{authentication,authorization}.k8s.io/v1/<resource>), if any. */
export function reviewResource(pathname: string): string | undefined {
  return /^\/apis\/(?:authentication|authorization)\.k8s\.io\/v1\/([a-z]+)$/.exec(pathname)?.[1];
}

/** SelfSubjectReview: who the caller is, as kube-apiserver answers it. */
export function selfSubjectReview(user: DoubleUser): Record<string, unknown> {
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: {},
    status: {
      userInfo: {
        username: user.username,
        groups: user.groups ?? [],
        ...(user.extra ? { extra: user.extra } : {}),
      },
    },
  };
}

/**
 * kube-apiserver's create of a SubjectAccessReview: 422 for an invalid spec, else the
 * reviewer's answer; every valid spec is appended to `received` for tests.
 */
export function answerSubjectAccessReview(
  body: Record<string, unknown>,
  reviewer: SubjectAccessReviewer,
  received: ReceivedSubjectAccessReview[],
): Record<string, unknown> {
  const spec = subjectAccessReviewSpec(body);
  const errs = subjectAccessReviewErrors(spec);
  if (errs.length > 0)
    throw new StatusError(
      422,
      'Invalid',
      `SubjectAccessReview.authorization.k8s.io "" is invalid: ${errs.join(', ')}`,
    );
  received.push(structuredClone(spec));
  return subjectAccessReviewResponse(spec, reviewer(spec));
}
