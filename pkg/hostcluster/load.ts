// Which host cluster, if any: the kube config named by --host-kubeconfig, or the
// pod's service account when the server runs inside a cluster, or none (a
// standalone server, which then neither delegates authentication nor writes host
// Secrets).
//
// @kubernetes/client-node (and client.ts, built on it) is imported only once a host
// cluster is configured: loading it costs about a second of CPU, which a standalone
// server, the common case, never needs.

import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeHostClusterOptions } from './client.js';
import type { HostCluster } from './types.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadHostClusterOptions extends KubeHostClusterOptions {
  /** A kube config file; its current context names the host. */
  readonly kubeconfigPath?: string;
  /** Defaults to process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the service account token and CA are mounted (tests point elsewhere). */
  readonly serviceAccountDir?: string;
}

/** True when running in a pod with a service account: KUBERNETES_SERVICE_HOST/PORT and a mounted token. */
export function inCluster(options: Pick<LoadHostClusterOptions, 'env' | 'serviceAccountDir'> = {}): boolean {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  return (
    Boolean(env['KUBERNETES_SERVICE_HOST']) &&
    Boolean(env['KUBERNETES_SERVICE_PORT']) &&
    existsSync(`${dir}/token`)
  );
}

/**
 * The host cluster, or undefined when there is none (then without loading
 * client-node at all). Rejects when the kube config file is unusable.
 */
export async function loadHostCluster(
  options: LoadHostClusterOptions = {},
): Promise<HostCluster | undefined> {
  const from: ((kc: KubeConfig) => void) | undefined = options.kubeconfigPath
    ? (kc) => {
        kc.loadFromFile(options.kubeconfigPath ?? '');
        if (!kc.getCurrentCluster())
          throw new Error(
            `--host-kubeconfig "${options.kubeconfigPath}": the current context names no cluster`,
          );
      }
    : inCluster(options)
      ? (kc) => {
          // client-node reads <prefix>/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}.
          const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
          kc.loadFromCluster(
            dir.endsWith(SERVICE_ACCOUNT_DIR) ? dir.slice(0, -SERVICE_ACCOUNT_DIR.length) : '',
          );
        }
      : undefined;
  if (!from) return undefined;
  const [{ KubeConfig }, { KubeHostCluster }] = await Promise.all([
    import('@kubernetes/client-node'),
    import('./client.js'),
  ]);
  const kc = new KubeConfig();
  from(kc);
  return new KubeHostCluster(kc, options);
}
