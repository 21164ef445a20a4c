// Who is calling. An Authenticator looks at a request and either recognises the
// caller, says the credentials are bad (throws a 401 ApiError with a message that
// tells the person what to do), or has no opinion (null) so the next one may try.

import type { IncomingMessage } from 'node:http';
import type { Awaitable } from '../util/awaitable.js';
import type { AuthenticatedUser } from './user/user.js';

export interface Authenticator {
  /**
   * Synchronous when nothing has to be waited for (a header or a key looked up in
   * memory): a request then passes the union without a promise per authenticator.
   * A synchronous answer may also be a synchronous throw.
   */
  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null>;
}
