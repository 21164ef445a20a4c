// Wiring of the host cluster (issue 3, part B): which host (--host-kubeconfig, or
// the pod's service account, or none), front-proxy authentication (settings from
// the --requestheader-* flags or the host's ConfigMap, watched), the host's
// TokenReview for bearer tokens that are not the platform's, and its
// SubjectAccessReview for host identities, and x509 client certificates signed by
// the client CA (--client-ca-file, or the ConfigMap's client-ca-file). CA files
// named by flags are read again when they change. Without a host cluster only the
// front-proxy flags can turn anything on; the identity headers are stripped either way.

import { parseNamespacedName } from '../apis/meta/namespaced-name.js';
import { FrontProxyAuthenticator } from '../authentication/front-proxy.js';
import {
  ConfigMapRequestHeaderSource,
  StaticRequestHeaderSource,
  type RequestHeaderConfigSource,
  type RequestHeaderFlags,
} from '../authentication/front-proxy-config.js';
import { TokenReviewAuthenticator } from '../authentication/token-review.js';
import { CaFile } from '../authentication/ca-file.js';
import { ClientCertificateAuthenticator } from '../authentication/client-certificate.js';
import { ConfigMapClientCaSource } from '../authentication/client-ca-config.js';
import { SubjectAccessReviewAuthorizer } from '../authorization/subject-access-review.js';
import { loadHostCluster, type LoadHostClusterOptions } from '../hostcluster/load.js';
import type { HostCluster } from '../hostcluster/types.js';
import type { HealthCheck } from '../apiserver/config.js';
import type { Logger } from '../util/log/index.js';
import type { AuthenticationOptionValues } from '../apiserver/options/authentication-options.js';
import type { HostOptionValues } from '../apiserver/options/host-options.js';

export interface HostServices {
  /** The host cluster, when one is configured. */
  readonly host: HostCluster | undefined;
  /** Always present: with no settings it authenticates nobody but still strips the identity headers. */
  readonly frontProxy: FrontProxyAuthenticator;
  /** Present with --client-ca-file or a host cluster: client certificates as CN = user, O = groups. */
  readonly clientCertificates: ClientCertificateAuthenticator | undefined;
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

export async function buildHostServices(
  options: HostOptionValues & AuthenticationOptionValues,
  logger: Logger,
  load: (o: LoadHostClusterOptions) => Promise<HostCluster | undefined> = loadHostCluster,
): Promise<HostServices> {
  const log = logger.child({ component: 'host-cluster' });
  const host = await load(options.hostKubeconfig ? { kubeconfigPath: options.hostKubeconfig } : {});
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
  let staticSource: StaticRequestHeaderSource | undefined;
  if (options.requestheaderClientCaFile !== '') {
    source = staticSource = new StaticRequestHeaderSource(flags, { logger: log });
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

  // The client CA: the flag's file (watched), else the host's ConfigMap (watched), else none.
  let clientCaFile: CaFile | undefined;
  let clientCaConfigMap: ConfigMapClientCaSource | undefined;
  if (options.clientCaFile !== '') {
    clientCaFile = new CaFile(options.clientCaFile, { flag: '--client-ca-file', logger: log });
    log.info('client certificates: client CA from --client-ca-file', { clientCaFile: options.clientCaFile });
  } else if (host) {
    clientCaConfigMap = new ConfigMapClientCaSource(host, log);
  }
  const clientCaSource = clientCaFile ?? clientCaConfigMap;
  const clientCertificates = clientCaSource
    ? new ClientCertificateAuthenticator(clientCaSource, log)
    : undefined;
  const tokenReview = host ? new TokenReviewAuthenticator(host, { logger: log }) : undefined;
  const subjectAccessReview = host ? new SubjectAccessReviewAuthorizer(host, { logger: log }) : undefined;
  const secretRef = options.bootstrapSecret ? parseNamespacedName(options.bootstrapSecret) : undefined;
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
    clientCertificates,
    tokenReview,
    subjectAccessReview,
    bootstrapSecret: host ? secretRef : undefined,
    readyChecks,
    start: () => {
      configMapSource?.start();
      staticSource?.start();
      clientCaFile?.start();
      clientCaConfigMap?.start();
    },
    stop: async () => {
      staticSource?.stop();
      clientCaFile?.stop();
      await Promise.all([configMapSource?.stop(), clientCaConfigMap?.stop()]);
    },
  };
}
