// How the server serves HTTPS: port, address, certificate and the time a request
// may take (k8s.io/apiserver's SecureServingOptions, with kube-apiserver's
// --request-timeout and --min-request-timeout). The fixed limits of the listener
// (header timeout, idle timeout, header size) are kube-apiserver's constants and
// live with the listener in pkg/server/serve.ts.

import { isIP } from 'node:net';
import type { OptionGroup } from './option-group.js';
import { fileProblems } from './validation.js';

export interface ServingOptionValues {
  securePort: number;
  bindAddress: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** A request that is not long-running is answered 504 after this long. */
  requestTimeoutMs: number;
  /** Watches without timeoutSeconds end between this and twice this. */
  minRequestTimeoutSeconds: number;
  /** Reads (get, list) executing at once; more wait in fair queues, then 429. 0 = unlimited. */
  maxRequestsInflight: number;
  /** Writes executing at once, likewise. 0 = unlimited. */
  maxMutatingRequestsInflight: number;
}

export const servingOptions = {
  title: 'Secure serving flags',
  flags: [
    {
      name: 'secure-port',
      field: 'securePort',
      kind: 'port',
      usage: 'The port on which to serve HTTPS. 0 picks a free port (logged in the "serving" line).',
      default: 8443,
    },
    {
      name: 'bind-address',
      field: 'bindAddress',
      kind: 'string',
      usage:
        'The IP address on which to listen for the --secure-port port (0.0.0.0 or :: for all interfaces).',
      default: '127.0.0.1',
    },
    {
      name: 'tls-cert-file',
      field: 'tlsCertFile',
      kind: 'string',
      usage:
        'PEM serving certificate (with intermediates). Without it a CA and certificate are generated in <data-dir>/pki.',
      default: '',
    },
    {
      name: 'tls-private-key-file',
      field: 'tlsPrivateKeyFile',
      kind: 'string',
      usage: 'PEM private key matching --tls-cert-file.',
      default: '',
    },
    {
      name: 'request-timeout',
      field: 'requestTimeoutMs',
      kind: 'duration',
      usage:
        'How long a request that is not long-running (every request but a watch) may take before it is answered 504 Timeout and its work abandoned (a Go duration such as 60s; at least 1s). A request may ask for less with ?timeout=.',
      // kube-apiserver's --request-timeout default.
      default: 60_000,
    },
    {
      name: 'min-request-timeout',
      field: 'minRequestTimeoutSeconds',
      kind: 'int',
      usage:
        'Seconds a watch without timeoutSeconds stays open at least: it ends after a random time between this and twice this, so watches spread over replicas.',
      // kube-apiserver's --min-request-timeout default.
      default: 1800,
    },
    {
      name: 'max-requests-inflight',
      field: 'maxRequestsInflight',
      kind: 'int',
      usage:
        'Reads (get, list) executing at once. More wait in fair queues per user, and are answered 429 Too Many Requests when their queue is full or after a quarter of --request-timeout. Watches, system:masters and platform:admins are exempt. 0 disables the limit.',
      // kube-apiserver's default.
      default: 400,
    },
    {
      name: 'max-mutating-requests-inflight',
      field: 'maxMutatingRequestsInflight',
      kind: 'int',
      usage:
        'Writes (create, update, patch, delete) executing at once, queued and limited as --max-requests-inflight. 0 disables the limit.',
      // kube-apiserver's default.
      default: 200,
    },
  ],
  complete(v) {
    v.bindAddress = v.bindAddress.trim();
  },
  validate(v) {
    const errs: string[] = [];
    if (!Number.isInteger(v.securePort) || v.securePort < 0 || v.securePort > 65535) {
      errs.push(`--secure-port: ${v.securePort} is not a port number (an integer from 0 to 65535)`);
    }
    if (isIP(v.bindAddress) === 0) {
      errs.push(
        `--bind-address: "${v.bindAddress}" is not an IP address (use 0.0.0.0 or :: for all interfaces)`,
      );
    }
    if ((v.tlsCertFile === '') !== (v.tlsPrivateKeyFile === '')) {
      errs.push('--tls-cert-file and --tls-private-key-file: give both or neither');
    }
    errs.push(
      ...fileProblems([
        ['--tls-cert-file', v.tlsCertFile],
        ['--tls-private-key-file', v.tlsPrivateKeyFile],
      ]),
    );
    if (!Number.isFinite(v.requestTimeoutMs) || v.requestTimeoutMs < 1000) {
      errs.push('--request-timeout: must be at least 1s');
    }
    if (!Number.isInteger(v.minRequestTimeoutSeconds) || v.minRequestTimeoutSeconds < 1) {
      errs.push('--min-request-timeout: must be a positive number of seconds');
    }
    // upstream's ServerRunOptions.Validate wording.
    if (!Number.isInteger(v.maxRequestsInflight) || v.maxRequestsInflight < 0) {
      errs.push('--max-requests-inflight can not be negative value');
    }
    if (!Number.isInteger(v.maxMutatingRequestsInflight) || v.maxMutatingRequestsInflight < 0) {
      errs.push('--max-mutating-requests-inflight can not be negative value');
    }
    return errs;
  },
} satisfies OptionGroup<ServingOptionValues>;
