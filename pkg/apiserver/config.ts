// What the HTTP layer needs to serve: the resources of the group, who may call,
// and the few knobs that shape responses. pkg/server builds it from
// the options; tests build it directly.

import type { AuditConfig } from '../audit/options.js';
import type { Authenticator } from '../authentication/interfaces.js';
import type { Authorizer } from '../authorization/interfaces.js';
import type { RESTStorage } from '../registry/rest/interfaces.js';
import type { Logger } from '../util/log/index.js';

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** A named readiness or liveness check; throws (or rejects) when unhealthy. */
export interface HealthCheck {
  readonly name: string;
  check(): Promise<void> | void;
}

/** A document anyone may read, served before authentication (the token issuer's OpenID discovery and JWKS). */
export interface PublicDocument {
  readonly contentType: string;
  readonly body: unknown;
  /** Cache-Control max-age for clients and proxies. */
  readonly maxAgeSeconds: number;
}

export interface PublicDocumentSource {
  /**
   * The document at `path` (any path prefix stripped), or undefined when the path is
   * not one of its own. `base` is the URL the request came in at, up to and
   * including the path prefix it used (`https://host:8443/kubernetes/management`).
   * Never asked about `/api`, `/apis` and below: those paths belong to the API, and
   * asking would cost every API request an asynchronous look-up.
   */
  document(path: string, base: string): Promise<PublicDocument | undefined>;
}

export interface ApiServerConfig {
  /** The API group served, e.g. management.platform.dev. */
  readonly group: string;
  readonly version: string;
  readonly resources: readonly RESTStorage[];
  /**
   * Resources of Kubernetes' own groups that this server answers itself (standalone:
   * the self-service reviews of authorization.k8s.io and authentication.k8s.io), each
   * under its own group and version, and listed in discovery.
   */
  readonly builtinResources?: readonly RESTStorage[];
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  /** Prefixes the API is served under besides the root: ['/kubernetes/management']. */
  readonly pathPrefixes: readonly string[];
  /** Default 3 MiB, as kube-apiserver. */
  readonly maxRequestBodyBytes?: number;
  /**
   * Default 60 s, as kube-apiserver's --request-timeout: a request that is not
   * long-running and has not answered by then gets 504 Timeout, and its work is
   * abandoned (its context's signal aborts).
   */
  readonly requestTimeoutMs?: number;
  /** The console's built files (default dist/console beside the compiled server); tests pass their own. */
  readonly consoleDir?: string;
  /** Default 1800 s: watches without timeoutSeconds end between this and twice this. */
  readonly minRequestTimeoutSeconds?: number;
  /**
   * Carry each request's deadline to its storage calls (storage/deadline.ts; default
   * true). Off for the embedded SQLite backend, whose calls are synchronous and cannot
   * freeze: the context costs every await of a request a little.
   */
  readonly storageDeadlines?: boolean;
  /** Reads executing at once (default 400; 0 = unlimited): see filters/max-inflight.ts. */
  readonly maxRequestsInflight?: number;
  /** Writes executing at once (default 200; 0 = unlimited). */
  readonly maxMutatingRequestsInflight?: number;
  readonly versionInfo: VersionInfo;
  readonly readyChecks?: readonly HealthCheck[];
  readonly liveChecks?: readonly HealthCheck[];
  readonly logger: Logger;
  /**
   * Record request metrics and serve them at /metrics (default true; false only to
   * measure what recording costs).
   */
  readonly metrics?: boolean;
  /** The audit policy and backends (--audit-policy-file and friends); absent: nothing is audited. */
  readonly audit?: AuditConfig;
  /** Documents served to anyone at fixed paths under every prefix (GET and HEAD only). */
  readonly publicDocuments?: readonly PublicDocumentSource[];
}
