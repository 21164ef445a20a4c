// Several ways of authenticating, asked in order (k8s.io/apiserver's union
// authenticator): the first that recognises the caller wins, one that says the
// credentials are bad (throws a 401) ends the search, and null from all of them is
// "not authenticated". Order matters: an authenticator that throws on every bearer
// token it does not know (access keys) must come after those that pass on what is
// not theirs (direct cluster endpoint tokens, front-proxy headers).
//
// Synchronous until an authenticator answers with a promise (pkg/util/awaitable's
// FirstDecider): most requests pass every authenticator from memory, and a promise
// per authenticator was a cost of every request.

import type { IncomingMessage } from 'node:http';

import { FirstDecider, type Awaitable } from '../util/awaitable.js';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';

const ask = (a: Authenticator, req: IncomingMessage): Awaitable<AuthenticatedUser | null> =>
  a.authenticate(req);
const recognised = (user: AuthenticatedUser | null): boolean => user != null;

export class UnionAuthenticator implements Authenticator {
  private readonly union: FirstDecider<Authenticator, IncomingMessage, AuthenticatedUser | null>;

  constructor(authenticators: readonly Authenticator[]) {
    this.union = new FirstDecider(authenticators, ask, recognised, null);
  }

  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    return this.union.decide(req);
  }
}
