// First start: when storage holds no User, create the admin User and an access key
// for it through the registry Stores (so validation, defaulting and key hashing
// apply exactly as for an API call), and hand the key over in
// <data-dir>/admin.kubeconfig, or, in a host cluster with --bootstrap-secret, in
// that host Secret (key `accessKey`) - the only place the plain key ever appears.
//
// Several replicas may start at once on one etcd. Creating the User with the fixed
// admin name arbitrates: storage's create fails with AlreadyExists for every
// replica but one, and only the winner creates the key (which has a fixed name
// too, so even a second attempt could not mint a second key).
//
// A first start can stop half-way (a crash, a kill, a full disk) after the User
// exists. Later starts see users and would never bootstrap again, leaving nobody
// able to log in, so they finish the job instead: when there is no admin kube
// config file and the admin User has no usable key, they issue the key and hand
// it over as a first start would. The bootstrap key carries a "handover pending"
// annotation until the hand-over is done; a pending key was never seen by anyone,
// so it counts as unusable and is replaced. An existing admin.kubeconfig is never
// overwritten, and a start that finds it does nothing. On shared storage a young
// admin User without a key, or a young pending key, is another replica's first start
// still at work: a later start waits out a grace period for its hand-over before it
// calls that a crash.

import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import { isApiError } from '../apis/meta/errors.js';
import type { Logger } from '../util/log/index.js';
import type { RequestContext, RESTStorage, WriteOptions } from '../registry/rest/interfaces.js';
import { serializeKubeConfig, singleContextKubeConfig } from '../kubeconfig/index.js';
import {
  formerOwnerAnnotation,
  keyRevisionAnnotation,
  hashAccessKey,
  tokenGenerationAnnotation,
} from '../apis/management/v1/owned-access-key.js';
import { AccessKeyUsability } from '../authentication/access-key-usability.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { resourceStore } from './resources.js';
import { isUnspecified } from './serving-certs.js';

export const ADMIN_KUBECONFIG_FILE = 'admin.kubeconfig';
export const ADMIN_CONTEXT = 'platform-admin';
export const BOOTSTRAP_KEY_SUFFIX = '-bootstrap';

/** `<group>/bootstrap-handover: pending` on the bootstrap key until its plain value has been handed over. */
export function bootstrapHandoverAnnotation(group: string): string {
  return `${group}/bootstrap-handover`;
}
const HANDOVER_PENDING = 'pending';

export type BootstrapResult =
  | {
      readonly outcome: 'created';
      /** True when a later start finished a first start that had stopped half-way. */
      readonly recovered?: boolean;
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
  /**
   * On storage other processes share (etcd), how long a first start may take to hand
   * its key over: a younger admin User without a key, or pending key, is another
   * replica's first start in progress, not a crash to recover from. 0 (the default)
   * for storage only this process uses.
   */
  readonly handoverGraceMs?: number;
}

const HANDOVER_POLL_MS = 250;

const SYSTEM_CONTEXT: RequestContext = {
  user: { name: 'system:platform-apiserver', groups: ['system:masters', 'system:authenticated'] },
  namespace: '',
  warnings: [],
};

const WRITE: WriteOptions = { dryRun: false, fieldManager: 'platform-apiserver', fieldValidation: 'Strict' };

const SKIPPED_USERS_EXIST: BootstrapResult = { outcome: 'skipped', reason: 'users-exist' };
const SKIPPED_ANOTHER_REPLICA: BootstrapResult = { outcome: 'skipped', reason: 'another-replica' };

/** A fresh context per call: the Stores append warnings to it. */
function system(): RequestContext {
  return { ...SYSTEM_CONTEXT, warnings: [] };
}

/** The URL a local client reaches the server at: the bind address, or loopback when bound to all interfaces. */
export function localServerUrl(bindAddress: string, port: number, pathPrefix: string): string {
  const host = isUnspecified(bindAddress) ? '127.0.0.1' : bindAddress;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return `https://${hostPart}:${port}${pathPrefix}`;
}

type UserStore = Required<Pick<RESTStorage, 'list' | 'get' | 'create'>>;
type KeyStore = Required<Pick<RESTStorage, 'list' | 'create' | 'patch' | 'delete'>>;

/** The Store of `resource`, checked to offer `verbs` (the generic Store offers them all). */
function storeWith<V extends keyof RESTStorage>(
  resources: readonly RESTStorage[],
  resource: string,
  verbs: readonly V[],
): Required<Pick<RESTStorage, V>> {
  const store = resourceStore(resources, resource);
  const missing = verbs.filter((v) => typeof store[v] !== 'function');
  if (missing.length > 0) throw new Error(`bootstrap: ${resource} must support ${missing.join(', ')}`);
  // Checked just above, verb by verb.
  return store as unknown as Required<Pick<RESTStorage, V>>;
}

export async function bootstrapAdmin(options: BootstrapOptions): Promise<BootstrapResult> {
  const { logger, adminUsername, group } = options;
  const users: UserStore = storeWith(options.resources, 'users', ['list', 'get', 'create']);
  const keys: KeyStore = storeWith(options.resources, 'ownedaccesskeys', [
    'list',
    'create',
    'patch',
    'delete',
  ]);

  const existing = await users.list(system(), { limit: 1 });
  if (existing.items.length > 0) return finishInterruptedBootstrap(options, users, keys);

  // Empty storage: any admin.kubeconfig here is left from a wiped store and its key is
  // dead. Move it first, so that a crash right after the User still finds no file.
  setAsideStaleKubeConfig(options);
  try {
    await users.create(
      system(),
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
      return SKIPPED_ANOTHER_REPLICA;
    }
    throw err;
  }
  return issueAdminKey(options, keys, false);
}

/**
 * Users exist. Does nothing unless an earlier first start stopped before the admin
 * could log in: no admin kube config, and the admin User has no usable key.
 */
async function finishInterruptedBootstrap(
  options: BootstrapOptions,
  users: UserStore,
  keys: KeyStore,
): Promise<BootstrapResult> {
  const { logger, adminUsername, group } = options;
  const kubeconfigPath = join(options.dataDir, ADMIN_KUBECONFIG_FILE);
  if (existsSync(kubeconfigPath)) {
    logger.info('bootstrap: users exist, nothing to do');
    return SKIPPED_USERS_EXIST;
  }
  const admin = await getOrUndefined(users, adminUsername);
  if (!admin) {
    logger.info('bootstrap: users exist, nothing to do');
    return SKIPPED_USERS_EXIST;
  }
  const keyName = adminUsername + BOOTSTRAP_KEY_SUFFIX;
  const grace = options.handoverGraceMs ?? 0;
  const recent = (obj: KubeObject): boolean =>
    grace > 0 && Date.now() - Date.parse(obj.metadata.creationTimestamp ?? '') < grace;
  let adminKeys: KubeObject[];
  let pending: KubeObject | undefined;
  for (;;) {
    const list = await keys.list(system(), {});
    adminKeys = list.items.filter((k) => specOf(k)['user'] === adminUsername);
    pending = adminKeys.find(
      (k) =>
        k.metadata.name === keyName &&
        k.metadata.annotations?.[bootstrapHandoverAnnotation(group)] === HANDOVER_PENDING,
    );
    // On shared storage a fresh admin User without its key, or a fresh pending key, is
    // another replica's first start at work, not a crash: wait for it to hand over
    // (or for the grace to run out, which only a crash explains).
    const bootstrapKey = adminKeys.find((k) => k.metadata.name === keyName);
    if (!(pending ? recent(pending) : !bootstrapKey && recent(admin))) break;
    await new Promise((r) => setTimeout(r, HANDOVER_POLL_MS));
  }
  const usable = adminKeys.filter((k) => k !== pending && isUsableKey(k, admin, group));
  if (usable.length > 0 || specOf(admin)['disabled'] === true) {
    // The admin logs in with a key of their own (or was disabled on purpose): not ours to change.
    logger.info('bootstrap: users exist, nothing to do');
    return SKIPPED_USERS_EXIST;
  }
  if (!pending && adminKeys.some((k) => k.metadata.name === keyName)) {
    logger.warn(
      `bootstrap: the admin user has no usable access key and there is no ${ADMIN_KUBECONFIG_FILE}, but the bootstrap key exists (disabled, expired or revoked by a tokenGeneration bump); delete the access key "${keyName}" and restart to get a new admin kube config`,
      { user: adminUsername, accessKey: keyName },
    );
    return SKIPPED_USERS_EXIST;
  }
  if (pending) {
    // Created, but its value never reached anyone: it can only be replaced.
    try {
      await keys.delete(system(), keyName, {
        dryRunAll: false,
        preconditions: { uid: pending.metadata.uid ?? '' },
      });
    } catch (err) {
      if (isApiError(err) && (err.reason === 'NotFound' || err.reason === 'Conflict')) {
        logger.info('bootstrap: another replica is replacing the admin key', { accessKey: keyName });
        return SKIPPED_ANOTHER_REPLICA;
      }
      throw err;
    }
  }
  logger.warn(
    'bootstrap: an earlier first start stopped before the admin key was handed over; finishing it now',
    { user: adminUsername, accessKey: keyName },
  );
  return issueAdminKey(options, keys, true);
}

/** Creates the bootstrap key (pending), hands it over, then clears the pending mark. */
async function issueAdminKey(
  options: BootstrapOptions,
  keys: KeyStore,
  recovered: boolean,
): Promise<BootstrapResult> {
  const { logger, adminUsername, group } = options;
  const keyName = adminUsername + BOOTSTRAP_KEY_SUFFIX;
  let created: KubeObject;
  try {
    created = await keys.create(
      system(),
      {
        apiVersion: `${group}/v1`,
        kind: 'OwnedAccessKey',
        metadata: {
          name: keyName,
          annotations: { [bootstrapHandoverAnnotation(group)]: HANDOVER_PENDING },
        },
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
      return SKIPPED_ANOTHER_REPLICA;
    }
    throw err;
  }
  const spec = specOf(created);
  const key = typeof spec['key'] === 'string' ? spec['key'] : '';
  if (key === '' || key.startsWith('sha256:')) {
    throw new Error('bootstrap: the access key create response did not carry the plain key');
  }
  const keyHash = hashAccessKey(key);
  const base = { outcome: 'created' as const, keyName, keyHash, ...(recovered ? { recovered } : {}) };

  if (options.writeKeySecret) {
    try {
      const secret = await options.writeKeySecret(key);
      await markHandedOver(options, keys, keyName);
      logger.info('bootstrap: created the admin user and access key; the key is in the host Secret', {
        user: adminUsername,
        accessKey: keyName,
        secret,
      });
      return { ...base, secret };
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
  writeFileAtomic(kubeconfigPath, serializeKubeConfig(doc), 0o600, { exclusive: true });
  await markHandedOver(options, keys, keyName);
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
  return { ...base, kubeconfigPath };
}

/**
 * Clears the pending mark. If this fails the key still works; a later start that
 * finds no kube config file would replace it, which only costs a new key.
 */
async function markHandedOver(options: BootstrapOptions, keys: KeyStore, keyName: string): Promise<void> {
  try {
    await keys.patch(
      system(),
      keyName,
      'merge',
      { metadata: { annotations: { [bootstrapHandoverAnnotation(options.group)]: null } } },
      WRITE,
    );
  } catch (err) {
    options.logger.warn('bootstrap: cannot clear the handover mark of the admin key', {
      accessKey: keyName,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Keeps a file left from a wiped store under another name instead of writing over it. */
function setAsideStaleKubeConfig(options: BootstrapOptions): void {
  const path = join(options.dataDir, ADMIN_KUBECONFIG_FILE);
  if (!existsSync(path)) return;
  const aside = `${path}.stale-${Date.now()}`;
  renameSync(path, aside);
  options.logger.warn(
    `bootstrap: storage has no users but ${ADMIN_KUBECONFIG_FILE} exists (its key cannot work); moved it aside`,
    { file: aside },
  );
}

/** Whether the authenticator would accept this key of `owner` now (disabled, expiry, owner, tokenGeneration). */
function isUsableKey(key: KubeObject, owner: KubeObject, group: string): boolean {
  const source = {
    hasSynced: true,
    waitForSync: () => Promise.resolve(true),
    accessKeyByHash: () => undefined,
    accessKey: () => undefined,
    user: (name: string) => (name === owner.metadata.name ? owner : undefined),
    team: () => undefined,
  };
  try {
    new AccessKeyUsability(source, {
      generationAnnotation: tokenGenerationAnnotation(group),
      formerOwnerAnnotation: formerOwnerAnnotation(group),
      revisionAnnotation: keyRevisionAnnotation(group),
    }).check(key);
    return true;
  } catch {
    return false;
  }
}

async function getOrUndefined(store: UserStore, name: string): Promise<KubeObject | undefined> {
  try {
    return await store.get(system(), name, {});
  } catch (err) {
    if (isApiError(err) && err.reason === 'NotFound') return undefined;
    throw err;
  }
}

function specOf(obj: KubeObject): Record<string, unknown> {
  return isObject(obj['spec']) ? obj['spec'] : {};
}
