// What the HTTP layer needs to serve: the resources of the group, who may call,
// and the few knobs that shape responses. pkg/apiserver/options builds it from
// flags; tests build it directly.

import type { Authenticator } from '../authentication/interfaces.js';
import type { Authorizer } from '../authorization/interfaces.js';
import type { RESTStorage } from '../registry/rest/interfaces.js';

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

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface ApiServerConfig {
  /** The API group served, e.g. management.platform.dev. */
  readonly group: string;
  readonly version: string;
  readonly resources: readonly RESTStorage[];
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  /** Prefixes the API is served under besides the root: ['/kubernetes/management']. */
  readonly pathPrefixes: readonly string[];
  /** Default 3 MiB, as kube-apiserver. */
  readonly maxRequestBodyBytes?: number;
  /** Default 1800 s: watches without timeoutSeconds end between this and twice this. */
  readonly minRequestTimeoutSeconds?: number;
  readonly versionInfo: VersionInfo;
  readonly readyChecks?: readonly HealthCheck[];
  readonly liveChecks?: readonly HealthCheck[];
  readonly logger: Logger;
}
