// Front-proxy (request-header) authentication: how a host cluster's aggregator
// tells an aggregated API server who the caller is (k8s.io/apiserver
// authentication/request/headerrequest). The aggregator connects with its proxy
// client certificate; when that certificate chains to the request-header CA and its
// common name is allowed, the X-Remote-User / X-Remote-Group / X-Remote-Extra-*
// headers name the caller:
//
//   user    the first non-empty value among the username headers
//   groups  every value of every group header (one header line per group)
//   extra   X-Remote-Extra-<key>, key lower-cased and percent-decoded
//   uid     the first non-empty value among the uid headers, when configured
//
// From anyone else those headers mean nothing: they are ignored, and stripped from
// the request on every path, so nothing later can mistake them for the truth.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';
import {
  DEFAULT_EXTRA_HEADER_PREFIXES,
  DEFAULT_GROUP_HEADERS,
  DEFAULT_USERNAME_HEADERS,
  type RequestHeaderConfig,
  type RequestHeaderConfigSource,
} from './front-proxy-config.js';
import {
  checkAllowedName,
  peerCertificateChain,
  verifyClientChain,
  type VerifyResult,
} from './front-proxy-x509.js';
import type { Logger } from '../util/log/index.js';

const AUTHENTICATED_GROUP = 'system:authenticated';

/** Stripped even when front-proxy authentication is off or configured with other names. */
const ALWAYS_STRIPPED = [...DEFAULT_USERNAME_HEADERS, ...DEFAULT_GROUP_HEADERS, 'X-Remote-Uid'].map((h) =>
  h.toLowerCase(),
);
const ALWAYS_STRIPPED_PREFIXES = DEFAULT_EXTRA_HEADER_PREFIXES.map((h) => h.toLowerCase());

export class FrontProxyAuthenticator implements Authenticator {
  /** A connection's certificate is verified once per settings generation, not once per request. */
  private readonly verified = new WeakMap<
    object,
    { generation: number; expires: number; result: VerifyResult }
  >();

  constructor(
    private readonly source: RequestHeaderConfigSource,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate(req: IncomingMessage): AuthenticatedUser | null {
    const config = this.source.current();
    const headers = takeIdentityHeaders(req, config);
    if (!config || !headers) return null;

    const result = this.verify(req.socket as TLSSocket, config);
    if (!result.ok) {
      // Not a 401: another credential on the request (a bearer token) may still be good. Debug
      // level: anyone can send these headers, and a log line per forged request helps nobody.
      this.logger?.debug('front-proxy: identity headers ignored', { reason: result.reason });
      return null;
    }
    const name = first(headers, config.usernameHeaders);
    if (name === '') return null;
    const groups = all(headers, config.groupHeaders);
    if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
    const extra = extras(headers, config.extraHeaderPrefixes);
    const uid = first(headers, config.uidHeaders);
    return {
      name,
      groups,
      ...(uid ? { uid } : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
      hostIdentity: true,
    };
  }

  private verify(socket: TLSSocket, config: RequestHeaderConfig): VerifyResult {
    const cached = this.verified.get(socket);
    const now = this.now();
    if (cached && cached.generation === config.generation && now <= cached.expires) return cached.result;
    const chain = peerCertificateChain(socket);
    let result = verifyClientChain(chain, config.roots, now);
    if (result.ok) result = checkAllowedName(result.commonName, config.allowedNames);
    // Only successes are kept, until the leaf expires or the settings change.
    const leaf = chain[0];
    if (result.ok && leaf)
      this.verified.set(socket, { generation: config.generation, expires: Date.parse(leaf.validTo), result });
    return result;
  }
}

type HeaderValues = Map<string, string[]>;

function isIdentityHeader(name: string, config: RequestHeaderConfig | undefined): boolean {
  if (ALWAYS_STRIPPED.includes(name) || ALWAYS_STRIPPED_PREFIXES.some((p) => name.startsWith(p))) return true;
  if (!config) return false;
  return (
    config.usernameHeaders.includes(name) ||
    config.groupHeaders.includes(name) ||
    config.uidHeaders.includes(name) ||
    config.extraHeaderPrefixes.some((p) => name.startsWith(p))
  );
}

/**
 * Removes every identity header from the request (headers, headersDistinct and
 * rawHeaders) and returns their values, one entry per header line; undefined when
 * there were none.
 */
function takeIdentityHeaders(
  req: IncomingMessage,
  config: RequestHeaderConfig | undefined,
): HeaderValues | undefined {
  const raw = req.rawHeaders;
  let values: HeaderValues | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    if (!isIdentityHeader(name, config)) continue;
    values ??= new Map();
    const list = values.get(name) ?? [];
    list.push(raw[i + 1] ?? '');
    values.set(name, list);
  }
  // Nearly every request carries none: then nothing is copied.
  if (!values) return undefined;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!values.has(name.toLowerCase())) kept.push(name, raw[i + 1] ?? '');
  }
  for (const name of values.keys()) {
    delete req.headers[name];
    delete (req.headersDistinct as Record<string, string[] | undefined>)[name];
  }
  req.rawHeaders = kept;
  return values;
}

function first(headers: HeaderValues, names: readonly string[]): string {
  for (const name of names) {
    const value = headers.get(name)?.find((v) => v !== '');
    if (value) return value;
  }
  return '';
}

function all(headers: HeaderValues, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of names) for (const v of headers.get(name) ?? []) if (v !== '') out.push(v);
  return out;
}

function extras(headers: HeaderValues, prefixes: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of headers) {
    const prefix = prefixes.find((p) => name.startsWith(p));
    if (!prefix) continue;
    const key = unescapeExtraKey(name.slice(prefix.length)).toLowerCase();
    for (const v of values) if (v !== '') (out[key] ??= []).push(v);
  }
  return out;
}

/** url.PathUnescape, falling back to the raw key as upstream does. */
function unescapeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}
