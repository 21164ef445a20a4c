// Command-line flags, named as kube-apiserver names them so operators need not
// learn new ones. Parsing only turns argv into option values and notes what it
// cannot read (unknown flags included); defaults are filled by
// ServerOptions.complete() and every other check lives in validation.ts, so a user
// sees all problems at once instead of one per try.

import { parseDuration } from './duration-flag.js';
import type { ServerOptionValues } from './options.js';

export interface FlagSpec {
  readonly name: string;
  readonly field: keyof ServerOptionValues;
  readonly kind: 'string' | 'port' | 'list' | 'duration' | 'bool' | 'int';
  readonly usage: string;
  readonly defaultText?: string;
}

/**
 * Every flag of the server, one plain entry each (add yours anywhere in the list).
 * The parser, --help and the README's flag table (`node dist/hack/flags-table.js`)
 * are all generated from it.
 */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: 'secure-port',
    field: 'securePort',
    kind: 'port',
    usage: 'The port on which to serve HTTPS. 0 picks a free port (logged in the "serving" line).',
    defaultText: '8443',
  },
  {
    name: 'bind-address',
    field: 'bindAddress',
    kind: 'string',
    usage: 'The IP address on which to listen for the --secure-port port (0.0.0.0 or :: for all interfaces).',
    defaultText: '127.0.0.1',
  },
  {
    name: 'data-dir',
    field: 'dataDir',
    kind: 'string',
    usage: 'Directory for the embedded database, generated certificates and the admin kube config.',
    defaultText: './data',
  },
  {
    name: 'storage-backend',
    field: 'storageBackend',
    kind: 'string',
    usage: 'The storage backend: sqlite (embedded, one replica) or etcd3 (several replicas).',
    defaultText: 'sqlite',
  },
  {
    name: 'etcd-servers',
    field: 'etcdServers',
    kind: 'list',
    usage: 'Comma-separated etcd URLs (scheme://ip:port) for --storage-backend etcd3.',
  },
  {
    name: 'etcd-prefix',
    field: 'etcdPrefix',
    kind: 'string',
    usage: 'The prefix under which every object key is stored.',
    defaultText: '/registry',
  },
  {
    name: 'etcd-cafile',
    field: 'etcdCaFile',
    kind: 'string',
    usage: 'SSL certificate authority file used to secure etcd communication.',
  },
  {
    name: 'etcd-certfile',
    field: 'etcdCertFile',
    kind: 'string',
    usage: 'SSL certification file used to secure etcd communication.',
  },
  {
    name: 'etcd-keyfile',
    field: 'etcdKeyFile',
    kind: 'string',
    usage: 'SSL key file used to secure etcd communication.',
  },
  {
    name: 'api-group',
    field: 'apiGroup',
    kind: 'string',
    usage: 'The API group served (a DNS subdomain with at least one dot).',
    defaultText: 'management.platform.dev',
  },
  {
    name: 'tls-cert-file',
    field: 'tlsCertFile',
    kind: 'string',
    usage:
      'PEM serving certificate (with intermediates). Without it a CA and certificate are generated in <data-dir>/pki.',
  },
  {
    name: 'tls-private-key-file',
    field: 'tlsPrivateKeyFile',
    kind: 'string',
    usage: 'PEM private key matching --tls-cert-file.',
  },
  {
    name: 'admin-username',
    field: 'adminUsername',
    kind: 'string',
    usage:
      'Name of the User created with an access key on first start, when no users exist. A start that finds this user with no usable key and no admin kube config (a first start that stopped half-way) issues the key and writes the file; an existing admin.kubeconfig is never overwritten.',
    defaultText: 'admin',
  },
  {
    name: 'admin-role',
    field: 'adminRole',
    kind: 'string',
    usage:
      "Name of the cluster role whose holders are platform administrators: Users and Teams naming it in spec.clusterRoles (a Team's members too). Empty: none.",
  },
  {
    name: 'access-key-activity-interval',
    field: 'accessKeyActivityIntervalMs',
    kind: 'duration',
    usage:
      "How often at most an access key's status.lastActivity is written while the key is in use (a Go duration such as 60s or 5m; at least 1s).",
    defaultText: '1m0s',
  },
  {
    name: 'watch-cache',
    field: 'watchCache',
    kind: 'bool',
    usage:
      'Serve gets, lists and watches from memory, kept current by one storage watch per resource. --watch-cache=false reads storage for every request.',
    defaultText: 'true',
  },
  {
    name: 'enable-garbage-collector',
    field: 'enableGarbageCollector',
    kind: 'bool',
    usage:
      'Run the garbage collector inside the server: objects whose owners (metadata.ownerReferences) are all gone are deleted, and the orphan and foregroundDeletion finalizers are honoured. With it off, and no host cluster, a delete adds no deletion finalizer. Off by default when a host cluster is configured, whose kube-controller-manager collects garbage instead.',
    defaultText: 'true without a host cluster',
  },
  // ---- encryption at rest (issue 14) ----
  {
    name: 'encryption-provider-config',
    field: 'encryptionProviderConfig',
    kind: 'string',
    usage:
      "kube-apiserver's EncryptionConfiguration (apiserver.config.k8s.io/v1) file: which resources are encrypted at rest and with which providers (the first encrypts, each is tried to decrypt). Empty: with --storage-backend sqlite, Global Secrets are encrypted with a secretbox key generated into <data-dir>/pki/encryption-config.yaml; with etcd3, nothing is encrypted.",
  },
  {
    name: 'encryption-provider-config-automatic-reload',
    field: 'encryptionProviderConfigAutomaticReload',
    kind: 'bool',
    usage:
      'Read the encryption provider configuration again when its file changes (checked every few seconds); a file that does not load keeps the configuration in force. false: only at start.',
    defaultText: 'false',
  },
  // ---- tokens and virtual cluster kube configs (issue 5) ----
  {
    name: 'signing-key-secret',
    field: 'signingKeySecret',
    kind: 'string',
    usage:
      'Host Secret <namespace>/<name> that keeps the key signing direct cluster endpoint tokens, shared by all replicas (created when missing). Without a host cluster, or when empty: <data-dir>/tokens.',
  },
  {
    name: 'token-issuer',
    field: 'tokenIssuer',
    kind: 'string',
    usage:
      "Issuer (iss) of direct cluster endpoint tokens: the https URL under which connected clusters find /.well-known/openid-configuration and the keys, e.g. https://platform.example.com/kubernetes/management. Empty: this server's own address, https://<bind address, or the host name when bound to all interfaces>:<port>/kubernetes/management. Set it when clients reach the server under another name, and with several replicas.",
  },
  {
    name: 'max-token-ttl',
    field: 'maxTokenTtlMs',
    kind: 'duration',
    usage:
      'Longest lifetime a direct cluster endpoint token may ask for (a Go duration such as 24h; at least 1s). Retired signing keys verify this long after a rotation.',
    defaultText: '24h0m0s',
  },
  {
    name: 'signing-key-rotation-period',
    field: 'signingKeyRotationPeriodMs',
    kind: 'duration',
    usage:
      'Age at which the token signing key is replaced by a new one (the old one keeps verifying for --max-token-ttl). 0: never.',
    defaultText: '720h0m0s',
  },
  {
    name: 'project-namespace-prefix',
    field: 'projectNamespacePrefix',
    kind: 'string',
    usage: 'Prefix of project namespaces: virtual cluster instances of project P live in <prefix>P.',
    defaultText: 'p-',
  },
  {
    name: 'ingress-suffix',
    field: 'ingressSuffix',
    kind: 'string',
    usage:
      'Domain suffix of virtual cluster ingress hosts, <instance>-<project>.<suffix>, used by the kubeconfig subresource. Empty: instances must name their host.',
  },
  {
    name: 'csr-signer-name',
    field: 'csrSignerName',
    kind: 'string',
    usage:
      'Signer of the host CertificateSigningRequests for client certificates in virtual cluster kube configs.',
    defaultText: 'kubernetes.io/kube-apiserver-client',
  },
  {
    name: 'csr-timeout',
    field: 'csrTimeoutMs',
    kind: 'duration',
    usage: 'How long to wait for the host signer to issue a kube config client certificate.',
    defaultText: '30s',
  },
  // ---- the host cluster: front-proxy authentication, delegation, bootstrap secret (issue 3) ----
  {
    name: 'host-kubeconfig',
    field: 'hostKubeconfig',
    kind: 'string',
    usage:
      'Kube config of the host cluster (TokenReview, SubjectAccessReview, the front-proxy ConfigMap, Secrets, CSRs). Empty: the service account when running in a pod, else no host cluster.',
  },
  {
    name: 'bootstrap-secret',
    field: 'bootstrapSecret',
    kind: 'string',
    usage:
      "Host Secret <namespace>/<name> that receives the first administrator's access key (key accessKey) instead of <data-dir>/admin.kubeconfig, when a host cluster is configured.",
  },
  {
    name: 'client-ca-file',
    field: 'clientCaFile',
    kind: 'string',
    usage:
      'PEM CA bundle whose client certificates authenticate as CN = user, O = groups (read again when the file changes). Empty: the client-ca-file of kube-system/extension-apiserver-authentication on the host cluster (watched), else none.',
  },
  {
    name: 'requestheader-client-ca-file',
    field: 'requestheaderClientCaFile',
    kind: 'string',
    usage:
      "PEM CA bundle that signs the front proxy's client certificate; read again when the file changes; makes the --requestheader-* flags the only source. Empty: read kube-system/extension-apiserver-authentication on the host cluster (watched).",
  },
  {
    name: 'requestheader-allowed-names',
    field: 'requestheaderAllowedNames',
    kind: 'list',
    usage: "Comma-separated common names the front proxy's certificate may have. Empty: any the CA signed.",
  },
  {
    name: 'requestheader-username-headers',
    field: 'requestheaderUsernameHeaders',
    kind: 'list',
    usage: 'Headers holding the user name, first non-empty wins.',
    defaultText: 'X-Remote-User',
  },
  {
    name: 'requestheader-group-headers',
    field: 'requestheaderGroupHeaders',
    kind: 'list',
    usage: 'Headers holding the groups, every value counts.',
    defaultText: 'X-Remote-Group',
  },
  {
    name: 'requestheader-extra-headers-prefix',
    field: 'requestheaderExtraHeadersPrefix',
    kind: 'list',
    usage: 'Header prefixes whose suffix names an extra (percent-decoded, lower-cased).',
    defaultText: 'X-Remote-Extra-',
  },
  {
    name: 'requestheader-uid-headers',
    field: 'requestheaderUidHeaders',
    kind: 'list',
    usage: "Headers holding the user's UID, first non-empty wins. Empty: none.",
  },
  {
    name: 'request-timeout',
    field: 'requestTimeoutMs',
    kind: 'duration',
    usage:
      'How long a request that is not long-running (every request but a watch) may take before it is answered 504 Timeout and its work abandoned (a Go duration such as 60s; at least 1s). A request may ask for less with ?timeout=.',
    defaultText: '1m0s',
  },
  {
    name: 'min-request-timeout',
    field: 'minRequestTimeoutSeconds',
    kind: 'int',
    usage:
      'Seconds a watch without timeoutSeconds stays open at least: it ends after a random time between this and twice this, so watches spread over replicas.',
    defaultText: '1800',
  },
  {
    name: 'max-requests-inflight',
    field: 'maxRequestsInflight',
    kind: 'int',
    usage:
      'Reads (get, list) executing at once. More wait in fair queues per user, and are answered 429 Too Many Requests when their queue is full or after a quarter of --request-timeout. Watches, system:masters and platform:admins are exempt. 0 disables the limit.',
    defaultText: '400',
  },
  {
    name: 'max-mutating-requests-inflight',
    field: 'maxMutatingRequestsInflight',
    kind: 'int',
    usage:
      'Writes (create, update, patch, delete) executing at once, queued and limited as --max-requests-inflight. 0 disables the limit.',
    defaultText: '200',
  },
  {
    name: 'log-level',
    field: 'logLevel',
    kind: 'string',
    usage: 'Least severe level logged: debug, info, warn or error. Logs are JSON lines on stdout.',
    defaultText: 'info',
  },
];

export interface ParsedFlags {
  readonly help: boolean;
  /** Only the flags that were given. */
  readonly values: Partial<ServerOptionValues>;
  /**
   * Everything wrong with the command line: unknown flags, stray arguments, missing
   * values, values that could not be converted. Reported by validate() with the rest,
   * so a user sees every problem at once.
   */
  readonly problems: readonly string[];
}

const BOOLEAN_TRUE = /^(true|t|1)$/i;
const BOOLEAN_FALSE = /^(false|f|0)$/i;

/**
 * Parses `--flag=value` and `--flag value`, as kube-apiserver's flags (spf13/pflag)
 * read them: a boolean flag given bare (`--watch-cache`) means true and takes no
 * separate value, the last of a repeated flag wins. Never throws: every problem is
 * collected.
 */
export function parseFlags(argv: readonly string[]): ParsedFlags {
  const byName = new Map(FLAGS.map((f) => [f.name, f]));
  const values: Partial<ServerOptionValues> = {};
  const problems: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      problems.push(`unexpected argument "${arg}": every setting is a --flag`);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^--?/, '');
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    const flag = byName.get(name);
    if (!flag) {
      problems.push(
        name === 'help' ? '--help takes no value' : `unknown flag: ${arg.slice(0, eq < 0 ? undefined : eq)}`,
      );
      // `--unknown value`: the value belongs to the unknown flag, not a stray argument.
      if (value === undefined && i + 1 < argv.length && !(argv[i + 1] ?? '').startsWith('-')) i++;
      continue;
    }
    if (value === undefined && flag.kind === 'bool') value = 'true';
    if (value === undefined) {
      if (i + 1 >= argv.length) {
        problems.push(`flag needs an argument: --${flag.name}`);
        continue;
      }
      value = argv[++i] ?? '';
    }
    const problem = setFlag(values, flag, value);
    if (problem) problems.push(problem);
  }
  return { help, values, problems };
}

/** Converts and stores one flag's value; returns the problem when it cannot. */
function setFlag(values: Partial<ServerOptionValues>, f: FlagSpec, raw: string): string | undefined {
  const out = values as Record<string, unknown>;
  switch (f.kind) {
    case 'string':
      out[f.field] = raw;
      return undefined;
    case 'list':
      out[f.field] = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      return undefined;
    case 'duration': {
      const ms = parseDuration(raw);
      if (ms === undefined)
        return `--${f.name}: "${raw}" is not a duration (a number with a unit, such as 60s or 5m)`;
      out[f.field] = ms;
      return undefined;
    }
    case 'bool':
      if (BOOLEAN_TRUE.test(raw.trim())) out[f.field] = true;
      else if (BOOLEAN_FALSE.test(raw.trim())) out[f.field] = false;
      else return `--${f.name}: "${raw}" is not a boolean (true or false)`;
      return undefined;
    case 'port':
      if (!/^\d+$/.test(raw.trim()))
        return `--${f.name}: "${raw}" is not a port number (an integer from 0 to 65535)`;
      out[f.field] = Number(raw.trim());
      return undefined;
    case 'int':
      if (!/^-?\d+$/.test(raw.trim())) return `--${f.name}: "${raw}" is not an integer`;
      out[f.field] = Number(raw.trim());
      return undefined;
  }
}

/** The --help text. */
export function usage(program = 'platform-apiserver'): string {
  const lines = [
    `Usage: ${program} [flags]`,
    '',
    'Serves the platform management API over HTTPS. Flags take --flag=value or --flag value.',
    '',
    'Flags:',
  ];
  const width = Math.max(...FLAGS.map((f) => f.name.length)) + 2;
  for (const f of FLAGS) {
    const def = f.defaultText ? ` (default ${f.defaultText})` : '';
    lines.push(`  --${f.name.padEnd(width)}${f.usage}${def}`);
  }
  lines.push(`  --${'help'.padEnd(width)}Show this help and exit.`);
  return lines.join('\n') + '\n';
}
