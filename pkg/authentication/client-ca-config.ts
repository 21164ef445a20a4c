// Where the client CA comes from (the CA whose client certificates authenticate as
// CN = user, O = groups): the --client-ca-file flag (a CaFile, read again when the
// file changes), or else the `client-ca-file` key of the host's
// kube-system/extension-apiserver-authentication ConfigMap, which kube-apiserver
// publishes for its extension servers and which is watched so a rotated CA takes
// effect at once (k8s.io/apiserver's DelegatingAuthenticationOptions reads the
// ConfigMap only for what the flags leave unset).

import type { HostCluster, HostConfigMap, WatchHandle } from '../hostcluster/types.js';
import { compileCaBundle, type CaBundle, type CaBundleSource } from './ca-bundle.js';
import {
  AUTHENTICATION_CONFIGMAP_NAME,
  AUTHENTICATION_CONFIGMAP_NAMESPACE,
  watchAuthenticationConfigMap,
} from './front-proxy-config.js';
import type { Logger } from '../util/log/index.js';

export const CLIENT_CA_KEY = 'client-ca-file';

const WHERE = `${AUTHENTICATION_CONFIGMAP_NAMESPACE}/${AUTHENTICATION_CONFIGMAP_NAME}`;

/** The client CA published in the host's authentication ConfigMap, kept current by a watch. */
export class ConfigMapClientCaSource implements CaBundleSource {
  private bundle: CaBundle | undefined;
  private pem = '';
  private handle: WatchHandle | undefined;

  constructor(
    private readonly host: Pick<HostCluster, 'watchConfigMap'>,
    private readonly logger: Logger,
  ) {}

  current(): CaBundle | undefined {
    return this.bundle;
  }

  start(): void {
    if (this.handle) return;
    this.handle = watchAuthenticationConfigMap(this.host, (cm) => this.apply(cm), this.logger, 'client CA');
  }

  async stop(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.stop();
  }

  /** Applies one state of the ConfigMap (exposed for tests). */
  apply(cm: HostConfigMap | undefined): void {
    const pem = cm?.data[CLIENT_CA_KEY] ?? '';
    if (pem.trim() === '') {
      if (this.bundle)
        this.logger.warn(
          'client CA: the host publishes no client-ca-file; client certificates are not accepted',
          {
            configMap: WHERE,
          },
        );
      this.bundle = undefined;
      this.pem = '';
      return;
    }
    if (pem === this.pem) return;
    try {
      this.bundle = compileCaBundle(pem);
      this.pem = pem;
      this.logger.info('client CA: loaded from the host', {
        configMap: WHERE,
        certificateAuthorities: this.bundle.roots.map((r) => r.subject.replace(/\n/g, ',')),
      });
    } catch (err) {
      // Keep what worked: a malformed update must not switch client certificates off.
      this.logger.error('client CA: the host client-ca-file is malformed; keeping the previous CA', {
        configMap: WHERE,
        error: (err as Error).message,
      });
    }
  }
}
