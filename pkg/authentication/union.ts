// Several ways of authenticating, asked in order (k8s.io/apiserver's union
// authenticator): the first that recognises the caller wins, one that says the
// credentials are bad (throws a 401) ends the search, and null from all of them is
// "not authenticated". Order matters: an authenticator that throws on every bearer
// token it does not know (access keys) must come after those that pass on what is
// not theirs (direct cluster endpoint tokens, front-proxy headers).

import type { IncomingMessage } from 'node:http';

import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';

export class UnionAuthenticator implements Authenticator {
  constructor(private readonly authenticators: readonly Authenticator[]) {}

  async authenticate(req: IncomingMessage): Promise<AuthenticatedUser | null> {
    for (const authenticator of this.authenticators) {
      const user = await authenticator.authenticate(req);
      if (user) return user;
    }
    return null;
  }
}
