// Several ways of authenticating, asked in order (k8s.io/apiserver's union
// authenticator): the first that recognises the caller wins, one that says the
// credentials are bad (throws a 401) ends the search, and null from all of them is
// "not authenticated". Order matters: an authenticator that throws on every bearer
// token it does not know (access keys) must come after those that pass on what is
// not theirs (direct cluster endpoint tokens, front-proxy headers).
//
// Synchronous until an authenticator answers with a promise: most requests pass
// every authenticator from memory, and a promise per authenticator was a cost of
// every request.

import type { IncomingMessage } from 'node:http';

import type { Authenticator, Awaitable } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';

export class UnionAuthenticator implements Authenticator {
  constructor(private readonly authenticators: readonly Authenticator[]) {}

  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    return this.from(0, req);
  }

  /** Asks the authenticators from the `first`th on. */
  private from(first: number, req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    const authenticators = this.authenticators;
    for (let i = first; i < authenticators.length; i++) {
      const user = authenticators[i]!.authenticate(req);
      if (user instanceof Promise) {
        const next = i + 1;
        return user.then((u) => u ?? this.from(next, req));
      }
      if (user) return user;
    }
    return null;
  }
}
