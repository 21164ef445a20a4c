// The aggregator double's OpenAPI aggregation controllers (kube-aggregator's
// controllers/openapi and controllers/openapiv3, aggregator/downloader.go): they
// download the aggregated server's /openapi/v2 as system:aggregator with Accept
// application/json and If-None-Match (never an ETag made up locally), 404
// tolerated, and its /openapi/v3 root with no Accept header, 404 meaning "legacy";
// and the merged /openapi/v2 the double serves from what was downloaded.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerValue, writeStatus } from './aggregator-http.js';
import { serveMergedOpenAPIV2 } from './aggregator-openapi.js';
import type { AggregatedServerConnection } from './aggregator-proxy.js';
import { quotedEtag, type ProxiedUser } from './aggregator-wire.js';

export const OPENAPI_AGGREGATOR: ProxiedUser = { name: 'system:aggregator', groups: [] };
const OPENAPI_TIMEOUT_MS = 60_000;
/** kube-aggregator marks ETags it computed itself with this prefix and never sends them. */
const LOCAL_ETAG_PREFIX = '"6E8F849B434D4B98A569B9D7718876E9-';

export interface OpenAPISyncResult {
  readonly v2: { readonly status: number; readonly etag: string; readonly error?: string };
  readonly v3: { readonly status: number; readonly legacy: boolean; readonly error?: string };
}

export class OpenAPIAggregation {
  private v2: { body: string; etag: string; served: string } | undefined;
  private v2Etag = '';
  /** The OpenAPI v3 root paths fetched from the server (e.g. `apis/<group>/<version>`). */
  v3Paths: Record<string, unknown> | undefined;
  private v3Legacy = false;

  constructor(private readonly connection: AggregatedServerConnection) {}

  async sync(): Promise<OpenAPISyncResult> {
    // v2 (controllers/openapi): If-None-Match only with an ETag the server sent.
    const v2Headers: Record<string, string> = { Accept: 'application/json' };
    if (this.v2Etag && !this.v2Etag.startsWith(LOCAL_ETAG_PREFIX)) v2Headers['If-None-Match'] = this.v2Etag;
    const v2 = await this.connection.throughProxy(
      'openapi-v2',
      OPENAPI_AGGREGATOR,
      '/openapi/v2',
      v2Headers,
      OPENAPI_TIMEOUT_MS,
    );
    let v2Result: OpenAPISyncResult['v2'];
    if (v2.status === 304) {
      v2Result = this.v2Etag
        ? { status: 304, etag: this.v2Etag }
        : { status: 304, etag: '', error: 'http.StatusNotModified is not allowed in absence of etag' };
    } else if (v2.status === 404) {
      this.v2Etag = '';
      v2Result = { status: 404, etag: '' };
    } else if (v2.status === 200) {
      try {
        JSON.parse(v2.body);
        const sent = headerValue(v2.headers, 'etag');
        const etag = sent ?? `${LOCAL_ETAG_PREFIX}${quotedEtag(v2.body).slice(1)}`;
        this.v2Etag = etag;
        this.v2 = { body: v2.body, etag, served: quotedEtag(v2.body) };
        v2Result = { status: 200, etag };
      } catch (err) {
        v2Result = { status: 200, etag: this.v2Etag, error: (err as Error).message };
      }
    } else {
      v2Result = {
        status: v2.status,
        etag: this.v2Etag,
        error: `failed to retrieve openAPI spec, http error: ${v2.body}`,
      };
    }

    // v3 (controllers/openapiv3): the root only; group documents are proxied on demand.
    const v3 = await this.connection.throughProxy(
      'openapi-v3',
      OPENAPI_AGGREGATOR,
      '/openapi/v3',
      {},
      OPENAPI_TIMEOUT_MS,
    );
    let v3Result: OpenAPISyncResult['v3'];
    if (v3.status === 404) {
      this.v3Legacy = true;
      this.v3Paths = undefined;
      v3Result = { status: 404, legacy: true };
    } else if (v3.status === 200) {
      try {
        const root = JSON.parse(v3.body) as { paths?: Record<string, unknown> };
        this.v3Paths = root.paths ?? {};
        this.v3Legacy = false;
        v3Result = { status: 200, legacy: false };
      } catch (err) {
        v3Result = { status: 200, legacy: this.v3Legacy, error: (err as Error).message };
      }
    } else {
      v3Result = {
        status: v3.status,
        legacy: this.v3Legacy,
        error: 'Error, could not get list of group versions for APIService',
      };
    }
    return { v2: v2Result, v3: v3Result };
  }

  /** /openapi/v2: the merged document, 503 until one was downloaded. */
  serveV2(req: IncomingMessage, res: ServerResponse): void {
    const doc = this.v2;
    if (!doc) {
      writeStatus(res, 503, 'ServiceUnavailable', 'the OpenAPI v2 document has not been aggregated yet');
      return;
    }
    // kube-openapi's handler serves the merged document as JSON or, to kubectl up to
    // 1.2x, as gnostic protobuf (a representation with its own ETag).
    serveMergedOpenAPIV2(req, res, doc);
  }
}
