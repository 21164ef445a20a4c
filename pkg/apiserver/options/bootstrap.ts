// First start: when storage holds no User, create the admin User and an access key
// for it through the registry Stores (so validation, defaulting and key hashing
// apply exactly as for an API call), and hand the key over in
// <data-dir>/admin.kubeconfig, or, in a host cluster with --bootstrap-secret, in
// that host Secret (key `accessKey`) - the only place the plain key ever appears.
// Later starts find users and leave everything, file and Secret included, alone.
//
// Several replicas may start at once on one etcd. Creating the User with the fixed
// admin name arbitrates: storage's create fails with AlreadyExists for every
// replica but one, and only the winner creates the key (which has a fixed name
// too, so even a second attempt could not mint a second key).

import { join } from 'node:path';
import { isObject } from '../../apis/meta/types.js';
import { isApiError } from '../../apis/meta/errors.js';
import type { Logger } from '../config.js';
import type { RequestContext, RESTStorage, WriteOptions } from '../../registry/rest/interfaces.js';
import { serializeKubeConfig, singleContextKubeConfig } from '../../kubeconfig/index.js';
import { hashAccessKey } from '../../apis/management/v1/owned-access-key.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { resourceStore } from './resources.js';
import { isUnspecified } from './serving-certs.js';

export const ADMIN_KUBECONFIG_FILE = 'admin.kubeconfig';
export const ADMIN_CONTEXT = 'platform-admin';
export const BOOTSTRAP_KEY_SUFFIX = '-bootstrap';

export type BootstrapResult =
  | {
      readonly outcome: 'created';
      /** Where the admin kube config was written; absent when the key went to a host Secret only. */
      readonly kubeconfigPath?: string;
      /** `<namespace>/<name>` of the host Secret holding the key, when it went there. */
      readonly secret?: string;
      readonly keyName: string;
      /** The stored form of the key (never the key), to wait until the authenticator knows it. */
      readonly keyHash: string;
    }
  | { readonly outcome: 'skipped'; readonly reason: 'users-exist' | 'another-replica' };

export interface BootstrapOptions {
  readonly resources: readonly RESTStorage[];
  readonly group: string;
  readonly adminUsername: string;
  readonly dataDir: string;
  /** e.g. https://127.0.0.1:8443/kubernetes/management */
  readonly serverUrl: string;
  /** PEM of the CA that signs the serving certificate, when known. */
  readonly caPem?: string;
  readonly logger: Logger;
  /**
   * Hands the key to a host Secret instead of the kube config file (--bootstrap-secret);
   * resolves to the Secret's `<namespace>/<name>`. When it fails, the file is written
   * after all, so the key is never lost.
   */
  readonly writeKeySecret?: (key: string) => Promise<string>;
}

const SYSTEM_CONTEXT: RequestContext = {
  user: { name: 'system:platform-apiserver', groups: ['system:masters', 'system:authenticated'] },
  namespace: '',
  warnings: [],
};

const WRITE: WriteOptions = { dryRun: false, fieldManager: 'platform-apiserver', fieldValidation: 'Strict' };

/** The URL a local client reaches the server at: the bind address, or loopback when bound to all interfaces. */
export function localServerUrl(bindAddress: string, port: number, pathPrefix: string): string {
  const host = isUnspecified(bindAddress) ? '127.0.0.1' : bindAddress;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return `https://${hostPart}:${port}${pathPrefix}`;
}

export async function bootstrapAdmin(options: BootstrapOptions): Promise<BootstrapResult> {
  const { logger, adminUsername, group } = options;
  const users = resourceStore(options.resources, 'users');
  const keys = resourceStore(options.resources, 'ownedaccesskeys');
  if (!users.list || !users.create || !keys.create)
    throw new Error('users and ownedaccesskeys must support list and create');

  const existing = await users.list({ ...SYSTEM_CONTEXT, warnings: [] }, { limit: 1 });
  if (existing.items.length > 0) {
    logger.info('bootstrap: users exist, nothing to do');
    return { outcome: 'skipped', reason: 'users-exist' };
  }

  try {
    await users.create(
      { ...SYSTEM_CONTEXT, warnings: [] },
      {
        apiVersion: `${group}/v1`,
        kind: 'User',
        metadata: { name: adminUsername },
        spec: { displayName: 'Administrator', username: adminUsername },
      },
      WRITE,
    );
  } catch (err) {
    if (isApiError(err) && err.reason === 'AlreadyExists') {
      logger.info('bootstrap: another replica is creating the admin user', { user: adminUsername });
      return { outcome: 'skipped', reason: 'another-replica' };
    }
    throw err;
  }

  const keyName = adminUsername + BOOTSTRAP_KEY_SUFFIX;
  let created;
  try {
    created = await keys.create(
      { ...SYSTEM_CONTEXT, warnings: [] },
      {
        apiVersion: `${group}/v1`,
        kind: 'OwnedAccessKey',
        metadata: { name: keyName },
        spec: {
          displayName: 'Bootstrap admin key',
          description: `Created on first start for ${adminUsername}; handed over in ${options.writeKeySecret ? 'the bootstrap Secret' : ADMIN_KUBECONFIG_FILE}.`,
          user: adminUsername,
          type: 'User',
        },
      },
      WRITE,
    );
  } catch (err) {
    if (isApiError(err) && err.reason === 'AlreadyExists') {
      logger.info('bootstrap: another replica created the admin key', { accessKey: keyName });
      return { outcome: 'skipped', reason: 'another-replica' };
    }
    throw err;
  }
  const spec = isObject(created.spec) ? created.spec : {};
  const key = typeof spec.key === 'string' ? spec.key : '';
  if (key === '' || key.startsWith('sha256:')) {
    throw new Error('bootstrap: the access key create response did not carry the plain key');
  }

  if (options.writeKeySecret) {
    try {
      const secret = await options.writeKeySecret(key);
      logger.info('bootstrap: created the admin user and access key; the key is in the host Secret', {
        user: adminUsername,
        accessKey: keyName,
        secret,
      });
      return { outcome: 'created', secret, keyName, keyHash: hashAccessKey(key) };
    } catch (err) {
      logger.error(
        'bootstrap: cannot write the admin key to the host Secret; writing the admin kube config file instead',
        {
          error: err instanceof Error ? err.message : String(err),
        },
      );
    }
  }

  const kubeconfigPath = join(options.dataDir, ADMIN_KUBECONFIG_FILE);
  const doc = singleContextKubeConfig({
    contextName: ADMIN_CONTEXT,
    clusterName: 'platform',
    userName: adminUsername,
    cluster: options.caPem
      ? { server: options.serverUrl, caPem: options.caPem }
      : { server: options.serverUrl },
    user: { token: key },
  });
  writeFileAtomic(kubeconfigPath, serializeKubeConfig(doc), 0o600);
  if (!options.caPem) {
    logger.warn(
      'bootstrap: the admin kube config has no certificate-authority-data because the issuer of --tls-cert-file is not known; clients must trust that issuer themselves',
      { file: kubeconfigPath },
    );
  }
  logger.info('bootstrap: created the admin user and access key; the key is in the admin kube config', {
    user: adminUsername,
    accessKey: keyName,
    file: kubeconfigPath,
  });
  return { outcome: 'created', kubeconfigPath, keyName, keyHash: hashAccessKey(key) };
}
