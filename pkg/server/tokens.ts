// Wiring of issue 5: the token signing keys (kept in <data-dir>/tokens, or in the
// host Secret named by --signing-key-secret when a host cluster is configured), the
// token issuer and its public documents, the bearer-token authenticator for
// direct cluster endpoint tokens, the DirectClusterEndpointToken resource and the
// VirtualClusterInstance kubeconfig subresource.

import { hostname } from 'node:os';
import { join } from 'node:path';

import { parseNamespacedName } from '../apis/meta/namespaced-name.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { StorageDeadline } from '../storage/deadline.js';
import type { AccessKeyUsability } from '../authentication/access-key-usability.js';
import { EndpointTokenAuthenticator } from '../authentication/endpoint-token.js';
import type { Authorizer } from '../authorization/interfaces.js';
import { isHostAlreadyExists, isHostConflict } from '../hostcluster/errors.js';
import type { HostCluster } from '../hostcluster/types.js';
import { compileSchema } from '../apis/schema/compile.js';
import { DirectClusterEndpointTokenStorage } from '../registry/management/directclusterendpointtoken/storage.js';
import { KubeConfigSubresource } from '../registry/management/virtualclusterinstance/kubeconfig.js';
import type { RESTStorage, SubresourceStorage } from '../registry/rest/interfaces.js';
import { IssuerDocuments } from '../tokens/discovery.js';
import { IssuerUrl } from '../tokens/issuer-url.js';
import { SigningKeyManager } from '../tokens/key-manager.js';
import {
  FileKeyStore,
  SecretKeyStore,
  type SecretAccess,
  type SigningKeyStore,
} from '../tokens/key-store.js';
import { TokenIssuer } from '../tokens/token-issuer.js';
import { MANAGEMENT_PATH_PREFIX } from './constants.js';
import type { Logger } from '../util/log/index.js';
import type { ServerOptionValues } from '../apiserver/options/server-run-options.js';

/** A retired key verifies this much longer than the longest token lives, for clock skew between machines. */
const GRACE_SKEW_MS = 60_000;

export type TokenOptionValues = Pick<
  ServerOptionValues,
  | 'apiGroup'
  | 'bindAddress'
  | 'securePort'
  | 'storageBackend'
  | 'dataDir'
  | 'signingKeySecret'
  | 'tokenIssuer'
  | 'maxTokenTtlMs'
  | 'signingKeyRotationPeriodMs'
  | 'ingressSuffix'
  | 'projectNamespacePrefix'
  | 'csrSignerName'
  | 'csrTimeoutMs'
>;

/** Reads Users for the tokenGeneration claim of a new token: the User as storage has it now. */
export interface TokenUserSource {
  /** `deadline`: the request's, for the storage read. */
  user(name: string, deadline?: StorageDeadline): Promise<KubeObject | undefined>;
}

export interface TokenServices {
  readonly keys: SigningKeyManager;
  /** The `iss` of the tokens: --token-issuer, or this server's own address once it listens. */
  readonly issuerUrl: IssuerUrl;
  /** Tells the services the port the server got (the default issuer names it). */
  listening(port: number): void;
  readonly issuer: TokenIssuer;
  readonly documents: IssuerDocuments;
  readonly authenticator: EndpointTokenAuthenticator;
  /** POST directclusterendpointtokens; `authorizer` judges scope rules as the caller. */
  tokenResource(authorizer: Authorizer): RESTStorage;
  /** virtualclusterinstances/<name>/kubeconfig over the instances' Store. */
  kubeConfigSubresource(instances: Required<Pick<RESTStorage, 'get'>>): SubresourceStorage;
}

export async function buildTokenServices(input: {
  readonly options: TokenOptionValues;
  readonly host: HostCluster | undefined;
  readonly users: TokenUserSource;
  /**
   * The access-key authenticator's checks over the identity cache: a token is
   * accepted by the management API only while the key it was minted with passes them.
   */
  readonly accessKeys: AccessKeyUsability;
  readonly logger: Logger;
}): Promise<TokenServices> {
  const { options, host, users } = input;
  const logger = input.logger.child({ component: 'tokens' });
  const maxTtlSeconds = Math.floor(options.maxTokenTtlMs / 1000);
  const store = keyStore(options, host, logger);
  const keys = new SigningKeyManager({
    store,
    rotationPeriodMs: options.signingKeyRotationPeriodMs,
    gracePeriodMs: maxTtlSeconds * 1000 + GRACE_SKEW_MS,
    logger,
  });
  await keys.init();
  const issuerUrl = new IssuerUrl(options.tokenIssuer);
  const listening = (port: number): void =>
    issuerUrl.resolve({
      bindAddress: options.bindAddress,
      hostName: hostname(),
      port,
      pathPrefix: MANAGEMENT_PATH_PREFIX,
    });
  if (options.securePort !== 0) listening(options.securePort);
  if (!issuerUrl.isFixed && options.storageBackend === 'etcd3') {
    // Replicas on one etcd share keys but would each name themselves: tokens of one fail on another.
    logger.warn(
      'no --token-issuer: this replica names itself as the token issuer; with several replicas set --token-issuer to the address connected clusters use',
    );
  }
  // The tokens' iss, the discovery document's issuer and its jwks_uri: one URL, where the documents are served.
  const issuer = new TokenIssuer(keys, { issuer: () => issuerUrl.get(), audience: options.apiGroup });
  const documents = new IssuerDocuments(keys, { issuer: () => issuerUrl.get() });
  const tokens = { issuer, users };
  return {
    keys,
    issuerUrl,
    listening,
    issuer,
    documents,
    authenticator: new EndpointTokenAuthenticator(issuer, input.accessKeys),
    tokenResource: (authorizer) =>
      new DirectClusterEndpointTokenStorage({
        group: options.apiGroup,
        ...tokens,
        maxTtlSeconds,
        authorizer,
        compileSchema,
      }),
    kubeConfigSubresource: (instances) =>
      new KubeConfigSubresource({
        group: options.apiGroup,
        instances,
        host,
        tokens,
        maxTokenTtlSeconds: maxTtlSeconds,
        signerName: options.csrSignerName,
        csrTimeoutMs: options.csrTimeoutMs,
        ingressSuffix: options.ingressSuffix,
        projectNamespacePrefix: options.projectNamespacePrefix,
        compileSchema,
      }),
  };
}

function keyStore(
  options: TokenOptionValues,
  host: HostCluster | undefined,
  logger: Logger,
): SigningKeyStore {
  const secret = parseNamespacedName(options.signingKeySecret);
  if (secret && host) return new SecretKeyStore(hostSecrets(host), secret.namespace, secret.name);
  if (options.signingKeySecret !== '') {
    logger.warn('no host cluster is configured: keeping the token signing key in the data directory', {
      signingKeySecret: options.signingKeySecret,
    });
  }
  return new FileKeyStore(join(options.dataDir, 'tokens'));
}

/** The host client as the key store needs it: text data and optimistic concurrency as booleans. */
export function hostSecrets(host: HostCluster): SecretAccess {
  const text = (data: Readonly<Record<string, Buffer>>): Record<string, string> =>
    Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('utf8')]));
  const bytes = (data: Record<string, string>): Record<string, Buffer> =>
    Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8')]));
  return {
    async get(namespace, name) {
      const secret = await host.getSecret(namespace, name);
      return secret && { data: text(secret.data), resourceVersion: secret.metadata.resourceVersion ?? '' };
    },
    async create(namespace, name, data) {
      try {
        await host.createSecret({ metadata: { name, namespace }, data: bytes(data) });
        return true;
      } catch (err) {
        if (isHostAlreadyExists(err)) return false;
        throw err;
      }
    },
    async update(namespace, name, data, resourceVersion) {
      try {
        await host.updateSecret({ metadata: { name, namespace, resourceVersion }, data: bytes(data) });
        return true;
      } catch (err) {
        if (isHostConflict(err)) return false;
        throw err;
      }
    },
  };
}
