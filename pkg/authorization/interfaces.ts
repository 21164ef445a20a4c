// May they. Attributes follow k8s.io/apiserver/pkg/authorization/authorizer: one
// decision per request, made before the verb handler runs.

import type { Awaitable } from '../util/awaitable.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';

export interface Attributes {
  readonly user: AuthenticatedUser;
  /** get, list, watch, create, update, patch, delete, deletecollection (resource requests); get, post, ... (non-resource). */
  readonly verb: string;
  readonly isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

export type Decision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizationResult {
  readonly decision: Decision;
  /** Why; appended to the Forbidden message when denied. */
  readonly reason?: string;
}

/** The two answers most authorizers give, shared rather than allocated per request. */
export const ALLOWED: AuthorizationResult = Object.freeze({ decision: 'allow' });
export const NO_OPINION: AuthorizationResult = Object.freeze({ decision: 'no-opinion' });

/** The answer of a rule that only ever grants: allow when it applies, no opinion otherwise. */
export function grantIf(applies: boolean): AuthorizationResult {
  return applies ? ALLOWED : NO_OPINION;
}

export interface Authorizer {
  /**
   * The decision; synchronous when nothing has to be waited for (the platform's own
   * rules, from memory), so a request asks its chain without a promise per authorizer.
   */
  authorize(attrs: Attributes): Awaitable<AuthorizationResult>;
}

/** The attributes of a request for a path outside the API (discovery, health), without its user. */
export function nonResourceAttributes(verb: string, path: string): Omit<Attributes, 'user'> {
  return {
    verb,
    isResourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}
