// TEST DOUBLE support: the pure pieces of kube-aggregator's wire behaviour that the
// aggregator double (aggregator.ts) uses, kept apart so they can be unit-tested
// without sockets. Never imported by production code.
//
//   - how the proxy re-encodes a query string (Go's url.Values.Encode: keys sorted,
//     QueryEscape), and which headers it drops or replaces;
//   - how client-go's SetAuthProxyHeaders names X-Remote-Extra-<key> headers;
//   - the discovery media type and how a legacy APIResourceList becomes a v2
//     version entry (apiserver endpoints.ConvertGroupVersionIntoToDiscovery);
//   - the APIService object and its Table as `kubectl get apiservice` prints it.

import { createHash } from 'node:crypto';

/** What kube-aggregator's discovery manager (and client-go) asks /apis for. */
export const ACCEPT_DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface ResourceDiscovery {
  resource: string;
  responseKind?: GroupVersionKind;
  scope: 'Cluster' | 'Namespaced';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: { subresource: string; responseKind?: GroupVersionKind; verbs: string[] }[];
}

export interface VersionDiscovery {
  version: string;
  resources?: ResourceDiscovery[];
  freshness?: 'Current' | 'Stale';
}

export interface GroupDiscovery {
  metadata: { name: string };
  versions: VersionDiscovery[];
}

export interface GroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.k8s.io/v2';
  metadata: Record<string, never>;
  items: GroupDiscovery[];
}

/**
 * An APIResourceList entry as the aggregator decodes it. Declared here rather than
 * imported from the server's discovery code on purpose: a double that shared the
 * server's types would agree with a misspelt field instead of catching it.
 */
export interface LegacyAPIResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

/**
 * Whether a Content-Type is the v2 aggregated discovery type: client-go's
 * ContentTypeIsGVK parses the media type and compares the g, v and as parameters,
 * in any order.
 */
export function isDiscoveryV2ContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  if (type?.toLowerCase() !== 'application/json') return false;
  const values = new Map<string, string>();
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq > 0)
      values.set(
        p.slice(0, eq).trim().toLowerCase(),
        p
          .slice(eq + 1)
          .trim()
          .replace(/^"|"$/g, ''),
      );
  }
  return (
    values.get('g') === 'apidiscovery.k8s.io' &&
    values.get('v') === 'v2' &&
    values.get('as') === 'APIGroupDiscoveryList'
  );
}

/**
 * A legacy `/apis/<group>/<version>` resource list as a v2 version entry, the way
 * the aggregator's fallback converts it: responseKind takes the resource's own
 * (usually empty) group and version, subresources attach to their parent, and
 * subresources without a parent are dropped.
 */
export function convertLegacyResources(
  version: string,
  list: readonly LegacyAPIResource[],
): VersionDiscovery {
  const resources: ResourceDiscovery[] = [];
  const parents = new Map<string, ResourceDiscovery>();
  for (const r of list) {
    if (r.name.includes('/')) continue;
    const entry: ResourceDiscovery = {
      resource: r.name,
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: [...r.verbs],
    };
    if (r.shortNames) entry.shortNames = [...r.shortNames];
    if (r.categories) entry.categories = [...r.categories];
    resources.push(entry);
    parents.set(r.name, entry);
  }
  for (const r of list) {
    const slash = r.name.indexOf('/');
    if (slash < 0) continue;
    const parent = parents.get(r.name.slice(0, slash));
    if (!parent) continue;
    (parent.subresources ??= []).push({
      subresource: r.name.slice(slash + 1),
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind },
      verbs: [...r.verbs],
    });
  }
  return { version, resources };
}

const QUERY_SAFE = /[A-Za-z0-9\-_.~]/;

/** Go's url.QueryEscape: space as '+', everything but unreserved characters %-escaped. */
function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    if (QUERY_SAFE.test(ch)) out += ch;
    else if (ch === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The query as the proxy forwards it (`req.URL.Query().Encode()`): parsed, keys
 * sorted, each key's values in their original order, re-escaped. Pairs Go cannot
 * parse (with a ';') are dropped, as Go drops them.
 */
export function reencodeQuery(rawQuery: string): string {
  const byKey = new Map<string, string[]>();
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      continue;
    }
    const values = byKey.get(key) ?? [];
    values.push(value);
    byKey.set(key, values);
  }
  const keys = [...byKey.keys()].sort();
  return keys
    .flatMap((k) => (byKey.get(k) ?? []).map((v) => `${queryEscape(k)}=${queryEscape(v)}`))
    .join('&');
}

const HEADER_TOKEN = /^[A-Za-z0-9!#$&'*+\-.^_`|~]$/;

/** client-go's headerKeyEscape: bytes that are not header-token characters, and '%', %-escaped. */
export function escapeExtraKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out +=
      byte < 0x80 && ch !== '%' && HEADER_TOKEN.test(ch)
        ? ch
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Hop-by-hop headers a Go reverse proxy never forwards (either direction). */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Whether a client's request header is dropped before proxying: hop-by-hop headers;
 * Authorization (kube-apiserver's authentication filter deletes it once used);
 * Impersonate-* (resolved upstream); and every X-Remote-* identity header (the
 * aggregator sets its own).
 */
export function isDroppedRequestHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    HOP_BY_HOP.has(n) ||
    n === 'host' ||
    n === 'authorization' ||
    n.startsWith('impersonate-') ||
    n === 'x-remote-user' ||
    n === 'x-remote-group' ||
    n === 'x-remote-uid' ||
    n.startsWith('x-remote-extra-')
  );
}

export interface ProxiedUser {
  readonly name: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The identity headers, as client-go's SetAuthProxyHeaders sets them: one line per group and extra value. */
export function authProxyHeaders(user: ProxiedUser): [string, string][] {
  const out: [string, string][] = [['X-Remote-User', user.name]];
  for (const g of user.groups) out.push(['X-Remote-Group', g]);
  for (const [key, values] of Object.entries(user.extra ?? {}))
    for (const v of values) out.push([`X-Remote-Extra-${escapeExtraKey(key)}`, v]);
  return out;
}

/** A quoted hex SHA-512 ETag, as kube-apiserver's discovery and OpenAPI handlers send. */
export function quotedEtag(body: string): string {
  return `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
}

/** Whether an If-None-Match header names `etag` (weak or strong, or `*`). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const strip = (t: string): string => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => strip(t) === '*' || strip(t) === strip(etag));
}

/** kubectl's human age (k8s.io/apimachinery duration.HumanDuration, coarse). */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 === 0 ? '' : `${s % 60}s`}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
