// Who is calling. An Authenticator looks at a request and either recognises the
// caller, says the credentials are bad (throws a 401 ApiError with a message that
// tells the person what to do), or has no opinion (null) so the next one may try.

import type { IncomingMessage } from 'node:http';
import type { AuthenticatedUser } from './user/user.js';

export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null>;
}
