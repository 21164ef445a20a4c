// Serving the discovery and OpenAPI documents. They change only when the server
// restarts, so they are built once, serialized once and served as bytes with their
// ETags: the aggregator re-fetches discovery every minute and kubectl fetches OpenAPI
// on many commands. The documents themselves come from pure builders
// (pkg/apiserver/discovery, pkg/apiserver/openapi); this module is their HTTP side.

import type { ServerResponse } from 'node:http';

import type { RESTStorage } from '../registry/rest/interfaces.js';
import { coreAggregatedDiscovery } from './discovery/discovery.js';
import {
  negotiateOutput,
  notAcceptable,
  parseAccept,
  wantsPretty,
  type NegotiatedOutput,
} from './negotiation.js';
import { byGroupVersion } from './openapi/group-version.js';
import {
  encodeOpenAPIV2Proto,
  OPENAPI_V2_PROTOBUF_MEDIA_TYPE,
  prefersOpenAPIV2Protobuf,
} from './openapi/openapi-v2-proto.js';
import { encode, writeBytes, type OutputFormat } from './responses.js';
import type { RequestScope } from './scope.js';

/** The document builders, as pkg/apiserver/discovery and pkg/apiserver/openapi export them. */
export interface DocumentBuilders {
  apiVersions(): unknown;
  apiGroupList(group: string, version: string): unknown;
  apiGroup(group: string, version: string): unknown;
  apiResourceList(group: string, version: string, resources: readonly RESTStorage[]): unknown;
  aggregatedDiscovery(group: string, version: string, resources: readonly RESTStorage[]): unknown;
  /** Quoted hex digest of a serialized document. */
  etagOf(json: string): string;
  /**
   * `/openapi/v2`, the group version's `/openapi/v3` document, and one for each
   * built-in group version served (by `<group>/<version>`), from one walk of the routes.
   */
  openAPIDocuments(
    group: string,
    version: string,
    resources: readonly RESTStorage[],
    builtin: readonly RESTStorage[],
  ): {
    readonly v2: unknown;
    /** `/openapi/v2` without the built-in group versions, for the host's aggregator. */
    readonly v2GroupOnly: unknown;
    readonly v3: unknown;
    readonly builtinV3: ReadonlyMap<string, unknown>;
  };
  /** `/openapi/v3`: each `<group>/<version>` with the hash of its document. */
  openAPIV3Root(entries: readonly { readonly groupVersion: string; readonly hash: string }[]): unknown;
}

/** The Content-Type of the aggregated discovery document, exactly as client-go matches it. */
export const AGGREGATED_DISCOVERY_CONTENT_TYPE =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

interface CachedDocument {
  readonly object: unknown;
  readonly bytes: Buffer;
  /** Quoted, as it goes in the ETag header. */
  readonly etag: string;
}

function cache(object: unknown, etagOf: (json: string) => string): CachedDocument {
  const json = JSON.stringify(object);
  return { object, bytes: Buffer.from(`${json}\n`), etag: etagOf(json) };
}

/**
 * The user kube-aggregator's OpenAPI controllers download as
 * (controllers/openapi/aggregator/downloader.go), through the front proxy.
 */
const OPENAPI_AGGREGATOR_USER = 'system:aggregator';

/** The OpenAPI documents one kind of client is given. */
interface OpenAPIView {
  readonly v2: CachedDocument;
  /** The v2 document as gnostic protobuf, encoded on first request (only old kubectl asks). */
  v2Proto?: CachedDocument;
  readonly v3Root: CachedDocument;
}

/** A group version's v3 document and its hash (its digest, unquoted). */
interface OpenAPIV3Document {
  readonly doc: CachedDocument;
  readonly hash: string;
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const want = unquote(etag);
  return header.split(',').some((tag) => unquote(tag.trim()) === want);
}

/** The fixed paths `serve` answers (the group's own are added per server). */
const DOCUMENT_PATHS: ReadonlySet<string> = new Set([
  '/api',
  '/api/v1',
  '/apis',
  '/openapi/v2',
  '/swagger-2.0.0.pb-v1',
  '/openapi/v3',
]);

export class Documents {
  private readonly apiVersions: CachedDocument;
  /** `/api/v1`: the core version /api advertises, with no resources. */
  private readonly coreResourceList: CachedDocument;
  /** `/api` as aggregated discovery (see coreAggregatedDiscovery). */
  private readonly coreAggregated: CachedDocument;
  private readonly apiGroupList: CachedDocument;
  private readonly aggregated: CachedDocument;
  private readonly apiGroup: CachedDocument;
  private readonly apiResourceList: CachedDocument;
  /** `/openapi/v2` and `/openapi/v3` for every client but the host's aggregator. */
  private readonly openAPI: OpenAPIView;
  /**
   * The same with the API group version alone, for the host's aggregator: it merges
   * what it downloads into the host's documents, where the host's kube-apiserver
   * publishes the built-in groups itself (its v3 root would otherwise send
   * authorization.k8s.io/v1 here, the reviews alone).
   */
  private readonly openAPIForAggregator: OpenAPIView;
  /** `/openapi/v3/apis/<group>/<version>` of every group version served, by path. */
  private readonly openAPIV3 = new Map<string, OpenAPIV3Document>();
  /** `/apis/<group>` and `/apis/<group>/<version>` of the built-in groups served here. */
  private readonly builtinDocuments = new Map<string, CachedDocument>();

  constructor(
    private readonly group: string,
    private readonly version: string,
    resources: readonly RESTStorage[],
    builders: DocumentBuilders,
    /** Resources of Kubernetes' own groups served here: in discovery and OpenAPI. */
    builtin: readonly RESTStorage[] = [],
  ) {
    const etagOf = (json: string): string => builders.etagOf(json);
    this.apiVersions = cache(builders.apiVersions(), etagOf);
    this.coreResourceList = cache(builders.apiResourceList('', 'v1', []), etagOf);
    this.coreAggregated = cache(coreAggregatedDiscovery(), etagOf);
    // /apis lists the API group first, then the built-in ones, each built as a group
    // of its own and merged (the builders know one group at a time).
    const groupList = builders.apiGroupList(group, version) as { groups?: unknown[] };
    const aggregated = builders.aggregatedDiscovery(group, version, resources) as { items?: unknown[] };
    for (const [groupVersion, served] of byGroupVersion(builtin)) {
      const [g = '', v = ''] = groupVersion.split('/');
      const list = builders.apiGroupList(g, v) as { groups?: unknown[] };
      groupList.groups?.push(...(list.groups ?? []));
      const discovered = builders.aggregatedDiscovery(g, v, served) as { items?: unknown[] };
      aggregated.items?.push(...(discovered.items ?? []));
      this.builtinDocuments.set(`/apis/${g}`, cache(builders.apiGroup(g, v), etagOf));
      this.builtinDocuments.set(
        `/apis/${groupVersion}`,
        cache(builders.apiResourceList(g, v, served), etagOf),
      );
    }
    this.apiGroupList = cache(groupList, etagOf);
    this.aggregated = cache(aggregated, etagOf);
    this.apiGroup = cache(builders.apiGroup(group, version), etagOf);
    this.apiResourceList = cache(builders.apiResourceList(group, version, resources), etagOf);
    const openAPI = builders.openAPIDocuments(group, version, resources, builtin);
    const v3 = [[`${group}/${version}`, openAPI.v3] as const, ...openAPI.builtinV3];
    const entries: { groupVersion: string; hash: string }[] = [];
    for (const [groupVersion, doc] of v3) {
      const cached = cache(doc, etagOf);
      // The digest, unquoted: the `?hash=` clients pin.
      const hash = unquote(cached.etag);
      this.openAPIV3.set(`/openapi/v3/apis/${groupVersion}`, { doc: cached, hash });
      entries.push({ groupVersion, hash });
    }
    this.openAPI = { v2: cache(openAPI.v2, etagOf), v3Root: cache(builders.openAPIV3Root(entries), etagOf) };
    this.openAPIForAggregator =
      entries.length > 1
        ? {
            v2: cache(openAPI.v2GroupOnly, etagOf),
            v3Root: cache(builders.openAPIV3Root(entries.slice(0, 1)), etagOf),
          }
        : this.openAPI;
  }

  /** The OpenAPI documents `scope`'s client is given (see openAPIForAggregator). */
  private openAPIFor(scope: RequestScope): OpenAPIView {
    return scope.user?.name === OPENAPI_AGGREGATOR_USER ? this.openAPIForAggregator : this.openAPI;
  }

  /** Whether `path` (no trailing slash) is a document served here, as `serve` would find it. */
  has(path: string): boolean {
    const groupPath = `/apis/${this.group}`;
    return (
      DOCUMENT_PATHS.has(path) ||
      path === groupPath ||
      path === `${groupPath}/${this.version}` ||
      this.openAPIV3.has(path) ||
      this.builtinDocuments.has(path)
    );
  }

  /**
   * Serves `path` if it is one of ours and answers true; false means not a document
   * path (the caller 404s). Only GET and HEAD reach here.
   */
  serve(scope: RequestScope, path: string): boolean {
    const groupPath = `/apis/${this.group}`;
    const groupVersionPath = `${groupPath}/${this.version}`;
    switch (path) {
      case '/api':
        this.serveApis(scope, this.coreAggregated, this.apiVersions);
        return true;
      case '/api/v1':
        this.serveNegotiated(scope, this.coreResourceList);
        return true;
      case '/apis':
        this.serveApis(scope, this.aggregated, this.apiGroupList);
        return true;
      case groupPath:
        this.serveNegotiated(scope, this.apiGroup);
        return true;
      case groupVersionPath:
        this.serveNegotiated(scope, this.apiResourceList);
        return true;
      case '/openapi/v2':
        if (prefersOpenAPIV2Protobuf(scope.req.headers.accept)) this.serveOpenAPIV2Proto(scope);
        else this.serveOpenAPI(scope.res, scope, this.openAPIFor(scope).v2);
        return true;
      case '/swagger-2.0.0.pb-v1':
        // Where kubectl before 1.14-era servers looked, and still falls back to.
        this.serveOpenAPIV2Proto(scope);
        return true;
      case '/openapi/v3':
        this.serveOpenAPI(scope.res, scope, this.openAPIFor(scope).v3Root);
        return true;
      default: {
        const v3 = this.openAPIV3.get(path);
        if (v3) {
          this.serveOpenAPIV3GroupVersion(scope, v3);
          return true;
        }
        const builtin = this.builtinDocuments.get(path);
        if (!builtin) return false;
        this.serveNegotiated(scope, builtin);
        return true;
      }
    }
  }

  /** `/api` or `/apis`: the aggregated v2 document when Accept asks for it, the plain list otherwise. */
  private serveApis(scope: RequestScope, aggregated: CachedDocument, plain: CachedDocument): void {
    const output = this.negotiate(scope, { kind: 'discovery' });
    const res = scope.res;
    res.setHeader('Vary', 'Accept');
    if (output.convert?.kind === 'APIGroupDiscoveryList') {
      const doc = aggregated;
      res.setHeader('ETag', doc.etag);
      if (matchesIfNoneMatch(scope.req.headers['if-none-match'], doc.etag)) {
        res.writeHead(304);
        res.end();
        return;
      }
      this.write(scope, doc, { ...scope.format, contentType: contentTypeWithGVK(scope.format) });
      return;
    }
    this.write(scope, plain, scope.format);
  }

  private serveNegotiated(scope: RequestScope, doc: CachedDocument): void {
    this.negotiate(scope, { kind: 'plain' });
    this.write(scope, doc, scope.format);
  }

  private negotiate(
    scope: RequestScope,
    endpoint: { kind: 'discovery' } | { kind: 'plain' },
  ): NegotiatedOutput {
    const output = negotiateOutput(scope.req.headers.accept, endpoint);
    if (!output) throw notAcceptable();
    scope.format = {
      mediaType: output.mediaType,
      pretty:
        output.pretty ||
        wantsPretty(scope.hasQuery ? scope.query : undefined, scope.req.headers['user-agent']),
    };
    return output;
  }

  /** Cached bytes for plain JSON; anything else (YAML, pretty) is encoded from the object. */
  private write(scope: RequestScope, doc: CachedDocument, format: OutputFormat): void {
    const contentType = format.contentType ?? format.mediaType;
    if (format.mediaType === 'application/json' && !format.pretty) {
      writeBytes(scope.res, 200, contentType, doc.bytes);
    } else {
      writeBytes(scope.res, 200, contentType, encode(doc.object, format));
    }
  }

  /** JSON OpenAPI (v2 is also served as protobuf, see prefersOpenAPIV2Protobuf). */
  private acceptsJSON(scope: RequestScope): boolean {
    const accept = scope.req.headers.accept;
    if (!accept) return true;
    return parseAccept(accept).some(
      (c) =>
        (c.type === '*' && c.subtype === '*') ||
        (c.type === 'application' && (c.subtype === 'json' || c.subtype === '*')),
    );
  }

  private serveOpenAPIV2Proto(scope: RequestScope): void {
    const res = scope.res;
    const view = this.openAPIFor(scope);
    // A distinct ETag: the representation differs from the JSON one under the same URL.
    view.v2Proto ??= {
      object: view.v2.object,
      bytes: encodeOpenAPIV2Proto(view.v2.object),
      etag: `"${unquote(view.v2.etag)}-pb"`,
    };
    const doc = view.v2Proto;
    res.setHeader('Vary', 'Accept');
    res.setHeader('ETag', doc.etag);
    if (matchesIfNoneMatch(scope.req.headers['if-none-match'], doc.etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    writeBytes(res, 200, OPENAPI_V2_PROTOBUF_MEDIA_TYPE, doc.bytes);
  }

  private serveOpenAPI(res: ServerResponse, scope: RequestScope, doc: CachedDocument): void {
    res.setHeader('Vary', 'Accept');
    if (!this.acceptsJSON(scope)) {
      res.writeHead(406);
      res.end();
      return;
    }
    res.setHeader('ETag', doc.etag);
    if (matchesIfNoneMatch(scope.req.headers['if-none-match'], doc.etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    writeBytes(res, 200, 'application/json', doc.bytes);
  }

  /**
   * The group-version document. With `?hash=` matching, it may be cached forever (the
   * URL changes when the document does); a stale hash is redirected to the current one.
   */
  private serveOpenAPIV3GroupVersion(scope: RequestScope, current: OpenAPIV3Document): void {
    const res = scope.res;
    const hash = scope.hasQuery ? scope.query.get('hash') : null;
    if (hash && this.acceptsJSON(scope)) {
      if (hash !== current.hash) {
        res.setHeader('Vary', 'Accept');
        res.setHeader('ETag', current.doc.etag);
        const location = `${scope.rawPath}?hash=${current.hash}`;
        writeBytes(res, 301, 'text/html; charset=utf-8', `<a href="${location}">Moved Permanently</a>.\n`, {
          Location: location,
        });
        return;
      }
      res.setHeader('Cache-Control', 'public, immutable');
      const expires = new Date();
      expires.setUTCFullYear(expires.getUTCFullYear() + 1);
      res.setHeader('Expires', expires.toUTCString());
    }
    this.serveOpenAPI(res, scope, current.doc);
  }
}

function contentTypeWithGVK(format: OutputFormat): string {
  return format.mediaType === 'application/json'
    ? AGGREGATED_DISCOVERY_CONTENT_TYPE
    : `${format.mediaType};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`;
}
