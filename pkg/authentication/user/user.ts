// Who a request is from, as the authenticators found it and everything after them
// (authorization, admission, the registry) sees it: a leaf, as upstream's
// k8s.io/apiserver/pkg/authentication/user is, so that the registry's request
// context can carry the caller without importing the authenticators.

import type { AccessKeyScope } from '../../apis/management/v1/common.js';

/** The identity every caller has (upstream's user.Info). */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** A caller with what the platform's authenticators learned besides: the credential it used. */
export interface AuthenticatedUser extends UserInfo {
  /** Name of the OwnedAccessKey the request used, when it used one. */
  readonly accessKeyName?: string;
  /** `metadata.uid` of that key: a token minted with it names the key by name and uid. */
  readonly accessKeyUid?: string;
  /** accessKeyDigest() of that key: a token minted with it dies when the key's value is rotated. */
  readonly accessKeyDigest?: string;
  /** `spec.type` of that key ('' when unset). */
  readonly accessKeyType?: string;
  /**
   * What the credential is limited to (an access key's or a token's `scope`).
   * Absent or empty: no limit beyond what its owner may do. A scope only narrows.
   */
  readonly scope?: AccessKeyScope;
  /**
   * Authenticated by the host cluster (front-proxy headers from its aggregator, or
   * its TokenReview): the host's SubjectAccessReview is asked about such callers.
   */
  readonly hostIdentity?: boolean;
  /**
   * Authenticated by a direct cluster endpoint token, or by a kube config client
   * certificate bound to an access key (then also hostIdentity). Such a caller may
   * never mint credentials (access keys, tokens, kube configs): they would outlive
   * the revocation of the key the token or certificate was made with (see
   * pkg/authorization/credential-minting.ts).
   */
  readonly tokenDerived?: boolean;
  /**
   * Set on the identity an impersonating request acts as (Impersonate-User): who
   * actually called. Such a request never mints credentials: an access key, token
   * or kube config made for the impersonated user would outlive the impersonation
   * (see pkg/authorization/credential-minting.ts).
   */
  readonly impersonator?: UserInfo;
}
