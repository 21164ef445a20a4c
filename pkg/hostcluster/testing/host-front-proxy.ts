// The host double's stand-in for the front-proxy side of kube-apiserver: the
// front-proxy CA and the aggregator's client certificate signed by it (its
// --requestheader-client-ca-file and --proxy-client-cert-file), their rotation, and
// kube-system/extension-apiserver-authentication as kube-apiserver publishes it
// (pkg/controlplane/controller/clusterauthenticationtrust): header names and allowed
// names as JSON arrays.

import { randomBytes } from 'node:crypto';
import {
  issueClientCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
  type IssuedCertificate,
} from './pki.js';

export const AUTHENTICATION_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTHENTICATION_CONFIGMAP_NAME = 'extension-apiserver-authentication';
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** The front-proxy CA, the bundle servers are told to trust, and the aggregator's client certificate. */
export class FrontProxyAuthority {
  private constructor(
    readonly ca: CertificateAuthority,
    readonly bundlePem: string,
    readonly client: IssuedCertificate,
  ) {}

  static create(name = 'front-proxy-ca', previousBundlePem = ''): FrontProxyAuthority {
    const ca = newCertificateAuthority(name);
    return new FrontProxyAuthority(
      ca,
      ca.certPem + previousBundlePem,
      issueClientCertificate(ca, FRONT_PROXY_CLIENT_NAME),
    );
  }

  /** A new CA and client certificate; with `keepOld` the old CA stays in the bundle (an overlap period). */
  rotated(keepOld: boolean): FrontProxyAuthority {
    return FrontProxyAuthority.create(
      `front-proxy-ca-${randomBytes(3).toString('hex')}`,
      keepOld ? this.bundlePem : '',
    );
  }

  /** The ConfigMap's data; `overrides` replace keys, or remove them when undefined. */
  authenticationConfigMapData(
    clientCaPem: string,
    allowedNames: readonly string[],
    overrides: Record<string, string | undefined>,
  ): Record<string, string> {
    const data: Record<string, string> = {
      'client-ca-file': clientCaPem,
      'requestheader-client-ca-file': this.bundlePem,
      'requestheader-allowed-names': JSON.stringify(allowedNames),
      'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
      'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
      'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
    };
    for (const [k, v] of Object.entries(overrides)) {
      if (v === undefined) delete data[k];
      else data[k] = v;
    }
    return data;
  }
}
