// Wiring of the host cluster (issue 3, part B): which host (--host-kubeconfig, or
// the pod's service account, or none), front-proxy authentication (settings from
// the --requestheader-* flags or the host's ConfigMap, watched), the host's
// TokenReview for bearer tokens that are not the platform's, and its
// SubjectAccessReview for host identities. Without a host cluster only the
// front-proxy flags can turn anything on; the identity headers are stripped either way.

import { accessSync, constants, statSync } from 'node:fs';
import { FrontProxyAuthenticator } from '../../authentication/front-proxy.js';
import {
  ConfigMapRequestHeaderSource,
  StaticRequestHeaderSource,
  type RequestHeaderConfigSource,
  type RequestHeaderFlags,
} from '../../authentication/front-proxy-config.js';
import { TokenReviewAuthenticator } from '../../authentication/token-review.js';
import { SubjectAccessReviewAuthorizer } from '../../authorization/subject-access-review.js';
import { loadHostCluster, type LoadHostClusterOptions } from '../../hostcluster/load.js';
import type { HostCluster } from '../../hostcluster/types.js';
import type { HealthCheck } from '../config.js';
import type { JsonLogger } from './logger.js';
import type { ServerOptionValues } from './options.js';

export type HostOptionValues = Pick<
  ServerOptionValues,
  | 'hostKubeconfig'
  | 'bootstrapSecret'
  | 'requestheaderClientCaFile'
  | 'requestheaderAllowedNames'
  | 'requestheaderUsernameHeaders'
  | 'requestheaderGroupHeaders'
  | 'requestheaderExtraHeadersPrefix'
  | 'requestheaderUidHeaders'
>;

export const HOST_OPTION_DEFAULTS: Readonly<HostOptionValues> = Object.freeze({
  hostKubeconfig: '',
  bootstrapSecret: '',
  requestheaderClientCaFile: '',
  requestheaderAllowedNames: [],
  requestheaderUsernameHeaders: [],
  requestheaderGroupHeaders: [],
  requestheaderExtraHeadersPrefix: [],
  requestheaderUidHeaders: [],
});

export interface HostServices {
  /** The host cluster, when one is configured. */
  readonly host: HostCluster | undefined;
  /** Always present: with no settings it authenticates nobody but still strips the identity headers. */
  readonly frontProxy: FrontProxyAuthenticator;
  /** Present with a host cluster: the last bearer-token authenticator. */
  readonly tokenReview: TokenReviewAuthenticator | undefined;
  /** Present with a host cluster: for the platform authorizer's delegated seam. */
  readonly subjectAccessReview: SubjectAccessReviewAuthorizer | undefined;
  /** `<namespace>/<name>` of the host Secret the bootstrap admin key goes to, when it can. */
  readonly bootstrapSecret: { readonly namespace: string; readonly name: string } | undefined;
  readonly readyChecks: readonly HealthCheck[];
  /** Starts the ConfigMap watch; idempotent. */
  start(): void;
  stop(): Promise<void>;
}

/** `<namespace>/<name>`, or undefined when malformed. */
export function parseSecretRef(ref: string): { namespace: string; name: string } | undefined {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(ref);
  if (!m || (m[1] ?? '').length > 63 || (m[3] ?? '').length > 253) return undefined;
  return { namespace: m[1] ?? '', name: m[3] ?? '' };
}

/** Problems with the host flags (validate() reports them with the rest). */
export function validateHostOptions(v: HostOptionValues): string[] {
  const errs: string[] = [];
  for (const [flag, file] of [
    ['--host-kubeconfig', v.hostKubeconfig],
    ['--requestheader-client-ca-file', v.requestheaderClientCaFile],
  ] as const) {
    if (file === '') continue;
    try {
      accessSync(file, constants.R_OK);
      if (!statSync(file).isFile()) errs.push(`${flag}: "${file}" is not a file`);
    } catch {
      errs.push(`${flag}: cannot read "${file}"`);
    }
  }
  if (v.bootstrapSecret !== '' && !parseSecretRef(v.bootstrapSecret)) {
    errs.push(
      `--bootstrap-secret: "${v.bootstrapSecret}" must be <namespace>/<name> (a namespace and a Secret name in lower case)`,
    );
  }
  for (const [flag, prefixes] of [
    ['--requestheader-extra-headers-prefix', v.requestheaderExtraHeadersPrefix],
  ] as const) {
    for (const p of prefixes)
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(p)) errs.push(`${flag}: "${p}" is not a header name prefix`);
  }
  return errs;
}

export function buildHostServices(
  options: HostOptionValues,
  logger: JsonLogger,
  load: (o: LoadHostClusterOptions) => HostCluster | undefined = loadHostCluster,
): HostServices {
  const log = logger.child({ component: 'host-cluster' });
  const host = load(options.hostKubeconfig ? { kubeconfigPath: options.hostKubeconfig } : {});
  if (host)
    log.info('host cluster configured', {
      server: host.server,
      from: options.hostKubeconfig || 'in-cluster',
    });

  const flags: RequestHeaderFlags = {
    clientCaFile: options.requestheaderClientCaFile,
    allowedNames: options.requestheaderAllowedNames,
    usernameHeaders: options.requestheaderUsernameHeaders,
    groupHeaders: options.requestheaderGroupHeaders,
    extraHeaderPrefixes: options.requestheaderExtraHeadersPrefix,
    uidHeaders: options.requestheaderUidHeaders,
  };
  let source: RequestHeaderConfigSource;
  let configMapSource: ConfigMapRequestHeaderSource | undefined;
  if (options.requestheaderClientCaFile !== '') {
    source = new StaticRequestHeaderSource(flags);
    log.info('front-proxy: request-header settings from flags', {
      clientCaFile: options.requestheaderClientCaFile,
      allowedNames: options.requestheaderAllowedNames,
    });
  } else if (host) {
    configMapSource = new ConfigMapRequestHeaderSource(host, flags, log);
    source = configMapSource;
  } else {
    source = { current: () => undefined };
    const given = [
      flags.allowedNames,
      flags.usernameHeaders,
      flags.groupHeaders,
      flags.extraHeaderPrefixes,
    ].some((l) => l.length > 0);
    if (given)
      log.warn(
        'front-proxy: --requestheader-* flags given without --requestheader-client-ca-file or a host cluster; front-proxy authentication is off',
      );
  }

  const frontProxy = new FrontProxyAuthenticator(source, log);
  const tokenReview = host ? new TokenReviewAuthenticator(host, { logger: log }) : undefined;
  const subjectAccessReview = host ? new SubjectAccessReviewAuthorizer(host, { logger: log }) : undefined;
  const secretRef = options.bootstrapSecret ? parseSecretRef(options.bootstrapSecret) : undefined;
  if (options.bootstrapSecret && !host)
    log.warn(
      '--bootstrap-secret needs a host cluster; the admin key goes to the admin kube config file instead',
      {
        bootstrapSecret: options.bootstrapSecret,
      },
    );

  const readyChecks: HealthCheck[] = configMapSource
    ? [
        {
          // Until the host has answered once, requests from its aggregator would all be 401s.
          name: 'front-proxy-settings',
          check: () => {
            if (!configMapSource.hasSynced)
              throw new Error('the host authentication ConfigMap has not been read yet');
          },
        },
      ]
    : [];

  return {
    host,
    frontProxy,
    tokenReview,
    subjectAccessReview,
    bootstrapSecret: host ? secretRef : undefined,
    readyChecks,
    start: () => configMapSource?.start(),
    stop: async () => {
      await configMapSource?.stop();
    },
  };
}
