// A small typed builder for kube config documents, so every place that hands a
// user a kube config (the bootstrap admin file now, the kubeconfig subresource and
// the command-line client later) produces the same well-formed shape.

import { stringify } from 'yaml';
import type { KubeConfig, KubeConfigCluster, KubeConfigContext, KubeConfigUser } from './types.js';

export interface ClusterOptions {
  server: string;
  /** PEM text of the CA bundle; encoded to certificate-authority-data. */
  caPem?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
}

export interface UserOptions {
  token?: string;
  /** PEM text; encoded to client-certificate-data / client-key-data. */
  clientCertificatePem?: string;
  clientKeyPem?: string;
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export class KubeConfigBuilder {
  private readonly config: KubeConfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [],
    users: [],
    contexts: [],
    'current-context': '',
    preferences: {},
  };

  cluster(name: string, options: ClusterOptions): this {
    const cluster: KubeConfigCluster = { server: options.server };
    if (options.caPem) cluster['certificate-authority-data'] = base64(options.caPem);
    if (options.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
    if (options.tlsServerName) cluster['tls-server-name'] = options.tlsServerName;
    upsert(this.config.clusters, { name, cluster });
    return this;
  }

  user(name: string, options: UserOptions): this {
    if (options.clientCertificatePem !== undefined && options.clientKeyPem === undefined) {
      // kubectl fails late and obscurely on half a client certificate; fail here instead.
      throw new Error(`kube config user "${name}": a client certificate needs its key`);
    }
    const user: KubeConfigUser = {};
    if (options.token !== undefined) user.token = options.token;
    if (options.clientCertificatePem !== undefined)
      user['client-certificate-data'] = base64(options.clientCertificatePem);
    if (options.clientKeyPem !== undefined) user['client-key-data'] = base64(options.clientKeyPem);
    upsert(this.config.users, { name, user });
    return this;
  }

  context(name: string, context: KubeConfigContext, options: { current?: boolean } = {}): this {
    upsert(this.config.contexts, { name, context: { ...context } });
    if (options.current) this.config['current-context'] = name;
    return this;
  }

  currentContext(name: string): this {
    this.config['current-context'] = name;
    return this;
  }

  /** The document; throws when a context names a cluster or user that is not in it. */
  build(): KubeConfig {
    for (const { name, context } of this.config.contexts) {
      if (!this.config.clusters.some((c) => c.name === context.cluster)) {
        throw new Error(`kube config context "${name}" refers to unknown cluster "${context.cluster}"`);
      }
      if (!this.config.users.some((u) => u.name === context.user)) {
        throw new Error(`kube config context "${name}" refers to unknown user "${context.user}"`);
      }
    }
    const current = this.config['current-context'];
    if (current && !this.config.contexts.some((c) => c.name === current)) {
      throw new Error(`kube config current-context "${current}" is not a context in it`);
    }
    return structuredClone(this.config);
  }
}

function upsert<T extends { name: string }>(list: T[], entry: T): void {
  const i = list.findIndex((e) => e.name === entry.name);
  if (i >= 0) list[i] = entry;
  else list.push(entry);
}

/** YAML text of a kube config, as kubectl writes it. */
export function serializeKubeConfig(config: KubeConfig): string {
  return stringify(config, { lineWidth: 0 });
}

/** The usual one-cluster, one-user, one-context document, as current context. */
export function singleContextKubeConfig(options: {
  contextName: string;
  clusterName?: string;
  userName?: string;
  cluster: ClusterOptions;
  user: UserOptions;
  namespace?: string;
}): KubeConfig {
  const clusterName = options.clusterName ?? options.contextName;
  const userName = options.userName ?? options.contextName;
  const context: KubeConfigContext = { cluster: clusterName, user: userName };
  if (options.namespace) context.namespace = options.namespace;
  return new KubeConfigBuilder()
    .cluster(clusterName, options.cluster)
    .user(userName, options.user)
    .context(options.contextName, context, { current: true })
    .build();
}
