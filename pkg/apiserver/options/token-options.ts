// Direct cluster endpoint tokens and virtual cluster kube configs (issue 5): the
// signing keys, the issuer, token lifetimes, and how a kube config reaches an
// instance (its host name, its client certificate from the host's signer).

import type { OptionGroup } from './option-group.js';
import { parseNamespacedName } from '../../apis/meta/namespaced-name.js';
import { isSubdomain } from './validation.js';

export interface TokenOptionValues {
  /** Host Secret `<ns>/<name>` for the token signing keys ('' = the data directory). */
  signingKeySecret: string;
  /** `iss` of direct cluster endpoint tokens ('' = this server's address: https://<host>:<port>/kubernetes/management). */
  tokenIssuer: string;
  maxTokenTtlMs: number;
  /** 0 = never rotate automatically. */
  signingKeyRotationPeriodMs: number;
  projectNamespacePrefix: string;
  ingressSuffix: string;
  csrSignerName: string;
  csrTimeoutMs: number;
}

/** `<domain>/<path>`, as Kubernetes signer names are (kubernetes.io/kube-apiserver-client). */
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[-A-Za-z0-9_./]+$/;

export const tokenOptions = {
  title: 'Token and kube config flags',
  flags: [
    {
      name: 'signing-key-secret',
      field: 'signingKeySecret',
      kind: 'string',
      usage:
        'Host Secret <namespace>/<name> that keeps the key signing direct cluster endpoint tokens, shared by all replicas (created when missing). Without a host cluster, or when empty: <data-dir>/tokens.',
      default: '',
    },
    {
      name: 'token-issuer',
      field: 'tokenIssuer',
      kind: 'string',
      usage:
        "Issuer (iss) of direct cluster endpoint tokens: the https URL under which connected clusters find /.well-known/openid-configuration and the keys, e.g. https://platform.example.com/kubernetes/management. Empty: this server's own address, https://<bind address, or the host name when bound to all interfaces>:<port>/kubernetes/management. Set it when clients reach the server under another name, and with several replicas.",
      default: '',
    },
    {
      name: 'max-token-ttl',
      field: 'maxTokenTtlMs',
      kind: 'duration',
      usage:
        'Longest lifetime a direct cluster endpoint token may ask for (a Go duration such as 24h; at least 1s). Retired signing keys verify this long after a rotation.',
      default: 24 * 3_600_000,
    },
    {
      name: 'signing-key-rotation-period',
      field: 'signingKeyRotationPeriodMs',
      kind: 'duration',
      usage:
        'Age at which the token signing key is replaced by a new one (the old one keeps verifying for --max-token-ttl). 0: never.',
      default: 720 * 3_600_000,
    },
    {
      name: 'project-namespace-prefix',
      field: 'projectNamespacePrefix',
      kind: 'string',
      usage: 'Prefix of project namespaces: virtual cluster instances of project P live in <prefix>P.',
      default: 'p-',
    },
    {
      name: 'ingress-suffix',
      field: 'ingressSuffix',
      kind: 'string',
      usage:
        'Domain suffix of virtual cluster ingress hosts, <instance>-<project>.<suffix>, used by the kubeconfig subresource. Empty: instances must name their host.',
      default: '',
    },
    {
      name: 'csr-signer-name',
      field: 'csrSignerName',
      kind: 'string',
      usage:
        'Signer of the host CertificateSigningRequests for client certificates in virtual cluster kube configs.',
      default: 'kubernetes.io/kube-apiserver-client',
    },
    {
      name: 'csr-timeout',
      field: 'csrTimeoutMs',
      kind: 'duration',
      usage: 'How long to wait for the host signer to issue a kube config client certificate.',
      default: 30_000,
    },
  ],
  complete(v) {
    v.signingKeySecret = v.signingKeySecret.trim();
    v.tokenIssuer = v.tokenIssuer.trim().replace(/\/+$/, '');
    v.projectNamespacePrefix = v.projectNamespacePrefix.trim();
    v.ingressSuffix = v.ingressSuffix.trim().replace(/^\.+/, '');
    v.csrSignerName = v.csrSignerName.trim();
  },
  validate(v) {
    const errs: string[] = [];
    if (v.signingKeySecret !== '') {
      if (!parseNamespacedName(v.signingKeySecret)) {
        errs.push(`--signing-key-secret: "${v.signingKeySecret}" must be <namespace>/<name> of a Secret`);
      }
    }
    if (v.tokenIssuer !== '') {
      let url: URL | undefined;
      try {
        url = new URL(v.tokenIssuer);
      } catch {
        url = undefined;
      }
      if (!url || url.protocol !== 'https:' || url.search !== '' || url.hash !== '') {
        errs.push(`--token-issuer: "${v.tokenIssuer}" must be an https URL without query or fragment`);
      }
    }
    if (!Number.isFinite(v.maxTokenTtlMs) || v.maxTokenTtlMs < 1000) {
      errs.push('--max-token-ttl: must be at least 1s');
    }
    if (!Number.isFinite(v.signingKeyRotationPeriodMs) || v.signingKeyRotationPeriodMs < 0) {
      errs.push('--signing-key-rotation-period: must not be negative');
    } else if (v.signingKeyRotationPeriodMs > 0 && v.signingKeyRotationPeriodMs < 60_000) {
      errs.push('--signing-key-rotation-period: must be 0 (never) or at least 1m');
    }
    if (v.projectNamespacePrefix !== '' && !/^[a-z0-9]([-a-z0-9]*)?$/.test(v.projectNamespacePrefix)) {
      errs.push(
        `--project-namespace-prefix: "${v.projectNamespacePrefix}" must start a namespace name (lower case letters, digits and '-')`,
      );
    } else if (v.projectNamespacePrefix.length > 62) {
      errs.push('--project-namespace-prefix: must leave room for a project name in 63 characters');
    }
    if (v.ingressSuffix !== '' && !isSubdomain(v.ingressSuffix)) {
      errs.push(`--ingress-suffix: "${v.ingressSuffix}" must be a DNS domain, e.g. vcluster.example.com`);
    }
    if (!SIGNER_NAME.test(v.csrSignerName)) {
      errs.push(
        `--csr-signer-name: "${v.csrSignerName}" must be a signer name <domain>/<name>, e.g. kubernetes.io/kube-apiserver-client`,
      );
    }
    if (!Number.isFinite(v.csrTimeoutMs) || v.csrTimeoutMs < 1000) {
      errs.push('--csr-timeout: must be at least 1s');
    }
    return errs;
  },
} satisfies OptionGroup<TokenOptionValues>;
