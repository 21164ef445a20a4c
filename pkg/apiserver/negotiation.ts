// Content negotiation, as k8s.io/apiserver endpoints/handlers/negotiation does it:
// the Accept header picks the serializer (JSON or YAML) and, through the `as`, `g`
// and `v` parameters, an optional conversion target (Table, PartialObjectMetadata,
// aggregated discovery). A clause the endpoint cannot honour is skipped, not failed;
// only when no clause is left does the request fail with 406. The request's
// Content-Type picks the decoder (415 when unknown).

import { newNotAcceptable, newUnsupportedMediaType, type ApiError } from '../apis/meta/errors.js';
import type { PatchType } from '../registry/rest/interfaces.js';

export const JSON_MEDIA_TYPE = 'application/json';
export const YAML_MEDIA_TYPE = 'application/yaml';

export type MediaType = typeof JSON_MEDIA_TYPE | typeof YAML_MEDIA_TYPE;

/** Serializers in preference order: the first is used for an empty Accept header. */
const SERIALIZERS: readonly { type: string; subtype: string; mediaType: MediaType; streams: boolean }[] = [
  { type: 'application', subtype: 'json', mediaType: JSON_MEDIA_TYPE, streams: true },
  { type: 'application', subtype: 'yaml', mediaType: YAML_MEDIA_TYPE, streams: false },
];

export const SUPPORTED_MEDIA_TYPES: readonly string[] = SERIALIZERS.map((s) => s.mediaType);
export const SUPPORTED_STREAM_MEDIA_TYPES: readonly string[] = SERIALIZERS.filter((s) => s.streams).map(
  (s) => `${s.mediaType};stream=watch`,
);

export const META_GROUP = 'meta.k8s.io';
export const DISCOVERY_GROUP = 'apidiscovery.k8s.io';

export interface ConversionTarget {
  readonly kind: string;
  readonly group: string;
  readonly version: string;
}

export interface NegotiatedOutput {
  readonly mediaType: MediaType;
  /** Pretty requested through the media type itself (`;pretty=1`). */
  readonly pretty: boolean;
  readonly convert?: ConversionTarget;
}

/** What an endpoint can turn its objects into; a clause asking for anything else is skipped. */
export type EndpointKind =
  /** Objects of a resource: Table (when tables are supported) and PartialObjectMetadata(List). */
  | { readonly kind: 'resource'; readonly table: boolean }
  /** `/apis`: the aggregated discovery document besides the plain APIGroupList. */
  | { readonly kind: 'discovery' }
  /** No conversion at all. */
  | { readonly kind: 'plain' };

export interface AcceptClause {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
  readonly params: ReadonlyMap<string, string>;
}

/** Parses an Accept header into clauses ordered by q, then specificity; ties keep header order. */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: (AcceptClause & { index: number })[] = [];
  let index = 0;
  for (const part of header.split(',')) {
    const pieces = part.split(';');
    const range = (pieces[0] ?? '').trim().toLowerCase();
    if (range === '') continue;
    const slash = range.indexOf('/');
    let type: string;
    let subtype: string;
    if (slash < 0) {
      if (range !== '*') continue;
      type = '*';
      subtype = '*';
    } else {
      type = range.slice(0, slash).trim();
      subtype = range.slice(slash + 1).trim();
      if (type === '' || subtype === '' || subtype.includes('/')) continue;
    }
    let q = 1;
    const params = new Map<string, string>();
    for (const raw of pieces.slice(1)) {
      const eq = raw.indexOf('=');
      if (eq < 0) continue;
      const key = raw.slice(0, eq).trim();
      const value = raw.slice(eq + 1).trim();
      if (key === 'q') {
        const parsed = Number.parseFloat(value);
        q = Number.isFinite(parsed) ? parsed : 0;
      } else {
        params.set(key, value);
      }
    }
    clauses.push({ type, subtype, q, params, index: index++ });
  }
  const specificity = (c: AcceptClause): number => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.index - b.index);
  return clauses;
}

function allowsConversion(
  endpoint: EndpointKind,
  subtype: string,
  target: ConversionTarget | undefined,
  stream: boolean,
): boolean {
  if (!target) return true;
  switch (endpoint.kind) {
    case 'plain':
      return false;
    case 'discovery':
      return (
        target.kind === 'APIGroupDiscoveryList' && target.group === DISCOVERY_GROUP && target.version === 'v2'
      );
    case 'resource':
      if (target.group !== META_GROUP || (target.version !== 'v1' && target.version !== 'v1beta1'))
        return false;
      if (target.kind === 'Table') return endpoint.table && (subtype === 'json' || subtype === 'yaml');
      // A watch event carries one object: it converts to PartialObjectMetadata, never
      // to a list (client-go's metadata watch asks for the former). A watch asking only
      // for the list form is refused up front (406), not streamed unconverted.
      if (stream) return target.kind === 'PartialObjectMetadata';
      return target.kind === 'PartialObjectMetadata' || target.kind === 'PartialObjectMetadataList';
  }
}

/**
 * The first clause this endpoint can serve, or undefined (the caller answers 406).
 * `stream` is true for watch: only serializers that can frame a stream qualify.
 */
export function negotiateOutput(
  accept: string | undefined,
  endpoint: EndpointKind,
  stream = false,
): NegotiatedOutput | undefined {
  if (!accept) return PLAIN_JSON;
  if (accept.length > MAX_REMEMBERED_ACCEPT_LENGTH) return negotiate(accept, endpoint, stream);
  const memo = (NEGOTIATED[memoIndex(endpoint, stream)] ??= new Map());
  const known = memo.get(accept);
  if (known !== undefined) return known ?? undefined;
  const output = negotiate(accept, endpoint, stream);
  // A client chooses its header: the memo is bounded, and starts over when full.
  if (memo.size >= MAX_REMEMBERED_ACCEPT_HEADERS) memo.clear();
  memo.set(accept, output ?? null);
  return output;
}

/** The answer for no Accept header (shared: every NegotiatedOutput is read-only). */
const PLAIN_JSON: NegotiatedOutput = Object.freeze({ mediaType: JSON_MEDIA_TYPE, pretty: false });

/**
 * Clients send the same few Accept headers request after request (kubectl's, a
 * client-go's, a browser's): the negotiated answer is remembered per header and kind
 * of endpoint instead of splitting and parsing the header into clauses, maps and
 * sorted arrays on every request (~0.8 KB of garbage a get). Answers are frozen, so
 * sharing them is safe; null remembers a 406.
 */
const NEGOTIATED: Map<string, NegotiatedOutput | null>[] = [];
const MAX_REMEMBERED_ACCEPT_HEADERS = 64;
const MAX_REMEMBERED_ACCEPT_LENGTH = 512;

/** One memo per kind of endpoint and stream flag (the inputs besides the header). */
function memoIndex(endpoint: EndpointKind, stream: boolean): number {
  const kind = endpoint.kind === 'resource' ? (endpoint.table ? 0 : 1) : endpoint.kind === 'discovery' ? 2 : 3;
  return kind * 2 + (stream ? 1 : 0);
}

function negotiate(accept: string, endpoint: EndpointKind, stream: boolean): NegotiatedOutput | undefined {
  for (const clause of parseAccept(accept)) {
    for (const s of SERIALIZERS) {
      const matches =
        (clause.type === s.type && (clause.subtype === s.subtype || clause.subtype === '*')) ||
        (clause.type === '*' && clause.subtype === '*');
      if (!matches) continue;
      const streamParam = clause.params.get('stream');
      if (streamParam && (!s.streams || streamParam !== 'watch')) continue;
      const as = clause.params.get('as');
      const g = clause.params.get('g');
      const v = clause.params.get('v');
      const convert =
        as !== undefined || g !== undefined || v !== undefined
          ? { kind: as ?? '', group: g ?? '', version: v ?? '' }
          : undefined;
      if (!allowsConversion(endpoint, s.subtype, convert, stream)) continue;
      // Upstream matches the clause first and only then finds the serializer has no
      // stream framing: a YAML clause ahead of JSON makes a watch fail with 406.
      if (stream && !s.streams) return undefined;
      const result: NegotiatedOutput = {
        mediaType: s.mediaType,
        pretty: clause.params.get('pretty') === '1',
      };
      return Object.freeze(convert ? { ...result, convert: Object.freeze(convert) } : result);
    }
  }
  return undefined;
}

/** The 406 for a failed negotiation, listing what the endpoint serves. */
export function notAcceptable(stream = false): ApiError {
  return newNotAcceptable(stream ? SUPPORTED_STREAM_MEDIA_TYPES : SUPPORTED_MEDIA_TYPES);
}

/**
 * Indented JSON for humans: `?pretty=true`, or a curl/Wget/browser User-Agent unless
 * `pretty` says otherwise. Never used for watch frames (one event per line).
 */
export function wantsPretty(query: URLSearchParams | undefined, userAgent: string | undefined): boolean {
  const pretty = query?.get('pretty');
  if (pretty) return parseGoBool(pretty) ?? false;
  if (!userAgent) return false;
  return userAgent.startsWith('curl') || userAgent.startsWith('Wget') || userAgent.startsWith('Mozilla/5.0');
}

/** strconv.ParseBool: the spellings Go (and so kubectl and client-go) accept. */
export function parseGoBool(value: string): boolean | undefined {
  switch (value) {
    case '1':
    case 't':
    case 'T':
    case 'true':
    case 'TRUE':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'false':
    case 'FALSE':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

/** The media type of a request body without parameters (`; charset=utf-8`), lower case. */
export function baseMediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export type BodyFormat = 'json' | 'yaml';

/** Decoder for a POST/PUT body (and DeleteOptions): empty means JSON, else JSON or YAML, else 415. */
export function negotiateInput(contentType: string | undefined): BodyFormat {
  const base = baseMediaType(contentType);
  if (base === '' || base === JSON_MEDIA_TYPE) return 'json';
  if (base === YAML_MEDIA_TYPE) return 'yaml';
  throw newUnsupportedMediaType(SUPPORTED_MEDIA_TYPES);
}

const PATCH_TYPES: ReadonlyMap<string, PatchType> = new Map([
  ['application/json-patch+json', 'json'],
  ['application/merge-patch+json', 'merge'],
  ['application/strategic-merge-patch+json', 'strategic'],
  ['application/apply-patch+yaml', 'apply'],
]);

export const SUPPORTED_PATCH_TYPES: readonly string[] = [...PATCH_TYPES.keys()];

/** PATCH Content-Type → patch type; anything else (including none) is 415. */
export function negotiatePatchType(contentType: string | undefined): PatchType {
  const patchType = PATCH_TYPES.get(baseMediaType(contentType));
  if (!patchType) throw newUnsupportedMediaType(SUPPORTED_PATCH_TYPES);
  return patchType;
}
