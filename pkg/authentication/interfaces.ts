// Who is calling. An Authenticator looks at a request and either recognises the
// caller, says the credentials are bad (throws a 401 ApiError with a message that
// tells the person what to do), or has no opinion (null) so the next one may try.

import type { IncomingMessage } from 'node:http';
import type { AccessKeyScope } from '../apis/management/v1/common.js';
import type { UserInfo } from '../registry/rest/interfaces.js';

export interface AuthenticatedUser extends UserInfo {
  /** Name of the OwnedAccessKey the request used, when it used one. */
  readonly accessKeyName?: string;
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
}

export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null>;
}
