// Writes the bootstrap admin key into a host Secret (--bootstrap-secret), where the
// Helm chart's notes tell the operator to read it: `data.accessKey` (and
// `data.username`). Create it; if it exists (left from an earlier install whose
// storage was wiped), replace its data with the new key. Transient failures are
// retried a few times, because the key exists nowhere else yet.

import { isHostAlreadyExists, isHostConflict } from '../hostcluster/errors.js';
import type { HostCluster } from '../hostcluster/types.js';

export const BOOTSTRAP_SECRET_KEY = 'accessKey';
export const BOOTSTRAP_SECRET_USERNAME = 'username';

export interface BootstrapSecretTarget {
  readonly host: Pick<HostCluster, 'createSecret' | 'getSecret' | 'updateSecret'>;
  readonly namespace: string;
  readonly name: string;
  /** Attempts before giving up (default 5, with 0.5 s, 1 s, 2 s, 4 s between them). */
  readonly attempts?: number;
  readonly retryDelayMs?: number;
}

/** Resolves to `<namespace>/<name>` once the Secret holds the key. */
export async function writeBootstrapSecret(
  target: BootstrapSecretTarget,
  username: string,
  key: string,
): Promise<string> {
  const { host, namespace, name } = target;
  const data = {
    [BOOTSTRAP_SECRET_KEY]: Buffer.from(key, 'utf8'),
    [BOOTSTRAP_SECRET_USERNAME]: Buffer.from(username, 'utf8'),
  };
  const metadata = { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'platform-apiserver' } };
  const attempts = target.attempts ?? 5;
  let delay = target.retryDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      try {
        await host.createSecret({ metadata, type: 'Opaque', data });
      } catch (err) {
        if (!isHostAlreadyExists(err)) throw err;
        const current = await host.getSecret(namespace, name);
        await host.updateSecret({
          metadata: {
            ...metadata,
            ...(current?.metadata.resourceVersion
              ? { resourceVersion: current.metadata.resourceVersion }
              : {}),
          },
          type: current?.type ?? 'Opaque',
          data,
        });
      }
      return `${namespace}/${name}`;
    } catch (err) {
      // Forbidden or invalid will not change by waiting; a conflict or an unreachable host may.
      const code = (err as { code?: unknown }).code;
      const retriable =
        isHostConflict(err) || code === 0 || (typeof code === 'number' && code >= 500) || code === 429;
      if (!retriable || attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay *= 2;
    }
  }
}
