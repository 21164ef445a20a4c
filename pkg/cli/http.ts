// One HTTPS request to the platform, with the trust the login chose (a CA, the
// system's CAs, or --insecure). A request that never gets an answer is turned into
// a message that says which of the usual reasons it was: the server cannot be
// reached, its certificate is signed by an authority we do not know (with the hint
// to pass the CA or --insecure), the name does not match, or it timed out.

import { request } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { CliError } from './errors.js';

export interface Endpoint {
  /** `https://host[:port][/path]`; request paths are appended to it. */
  readonly baseUrl: string;
  readonly token?: string | undefined;
  /** PEM bundle to trust instead of the system's CAs. */
  readonly ca?: string | undefined;
  readonly insecure?: boolean | undefined;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface RequestOptions {
  readonly body?: string | Buffer | undefined;
  readonly contentType?: string | undefined;
  readonly accept?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

const UNKNOWN_AUTHORITY = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/** Why a request got no HTTP answer, for a person. `hint` says how to fix trust for this command. */
export function transportErrorMessage(err: unknown, baseUrl: string, hint: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const detail = err instanceof Error ? err.message : String(err);
  if (UNKNOWN_AUTHORITY.has(code)) {
    return `the certificate of ${baseUrl} is signed by an unknown authority (${code}); ${hint}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the certificate of ${baseUrl} is not valid for that name (${detail}); use the name the certificate was issued for`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `the certificate of ${baseUrl} is not valid now (${code})`;
  }
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) {
    return `cannot speak TLS with ${baseUrl} (${code}): is it an https endpoint?`;
  }
  if (UNREACHABLE.has(code))
    return `cannot reach the platform at ${baseUrl} (${code}): is the URL right and the server up?`;
  return `cannot reach the platform at ${baseUrl}: ${detail}`;
}

export class TransportError extends CliError {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export function httpRequest(
  endpoint: Endpoint,
  method: string,
  path: string,
  options: RequestOptions = {},
  trustHint = 'pass its CA with --ca-file <file>, or --insecure to skip verification',
): Promise<HttpResponse> {
  const headers: Record<string, string> = {
    Accept: options.accept ?? 'application/json',
    'User-Agent': 'platform-cli',
  };
  if (endpoint.token) headers['Authorization'] = `Bearer ${endpoint.token}`;
  const payload = options.body === undefined ? undefined : Buffer.from(options.body);
  if (payload) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  const url = new URL(endpoint.baseUrl + path);
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers,
        ca: endpoint.ca || undefined,
        rejectUnauthorized: !endpoint.insecure,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', (err) =>
          reject(new TransportError(transportErrorMessage(err, endpoint.baseUrl, trustHint), 'ERESPONSE')),
        );
      },
    );
    req.on('timeout', () => {
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000}s`), { code: 'ETIMEDOUT' }));
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(new TransportError(transportErrorMessage(err, endpoint.baseUrl, trustHint), err.code ?? '')),
    );
    req.end(payload);
  });
}
