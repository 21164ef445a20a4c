// Every check of the flag values, returning all problems at once (a user fixing a
// deployment should not have to restart once per mistake). Pure apart from
// looking at the files the flags name.

import { accessSync, constants, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseNamespacedName } from '../../apis/meta/namespaced-name.js';
import { isDNS1123Subdomain } from '../../apis/meta/validation.js';
import { isLogLevel, LOG_LEVELS } from './logger.js';
import type { ServerOptionValues } from './options.js';

export const STORAGE_BACKENDS = ['sqlite', 'etcd3'] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

/** A flag's value is a DNS-1123 subdomain (apimachinery's IsDNS1123Subdomain finds no problem). */
function isSubdomain(value: string): boolean {
  return isDNS1123Subdomain(value).length === 0;
}

/** Room left in an object name after the admin user's name, for `<admin>-bootstrap`. */
const BOOTSTRAP_SUFFIX = '-bootstrap';

export function validateOptions(v: ServerOptionValues): string[] {
  const errs: string[] = [];

  if (!Number.isInteger(v.securePort) || v.securePort < 0 || v.securePort > 65535) {
    errs.push(`--secure-port: ${v.securePort} is not a port number (an integer from 0 to 65535)`);
  }
  if (isIP(v.bindAddress) === 0) {
    errs.push(
      `--bind-address: "${v.bindAddress}" is not an IP address (use 0.0.0.0 or :: for all interfaces)`,
    );
  }

  if (v.dataDir === '') errs.push('--data-dir: must not be empty');
  else {
    const st = statOrUndefined(v.dataDir);
    if (st && !st.isDirectory()) errs.push(`--data-dir: "${v.dataDir}" exists and is not a directory`);
  }

  if (!(STORAGE_BACKENDS as readonly string[]).includes(v.storageBackend)) {
    errs.push(
      `--storage-backend: unknown backend "${v.storageBackend}" (supported: ${STORAGE_BACKENDS.join(', ')})`,
    );
  }
  if (v.storageBackend === 'etcd3') {
    if (v.etcdServers.length === 0) errs.push('--etcd-servers: required with --storage-backend etcd3');
    for (const server of v.etcdServers) {
      const problem = etcdServerProblem(server);
      if (problem) errs.push(`--etcd-servers: "${server}" ${problem}`);
    }
    if ((v.etcdCertFile === '') !== (v.etcdKeyFile === '')) {
      errs.push('--etcd-certfile and --etcd-keyfile: give both or neither');
    }
    if (v.etcdCertFile !== '' && v.etcdCaFile === '') {
      errs.push("--etcd-certfile: needs --etcd-cafile (the CA that signed etcd's certificate)");
    }
    for (const [flag, file] of [
      ['--etcd-cafile', v.etcdCaFile],
      ['--etcd-certfile', v.etcdCertFile],
      ['--etcd-keyfile', v.etcdKeyFile],
    ] as const) {
      const problem = file === '' ? undefined : unreadable(file);
      if (problem) errs.push(`${flag}: ${problem}`);
    }
  }
  if (!v.etcdPrefix.startsWith('/')) errs.push(`--etcd-prefix: "${v.etcdPrefix}" must start with "/"`);

  if (!isSubdomain(v.apiGroup) || !v.apiGroup.includes('.')) {
    errs.push(
      `--api-group: "${v.apiGroup}" must be a DNS subdomain with at least one dot (lower case letters, digits, '-' and '.', e.g. management.example.com)`,
    );
  }

  if ((v.tlsCertFile === '') !== (v.tlsPrivateKeyFile === '')) {
    errs.push('--tls-cert-file and --tls-private-key-file: give both or neither');
  }
  for (const [flag, file] of [
    ['--tls-cert-file', v.tlsCertFile],
    ['--tls-private-key-file', v.tlsPrivateKeyFile],
  ] as const) {
    const problem = file === '' ? undefined : unreadable(file);
    if (problem) errs.push(`${flag}: ${problem}`);
  }

  if (!isSubdomain(v.adminUsername) || v.adminUsername.length + BOOTSTRAP_SUFFIX.length > 253) {
    errs.push(
      `--admin-username: "${v.adminUsername}" must be a valid user name (lower case letters, digits, '-' and '.', at most ${253 - BOOTSTRAP_SUFFIX.length} characters)`,
    );
  }

  if (!Number.isFinite(v.accessKeyActivityIntervalMs) || v.accessKeyActivityIntervalMs < 1000) {
    errs.push('--access-key-activity-interval: must be at least 1s');
  }

  errs.push(...validateTokenOptions(v));

  if (!isLogLevel(v.logLevel)) {
    errs.push(`--log-level: unknown level "${v.logLevel}" (supported: ${LOG_LEVELS.join(', ')})`);
  }
  return errs;
}

/** `<domain>/<path>`, as Kubernetes signer names are (kubernetes.io/kube-apiserver-client). */
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[-A-Za-z0-9_./]+$/;

/** The flags of tokens and virtual cluster kube configs (issue 5). */
function validateTokenOptions(v: ServerOptionValues): string[] {
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
  if (!Number.isFinite(v.requestTimeoutMs) || v.requestTimeoutMs < 1000) {
    errs.push('--request-timeout: must be at least 1s');
  }
  if (!Number.isInteger(v.minRequestTimeoutSeconds) || v.minRequestTimeoutSeconds < 1) {
    errs.push('--min-request-timeout: must be a positive number of seconds');
  }
  if (!Number.isFinite(v.csrTimeoutMs) || v.csrTimeoutMs < 1000) {
    errs.push('--csr-timeout: must be at least 1s');
  }
  return errs;
}

function etcdServerProblem(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return 'is not a URL (expected scheme://host:port, e.g. http://127.0.0.1:2379)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.hostname === '') return 'has no host';
  return undefined;
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function unreadable(file: string): string | undefined {
  try {
    accessSync(file, constants.R_OK);
  } catch {
    return `cannot read "${file}"`;
  }
  if (!statSync(file).isFile()) return `"${file}" is not a file`;
  return undefined;
}
