// Who is calling. An Authenticator looks at a request and either recognises the
// caller, says the credentials are bad (throws a 401 ApiError with a message that
// tells the person what to do), or has no opinion (null) so the next one may try.

import type { IncomingMessage } from 'node:http';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import type { UserInfo } from '../registry/rest/interfaces.js';

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
   * Authenticated by a direct cluster endpoint token. Such a caller may never mint
   * credentials (access keys, tokens, kube configs): they would outlive the
   * revocation of the key the token was minted with (see
   * pkg/authorization/credential-minting.ts).
   */
  readonly tokenDerived?: boolean;
}

export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null>;
}
