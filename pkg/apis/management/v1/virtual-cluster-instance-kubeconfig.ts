// VirtualClusterInstanceKubeConfig: what the kubeconfig subresource of a
// VirtualClusterInstance accepts and returns (POST, nothing stored). The kube
// config reaches the virtual cluster through its ingress access point and
// authenticates with a platform token or, with clientCert, with a client
// certificate signed through the host cluster's CertificateSigningRequest API.

import type { SubresourceInfo } from '../../meta/resource-info.js';
import { kindSchema, type TypedObject } from './common.js';
import { bool, int32, obj, str, type JSONSchema } from './schema-builders.js';

export const KUBECONFIG_SUBRESOURCE = 'kubeconfig';
export const KUBECONFIG_KIND = 'VirtualClusterInstanceKubeConfig';
/** certificateTTL when omitted: one day. */
export const DEFAULT_CERTIFICATE_TTL_SECONDS = 86400;

export interface VirtualClusterInstanceKubeConfigSpec {
  certificateTTL?: number;
  server?: string;
  clientCert?: boolean;
}

export interface VirtualClusterInstanceKubeConfigStatus {
  kubeConfig?: string;
}

export type VirtualClusterInstanceKubeConfig = TypedObject<
  VirtualClusterInstanceKubeConfigSpec,
  VirtualClusterInstanceKubeConfigStatus
>;

export function kubeConfigSubresourceInfo(): SubresourceInfo {
  return { name: KUBECONFIG_SUBRESOURCE, kind: KUBECONFIG_KIND, verbs: ['create'] };
}

export function virtualClusterInstanceKubeConfigSchema(): JSONSchema {
  return kindSchema(
    'VirtualClusterInstanceKubeConfig asks for a kube config of a virtual cluster instance. POST it to the kubeconfig subresource; the kube config is in status.kubeConfig of the response and is not stored.',
    obj('What kube config to make.', {
      certificateTTL: int32(
        "Lifetime in seconds of the credentials in the kube config. Omitted: one day. Zero: no expirationSeconds is requested, so the signer's default applies (often a year); a token then lives as long as the server allows. Must not be negative.",
      ),
      server: str(
        'Server address for the kube config. Omitted: https://<ingress host> of the instance, which needs its ingress access point.',
      ),
      clientCert: bool(
        "When true the kube config carries a client certificate and key, signed through the host cluster's CertificateSigningRequest API, instead of a platform token.",
      ),
    }),
    obj('The result. Set by the server.', {
      kubeConfig: str('The kube config document (YAML). Empty on a dry run.'),
    }),
  );
}
