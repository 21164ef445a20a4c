// What every authenticated caller may read whatever else they may do: the
// discovery, OpenAPI, version and health documents, so kubectl and client
// libraries work at all. These are the paths Kubernetes grants every
// authenticated user through its system:discovery role; they say what the API
// is, never what it holds.

import { grantIf, type Attributes, type AuthorizationResult, type Authorizer } from './interfaces.js';

/** Non-resource paths readable by everyone authenticated: exact paths, and everything below them. */
export const DISCOVERY_PATHS: readonly string[] = [
  '/api',
  '/apis',
  '/version',
  '/openapi',
  '/healthz',
  '/livez',
  '/readyz',
];

function stripPrefix(path: string, prefixes: readonly string[]): string {
  for (const prefix of prefixes) {
    if (prefix && (path === prefix || path.startsWith(prefix + '/'))) return path.slice(prefix.length) || '/';
  }
  return path;
}

/** A `get` of a discovery path, with or without one of the prefixes the API is served under. */
export function isDiscoveryRequest(attrs: Attributes, pathPrefixes: readonly string[]): boolean {
  if (attrs.isResourceRequest || attrs.verb !== 'get') return false;
  const path = stripPrefix(attrs.path, pathPrefixes);
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return DISCOVERY_PATHS.some((d) => p === d || p.startsWith(d + '/'));
}

export class DiscoveryAuthorizer implements Authorizer {
  constructor(
    /** Prefixes the API is also served under (`/kubernetes/management`). */
    private readonly pathPrefixes: readonly string[] = [],
  ) {}

  authorize(attrs: Attributes): AuthorizationResult {
    return grantIf(isDiscoveryRequest(attrs, this.pathPrefixes));
  }
}
