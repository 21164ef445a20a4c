// What every authenticated caller may do before fine-grained rules exist: read
// their own User (so the command-line client can show who is logged in) and the
// discovery, OpenAPI, version and health documents (so kubectl works at all) -
// the same paths Kubernetes grants every authenticated user via system:discovery.

import type { Attributes, AuthorizationResult, Authorizer } from './interfaces.js';

/** Non-resource paths readable by everyone authenticated: exact paths, and prefixes ending in "/". */
const DISCOVERY_PATHS = ['/api', '/apis', '/version', '/openapi', '/healthz', '/livez', '/readyz'];

export class BaselineAuthorizer implements Authorizer {
  constructor(
    private readonly group: string,
    /** Prefixes the API is also served under (`/kubernetes/management`); stripped before matching. */
    private readonly pathPrefixes: readonly string[] = [],
  ) {}

  authorize(attrs: Attributes): Promise<AuthorizationResult> {
    return Promise.resolve({ decision: this.allows(attrs) ? 'allow' : 'no-opinion' });
  }

  private allows(attrs: Attributes): boolean {
    if (!attrs.isResourceRequest)
      return attrs.verb === 'get' && isDiscoveryPath(this.stripPrefix(attrs.path));
    return (
      attrs.verb === 'get' &&
      attrs.apiGroup === this.group &&
      attrs.resource === 'users' &&
      attrs.subresource === '' &&
      attrs.name !== '' &&
      attrs.name === attrs.user.name
    );
  }

  private stripPrefix(path: string): string {
    for (const prefix of this.pathPrefixes) {
      if (prefix && (path === prefix || path.startsWith(prefix + '/')))
        return path.slice(prefix.length) || '/';
    }
    return path;
  }
}

function isDiscoveryPath(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return DISCOVERY_PATHS.some((d) => p === d || p.startsWith(d + '/'));
}
