// Who a caller is: client certificates, the front proxy's request headers
// (k8s.io/apiserver's ClientCertAuthenticationOptions and RequestHeaderAuthenticationOptions)
// and how often an access key's use is recorded.

import type { OptionGroup } from './option-group.js';
import { fileProblems } from './validation.js';

export interface AuthenticationOptionValues {
  clientCaFile: string;
  requestheaderClientCaFile: string;
  requestheaderAllowedNames: string[];
  requestheaderUsernameHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  requestheaderUidHeaders: string[];
  /** At most one status.lastActivity write per key per this many ms. */
  accessKeyActivityIntervalMs: number;
}

/** An HTTP header name's characters (RFC 9110 token). */
const HEADER_NAME_PREFIX = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export const authenticationOptions = {
  title: 'Authentication flags',
  flags: [
    {
      name: 'client-ca-file',
      field: 'clientCaFile',
      kind: 'string',
      usage:
        'PEM CA bundle whose client certificates authenticate as CN = user, O = groups (read again when the file changes). Empty: the client-ca-file of kube-system/extension-apiserver-authentication on the host cluster (watched), else none.',
      default: '',
    },
    {
      name: 'requestheader-client-ca-file',
      field: 'requestheaderClientCaFile',
      kind: 'string',
      usage:
        "PEM CA bundle that signs the front proxy's client certificate; read again when the file changes; makes the --requestheader-* flags the only source. Empty: read kube-system/extension-apiserver-authentication on the host cluster (watched).",
      default: '',
    },
    {
      name: 'requestheader-allowed-names',
      field: 'requestheaderAllowedNames',
      kind: 'list',
      usage: "Comma-separated common names the front proxy's certificate may have. Empty: any the CA signed.",
      default: [],
    },
    {
      name: 'requestheader-username-headers',
      field: 'requestheaderUsernameHeaders',
      kind: 'list',
      usage: 'Headers holding the user name, first non-empty wins.',
      // Empty means the front-proxy settings' own default (authentication/front-proxy-config.ts).
      default: [],
      defaultText: 'X-Remote-User',
    },
    {
      name: 'requestheader-group-headers',
      field: 'requestheaderGroupHeaders',
      kind: 'list',
      usage: 'Headers holding the groups, every value counts.',
      default: [],
      defaultText: 'X-Remote-Group',
    },
    {
      name: 'requestheader-extra-headers-prefix',
      field: 'requestheaderExtraHeadersPrefix',
      kind: 'list',
      usage: 'Header prefixes whose suffix names an extra (percent-decoded, lower-cased).',
      default: [],
      defaultText: 'X-Remote-Extra-',
    },
    {
      name: 'requestheader-uid-headers',
      field: 'requestheaderUidHeaders',
      kind: 'list',
      usage: "Headers holding the user's UID, first non-empty wins. Empty: none.",
      default: [],
    },
    {
      name: 'access-key-activity-interval',
      field: 'accessKeyActivityIntervalMs',
      kind: 'duration',
      usage:
        "How often at most an access key's status.lastActivity is written while the key is in use (a Go duration such as 60s or 5m; at least 1s).",
      default: 60_000,
    },
  ],
  complete() {},
  validate(v) {
    const errs = fileProblems([
      ['--client-ca-file', v.clientCaFile],
      ['--requestheader-client-ca-file', v.requestheaderClientCaFile],
    ]);
    for (const p of v.requestheaderExtraHeadersPrefix) {
      if (!HEADER_NAME_PREFIX.test(p))
        errs.push(`--requestheader-extra-headers-prefix: "${p}" is not a header name prefix`);
    }
    if (!Number.isFinite(v.accessKeyActivityIntervalMs) || v.accessKeyActivityIntervalMs < 1000) {
      errs.push('--access-key-activity-interval: must be at least 1s');
    }
    return errs;
  },
} satisfies OptionGroup<AuthenticationOptionValues>;
