// Authentication and authorization of one request, before any handler runs
// (k8s.io/apiserver endpoints/filters authentication.go and authorization.go, and the
// forbidden message of endpoints/handlers/responsewriters/errors.go).

import type { IncomingMessage } from 'node:http';

import { isApiError, newForbidden, newUnauthorized, type ApiError } from '../apis/meta/errors.js';
import type { Authenticator } from '../authentication/interfaces.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import type { Attributes, AuthorizationResult, Authorizer } from '../authorization/interfaces.js';
import type { Awaitable } from '../util/awaitable.js';
import type { Logger } from '../util/log/index.js';
import type { RequestInfo } from './request-info.js';
import { describe } from './responses.js';

/**
 * The caller, or a 401: no credentials, bad credentials, or a failing authenticator.
 * Synchronous (the user, or a throw) when the authenticator answered synchronously.
 */
export function authenticate(
  authenticator: Authenticator,
  req: IncomingMessage,
  logger: Logger,
): Awaitable<AuthenticatedUser> {
  let user: AuthenticatedUser | null | Promise<AuthenticatedUser | null>;
  try {
    user = authenticator.authenticate(req);
  } catch (err) {
    return authenticatorFailed(err, logger);
  }
  if (user instanceof Promise)
    return user.then(recognised, (err: unknown) => authenticatorFailed(err, logger));
  return recognised(user);
}

function recognised(user: AuthenticatedUser | null): AuthenticatedUser {
  if (!user) throw newUnauthorized();
  return user;
}

function authenticatorFailed(err: unknown, logger: Logger): never {
  // A 401 with a helpful message (expired key) goes to the client as it is.
  if (isApiError(err)) throw err;
  // Anything else is our fault, but the caller is still not authenticated.
  logger.error('authenticator failed', { error: describe(err) });
  throw newUnauthorized();
}

/**
 * What authorization (and, with the caller or none, the audit policy) asks about a
 * request: its attributes and who sends it. One object a request, written out rather
 * than spread from a second one.
 */
export function attributesFor<U extends Pick<AuthenticatedUser, 'name' | 'groups'> | undefined>(
  user: U,
  info: RequestInfo,
): Omit<Attributes, 'user'> & { readonly user: U } {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

/** Where the decision is noted for the audit (WithAuthorization's audit annotations). */
export interface DecisionAnnotations {
  addAnnotation(key: string, value: string): void;
}

const DECISION_ANNOTATION = 'authorization.k8s.io/decision';
const REASON_ANNOTATION = 'authorization.k8s.io/reason';

/**
 * Returns (or resolves) when allowed; throws the Kubernetes 403 otherwise ('no-opinion'
 * is a denial). Synchronous when the authorizer answered synchronously.
 */
export function authorize(
  authorizer: Authorizer,
  attrs: Attributes,
  annotations?: DecisionAnnotations,
): Awaitable<void> {
  let result: Awaitable<AuthorizationResult>;
  try {
    result = authorizer.authorize(attrs);
  } catch (err) {
    return authorizerFailed(err, annotations);
  }
  if (result instanceof Promise) {
    return result.then(
      (r) => decided(r, attrs, annotations),
      (err: unknown) => authorizerFailed(err, annotations),
    );
  }
  decided(result, attrs, annotations);
}

function authorizerFailed(err: unknown, annotations: DecisionAnnotations | undefined): never {
  annotations?.addAnnotation(REASON_ANNOTATION, 'internal error');
  throw err;
}

/** Notes the decision for the audit; throws the 403 of a denial. */
function decided(
  result: AuthorizationResult,
  attrs: Attributes,
  annotations: DecisionAnnotations | undefined,
): void {
  if (annotations) {
    annotations.addAnnotation(DECISION_ANNOTATION, result.decision === 'allow' ? 'allow' : 'forbid');
    annotations.addAnnotation(REASON_ANNOTATION, result.reason ?? '');
  }
  if (result.decision === 'allow') return;
  throw forbidden(attrs, result.reason);
}

/** responsewriters.Forbidden: the 403 of a refused request, with the authorizer's reason when it gave one. */
export function forbidden(attrs: Attributes, reason: string | undefined): ApiError {
  const msg = sanitize(forbiddenMessage(attrs));
  const text = reason ? `${msg}: ${reason}` : msg;
  return newForbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, text);
}

/** `User "x" cannot get resource "teams" in API group "g" at the cluster scope`, and friends. */
export function forbiddenMessage(attrs: Attributes): string {
  const user = JSON.stringify(attrs.user.name);
  if (!attrs.isResourceRequest) return `User ${user} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const head = `User ${user} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)}`;
  if (attrs.namespace) return `${head} in the namespace ${JSON.stringify(attrs.namespace)}`;
  return `${head} at the cluster scope`;
}

/** Upstream HTML-escapes the message: it may echo a path the client chose. */
function sanitize(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
