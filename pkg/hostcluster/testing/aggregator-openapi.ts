// How the kube-aggregator double serves the merged OpenAPI v2 document: the
// negotiation of kube-openapi's handler (pkg/handler RegisterOpenAPIVersionedService
// over goautoneg.ParseAccept), written here from that reference and not taken from
// the server, so that a test through the double can catch a server that negotiates
// wrongly instead of agreeing with it by construction.
//
// - An empty Accept means `*/*`.
// - Clauses are taken highest q first, a concrete type or subtype before a wildcard
//   at equal q (goautoneg's order); q=0 is not special there, so it is not here.
// - The offers, in order: JSON, the deprecated `...spec.v2@v1.0+protobuf` and
//   `...spec.v2.v1.0+protobuf`; the first clause that matches one picks it, and the
//   protobuf is always labelled with the dotted subtype.
// - Nothing acceptable: 406.
//
// The gnostic bytes are the double's own (aggregator-openapi-proto.ts), encoded from
// the merged JSON as kube-openapi's handler does, never the server's encoder.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeGnosticDocument } from './aggregator-openapi-proto.js';
import { ifNoneMatchHits } from './aggregator-wire.js';

const PROTOBUF_DEPRECATED = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PROTOBUF = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';

export type OpenAPIV2Representation = 'json' | 'protobuf';

const OFFERS: readonly { readonly subtype: string; readonly representation: OpenAPIV2Representation }[] = [
  { subtype: 'json', representation: 'json' },
  { subtype: PROTOBUF_DEPRECATED, representation: 'protobuf' },
  { subtype: PROTOBUF, representation: 'protobuf' },
];

interface Clause {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

/** goautoneg.ParseAccept: clauses with their q, malformed ones skipped, in preference order. */
function parseAcceptClauses(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.trim().split(';');
    const pieces = range.split('/');
    const type = (pieces[0] ?? '').trim();
    let subtype: string;
    if (pieces.length === 1 && type === '*') subtype = '*';
    else if (pieces.length === 2) subtype = (pieces[1] ?? '').trim();
    else continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim() !== 'q') continue;
      // Go's float parse failing leaves 0.
      const parsed = Number(param.slice(eq + 1));
      q = Number.isFinite(parsed) ? parsed : 0;
    }
    clauses.push({ type, subtype, q });
  }
  const rank = (c: Clause): number => (c.type === '*' ? 2 : 0) + (c.subtype === '*' ? 1 : 0);
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** The representation kube-openapi's handler would pick, or undefined for 406. */
export function negotiateOpenAPIV2(accept: string | undefined): OpenAPIV2Representation | undefined {
  for (const clause of parseAcceptClauses(accept === undefined || accept === '' ? '*/*' : accept)) {
    for (const offer of OFFERS) {
      if (clause.type !== 'application' && clause.type !== '*') continue;
      if (clause.subtype !== offer.subtype && clause.subtype !== '*') continue;
      return offer.representation;
    }
  }
  return undefined;
}

/** A merged document as the double downloaded it: its JSON and the ETag it serves JSON under. */
export interface MergedOpenAPIV2 {
  readonly body: string;
  readonly served: string;
}

/** Serves the merged document as kube-openapi's handler does (Vary, a per-representation ETag, 304, 406). */
export function serveMergedOpenAPIV2(req: IncomingMessage, res: ServerResponse, doc: MergedOpenAPIV2): void {
  res.setHeader('Vary', 'Accept');
  const representation = negotiateOpenAPIV2(req.headers.accept);
  if (representation === undefined) {
    res.writeHead(406);
    res.end();
    return;
  }
  const protobuf = representation === 'protobuf';
  const etag = protobuf ? `"proto-${doc.served.replace(/"/g, '')}"` : doc.served;
  res.setHeader('ETag', etag);
  if (ifNoneMatchHits(req.headers['if-none-match'], etag)) {
    res.writeHead(304);
    res.end();
    return;
  }
  const body = protobuf
    ? encodeGnosticDocument(JSON.parse(doc.body) as Record<string, unknown>)
    : Buffer.from(doc.body);
  res.writeHead(200, {
    'Content-Type': protobuf ? `application/${PROTOBUF}` : 'application/json',
    'Content-Length': body.length,
  });
  res.end(body);
}
