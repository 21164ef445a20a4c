// The server's assembly, as kube-apiserver's CreateServerChain builds a server from
// its completed options: buildServerConfig() turns ServerOptions
// (pkg/apiserver/options) into everything the server needs (TLS material, storage,
// one registry Store per kind, authentication, authorization, the HTTP layer's
// ApiServerConfig); startServer() (./serve.ts) serves it.

import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ApiServerConfig, HealthCheck } from '../apiserver/config.js';
import { CertificateBindingAuthenticator } from '../authentication/certificate-binding.js';
import { AccessKeyAuthenticator } from '../authentication/access-key.js';
import { UnionAuthenticator } from '../authentication/union.js';
import { newPlatformAuthorization } from '../authorization/index.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { IdentityServices } from '../identity/index.js';
import type { Store } from '../registry/generic/store.js';
import { managementKinds, resourcesWhere } from '../registry/management/index.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { StorageDeadline } from '../storage/deadline.js';
import type { Storage } from '../storage/interfaces.js';
import type { RESTStorage } from '../registry/rest/interfaces.js';
import { JsonLogger, isLogLevel, type Logger } from '../util/log/index.js';
import {
  ensureServingCertificates,
  loadServingCertificates,
  type ServingCertificates,
} from './serving-certs.js';
import { openStorage } from './storage.js';
import { buildResources, collectionPrefix, resourceStore } from './resources.js';
import {
  listedKeyOwners,
  migrateKeyOwners,
  type KeyOwnerMigrationResult,
} from '../registry/management/owned-access-key/owner-migration.js';
import { buildTokenServices } from './tokens.js';
import { selfReviewResources } from './self-reviews.js';
import { setUpEncryption } from './encryption.js';
import { buildAudit } from '../audit/options.js';
import { StorageProbe } from './storage-probe.js';
import { versionInfo } from './version.js';
import type { ServerOptions, ServerOptionValues } from '../apiserver/options/server-run-options.js';
import { buildHostServices, type HostServices } from './host.js';
import { API_VERSION, MANAGEMENT_PATH_PREFIX } from './constants.js';
import { GarbageCollectorController } from '../controller/garbagecollector/controller.js';

/** Everything a started server is made of; built by buildServerConfig(). */
export interface ServerConfig {
  readonly options: Readonly<ServerOptionValues>;
  readonly logger: Logger;
  readonly tls: ServingCertificates;
  readonly storage: Storage;
  readonly resources: readonly RESTStorage[];
  /** Users, teams and keys as the authenticator and authorizer see them (watch-fed), and their controllers. */
  readonly accessKeys: IdentityServices;
  readonly api: ApiServerConfig;
  /** Where the server is in its life; the readiness checks read it. */
  readonly lifecycle: Lifecycle;
  /** The host cluster and what it authenticates and authorizes (front-proxy, TokenReview, SubjectAccessReview). */
  readonly host: HostServices;
  /** The in-server garbage collector, when it runs (see --enable-garbage-collector). */
  readonly garbageCollector: GarbageCollectorController | undefined;
  /**
   * Gives keys stored before keys named their owner the ownerReference, and records
   * the former owner of keys orphaned before that was recorded (idempotent; run at start).
   */
  readonly keyOwnerMigration?: () => Promise<KeyOwnerMigrationResult>;
  /** Called once the server listens, with the port it got (--secure-port may be 0). */
  readonly listening?: (port: number) => void;
}

export interface Lifecycle {
  /** The first-start bootstrap has run (so admin.kubeconfig exists when readyz says ok). */
  bootstrapped: boolean;
  /** A stop has begun (the HTTP layer's own `shutdown` check fails readyz from then on). */
  shuttingDown: boolean;
}

/** Builds the server's parts from completed, valid options. Opens storage: the caller must close it (startServer does). */
export async function buildServerConfig(
  serverOptions: ServerOptions,
  logger?: Logger,
): Promise<ServerConfig> {
  serverOptions.complete();
  const options: ServerOptionValues = {
    ...serverOptions.values,
    etcdServers: [...serverOptions.values.etcdServers],
  };
  const log = logger ?? new JsonLogger(isLogLevel(options.logLevel) ? options.logLevel : 'info');

  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const tls =
    options.tlsCertFile !== ''
      ? loadServingCertificates(options.tlsCertFile, options.tlsPrivateKeyFile)
      : ensureServingCertificates({
          pkiDir: join(options.dataDir, 'pki'),
          bindAddress: options.bindAddress,
          hostName: hostname(),
          logger: log,
        });

  const encryption = await setUpEncryption(options, log);
  let storage: Storage;
  try {
    storage = await openStorage(options, log, encryption);
  } catch (err) {
    encryption?.close();
    throw err;
  }
  try {
    const group = options.apiGroup;
    const prefixOf = (resource: string): string => collectionPrefix(options.etcdPrefix, group, resource);
    const storedKinds = managementKinds(group).map((k) => k.info);
    // The identity controllers write status through the users' and keys' Stores, built below.
    const stores = new Map<string, Store>();
    const accessKeys = new IdentityServices({
      storage,
      statusWriterOf: (resource) => stores.get(resource),
      collectionPrefix: prefixOf,
      // The identity kinds are in the cache whole; the others only for their owner and rules.
      accessHolderResources: resourcesWhere(group, (k) => k.traits.accessRules && !k.traits.identity),
      activityIntervalMs: options.accessKeyActivityIntervalMs,
      logger: log.child({ component: 'identity' }),
    });
    const pathPrefixes = [MANAGEMENT_PATH_PREFIX];
    const hostServices = await buildHostServices(options, log);
    // With a host cluster the host's collector works on our objects (it honours the
    // deletion finalizers too); ours runs only where no other one does.
    const collectorEnabled = options.enableGarbageCollector ?? hostServices.host === undefined;
    const garbageCollection = collectorEnabled || hostServices.host !== undefined;
    const authorization = newPlatformAuthorization({
      group,
      delegated: hostServices.subjectAccessReview ? [hostServices.subjectAccessReview] : [],
      cache: accessKeys.cache,
      adminUsername: options.adminUsername,
      adminRole: options.adminRole,
      projectNamespacePrefix: options.projectNamespacePrefix,
      pathPrefixes,
      listableResources: storedKinds.map((k) => k.resource),
      resolveKind: (apiVersion, kind) => {
        const info = storedKinds.find((k) => `${k.group}/${k.version}` === apiVersion && k.kind === kind);
        return info && { group: info.group, resource: info.resource, namespaced: info.namespaced };
      },
    });
    // Each lookup made for a request is given the request's deadline.
    const readUser = async (name: string, deadline?: StorageDeadline): Promise<KubeObject | undefined> =>
      (await storage.get(prefixOf('users') + name, { ignoreNotFound: true }, deadline)) ?? undefined;
    const accessKeyAuthenticator = new AccessKeyAuthenticator(accessKeys.cache, {
      use: accessKeys.activity,
      generationAnnotation: tokenGenerationAnnotation(group),
      formerOwnerAnnotation: formerOwnerAnnotation(group),
      revisionAnnotation: keyRevisionAnnotation(group),
      passUnknownTokens: hostServices.tokenReview !== undefined,
      // The reason of a key's bare 401 (a former owner's key), by the key's name.
      logger: log,
    });
    const tokens = await buildTokenServices({
      options,
      host: hostServices.host,
      // A new token records the User as stored now.
      users: { user: readUser },
      // A token is accepted only while its key passes the key authenticator's own checks.
      accessKeys: accessKeyAuthenticator.usability,
      logger: log,
    });
    // Read from storage, not the cache: the reference must name the owner as it is now.
    const keyOwner = async (
      kind: 'User' | 'Team',
      name: string,
      deadline?: StorageDeadline,
    ): Promise<KubeObject | undefined> =>
      (await storage.get(
        prefixOf(kind === 'User' ? 'users' : 'teams') + name,
        { ignoreNotFound: true },
        deadline,
      )) ?? undefined;
    const resources = buildResources(group, storage, options.etcdPrefix, {
      admission: authorization.admission,
      filter: authorization.filter,
      identity: accessKeys.cache,
      // A key records its User's generation as stored now, from the same consistent read
      // of the User that gives its ownerReference the uid (keyOwner, above): one read per
      // write, not one per question.
      generationFromKeyOwner: true,
      virtualClusterInstances: {
        options: { projectNamespacePrefix: options.projectNamespacePrefix },
        kubeConfig: (instances) => tokens.kubeConfigSubresource(instances),
      },
      extraResources: [tokens.tokenResource(authorization.authorizer)],
      garbageCollection,
      keyOwner,
      onStore: (store) => stores.set(store.info.resource, store),
    });
    // Bare Stores for the server's own writes (the collector, migrations): past admission and filters.
    const systemStores = buildResources(group, storage, options.etcdPrefix, {
      garbageCollection,
      keyOwner,
    });
    const garbageCollector = collectorEnabled
      ? new GarbageCollectorController({
          storage,
          collectionPrefix: prefixOf,
          stores: systemStores,
          logger: log.child({ component: 'garbage-collector' }),
        })
      : undefined;
    const lifecycle: Lifecycle = { bootstrapped: false, shuttingDown: false };
    // Cached and bounded: /readyz answers within a second even when etcd is frozen.
    const storageProbe = new StorageProbe(storage);
    const readyChecks: HealthCheck[] = [
      { name: 'storage', check: () => storageProbe.check() },
      {
        name: 'identity-cache',
        check: () => {
          // The reason says which object could not be read (a wrong encryption key, a plugin down).
          if (!accessKeys.hasSynced) {
            const why = accessKeys.syncError;
            throw new Error(`users, teams and access keys not loaded yet${why ? `: ${why}` : ''}`);
          }
        },
      },
      {
        name: 'bootstrap',
        check: () => {
          if (!lifecycle.bootstrapped) throw new Error('bootstrap not finished');
        },
      },
      ...hostServices.readyChecks,
    ];
    const api: ApiServerConfig = {
      group: options.apiGroup,
      version: API_VERSION,
      resources,
      // Always: clients that reach this server directly (standalone, with or without a
      // host cluster) ask it; the aggregator proxies only this group here (self-reviews.ts).
      builtinResources: selfReviewResources(group, authorization, resources),
      // Front-proxy first (it strips the identity headers on every request), client
      // certificates, then the platform's own bearer tokens, then the host's TokenReview for any other token.
      authenticator: new UnionAuthenticator([
        // Both refuse a client certificate of the kubeconfig subresource whose User or key is gone.
        new CertificateBindingAuthenticator(hostServices.frontProxy, {
          apiGroup: group,
          keys: accessKeyAuthenticator.usability,
          certificates: false,
        }),
        // The caller's own client certificate (after the front proxy, as upstream orders them).
        ...(hostServices.clientCertificates
          ? [
              new CertificateBindingAuthenticator(hostServices.clientCertificates, {
                apiGroup: group,
                keys: accessKeyAuthenticator.usability,
                certificates: true,
              }),
            ]
          : []),
        // Before access keys: direct cluster endpoint tokens are JWTs, and other issuers' JWTs pass on.
        tokens.authenticator,
        accessKeyAuthenticator,
        ...(hostServices.tokenReview ? [hostServices.tokenReview] : []),
      ]),
      authorizer: authorization.authorizer,
      pathPrefixes,
      versionInfo: versionInfo(),
      readyChecks,
      // The kms-providers check, on every health endpoint as upstream's AddHealthChecks puts it.
      liveChecks: [...(encryption?.healthChecks ?? [])],
      logger: log,
      publicDocuments: [tokens.documents],
      requestTimeoutMs: options.requestTimeoutMs,
      minRequestTimeoutSeconds: options.minRequestTimeoutSeconds,
      storageDeadlines: options.storageBackend === 'etcd3',
      maxRequestsInflight: options.maxRequestsInflight,
      maxMutatingRequestsInflight: options.maxMutatingRequestsInflight,
      audit: await buildAudit(options, log.child({ component: 'audit' })),
    };
    return {
      options,
      logger: log,
      tls,
      storage,
      resources,
      accessKeys,
      api,
      lifecycle,
      host: hostServices,
      garbageCollector,
      keyOwnerMigration: async () =>
        migrateKeyOwners(
          resourceStore(systemStores, 'ownedaccesskeys'),
          await listedKeyOwners(resourceStore(systemStores, 'users'), resourceStore(systemStores, 'teams')),
        ),
      // The default token issuer is this server's address, port included.
      listening: (port) => tokens.listening(port),
    };
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
}
