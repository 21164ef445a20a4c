// The metrics filter: records every request the server routes into the request
// metrics of pkg/metrics/apiserver.ts, labelled exactly as k8s.io/apiserver's
// endpoints/metrics does (MonitorRequest, CleanScope, CanonicalVerb, cleanVerb,
// cleanDryRun), so `apiserver_request_total{verb="LIST",scope="cluster"}` means here
// what it means on kube-apiserver.
//
// Only routed requests are recorded, as upstream instruments its routes and not its
// filters: a 401, a 403 or a 404 for a path that names nothing served is not a
// series (a client could otherwise mint label values at will).

import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  APISERVER_COMPONENT,
  inflight,
  longRunningRequests,
  requestDuration,
  requestTerminationsTotal,
  requestTotal,
  responseSizes,
  type RequestKind,
} from '../../metrics/apiserver.js';
import type { CounterSeries, HistogramSeries } from '../../metrics/families.js';
import type { RequestInfo } from '../request-info.js';

/** upstream's validRequestMethods; anything else is reported as `other`. */
const VALID_VERBS: ReadonlySet<string> = new Set([
  'APPLY',
  'CONNECT',
  'CREATE',
  'DELETE',
  'DELETECOLLECTION',
  'GET',
  'LIST',
  'PATCH',
  'POST',
  'PROXY',
  'PUT',
  'UPDATE',
  'WATCH',
  'WATCHLIST',
]);

const READ_ONLY_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

/** CleanScope: `resource` for one object (or a create), else `namespace`, `cluster`, or '' off the API. */
export function cleanScope(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  if (info.isResourceRequest) return 'cluster';
  return '';
}

/**
 * The reported verb: the HTTP method, with GET of a collection as LIST, any watch
 * (`?watch=true` or the `/watch/` path) as WATCH and a server-side apply as APPLY
 * (CanonicalVerb then cleanVerb). So a deletecollection is a DELETE, as upstream.
 */
export function reportedVerb(method: string, info: RequestInfo, contentType: string | undefined): string {
  if (info.verb === 'watch') return 'WATCH';
  let verb = method.toUpperCase();
  if (verb === 'GET' || verb === 'HEAD') {
    const scope = cleanScope(info);
    verb = scope !== 'resource' && scope !== '' ? 'LIST' : 'GET';
  } else if (verb === 'PATCH' && contentType === APPLY_PATCH_TYPE) {
    verb = 'APPLY';
  }
  return VALID_VERBS.has(verb) ? verb : 'other';
}

/**
 * cleanDryRun: '' without the parameter, the sorted distinct values when every
 * one is valid (`All`), `invalid` otherwise, so the label has a handful of values.
 */
export function cleanDryRun(rawQuery: string): string {
  if (!rawQuery.includes('dryRun')) return '';
  const values = new URLSearchParams(rawQuery).getAll('dryRun');
  if (values.some((v) => v !== 'All')) return 'invalid';
  return [...new Set(values)].sort().join(',');
}

/** One combination of request labels, with its series resolved once (see pkg/metrics/families.ts). */
class Series {
  readonly responseLabels: Readonly<Record<string, string>>;
  readonly duration: HistogramSeries;
  /** Sizes are recorded for reads only, as upstream. */
  readonly sizes: HistogramSeries | undefined;
  private readonly byCode = new Map<number, CounterSeries>();

  constructor(readonly labels: Readonly<Record<string, string>>) {
    const { dry_run: _dryRun, ...rest } = labels;
    this.responseLabels = rest;
    this.duration = requestDuration.series(labels);
    this.sizes = labels.verb === 'GET' || labels.verb === 'LIST' ? responseSizes.series(rest) : undefined;
  }

  /** Whether these are the labels given (route's look-up: no key string built per request). */
  is(
    verb: string,
    dryRun: string,
    info: RequestInfo,
    subresource: string,
    scope: string,
    component: string,
  ): boolean {
    const l = this.labels;
    return (
      l.verb === verb &&
      l.dry_run === dryRun &&
      l.group === info.apiGroup &&
      l.version === info.apiVersion &&
      l.subresource === subresource &&
      l.scope === scope &&
      l.component === component
    );
  }

  /** What a request of this series counts against, one shared record per kind. */
  routedAs(kind: RequestKind | undefined): Routed {
    if (kind === undefined) return (this.longRunning ??= Object.freeze({ series: this, kind }));
    return kind === 'readOnly'
      ? (this.readOnly ??= Object.freeze({ series: this, kind }))
      : (this.mutating ??= Object.freeze({ series: this, kind }));
  }

  private longRunning: Routed | undefined;
  private readOnly: Routed | undefined;
  private mutating: Routed | undefined;

  total(code: number): CounterSeries {
    let series = this.byCode.get(code);
    if (!series)
      this.byCode.set(code, (series = requestTotal.series({ ...this.labels, code: String(code) })));
    return series;
  }
}

/** A request routed to a handler: its series and what it counts against. */
interface Routed {
  readonly series: Series;
  readonly kind: RequestKind | undefined;
}

/**
 * Records routed requests. `route` when the server knows what the request is and
 * that it serves it; `finish` once its response is over (finished or cut off).
 * The label space is bounded by what is routed (resources served, verbs, scopes,
 * codes), so the series are kept for the life of the process, as upstream's are.
 */
export class RequestMetricsFilter {
  private readonly routed = new WeakMap<ServerResponse, Routed>();
  /** The series made so far, by their resource label. */
  private readonly series = new Map<string, Series[]>();

  route(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    rawQuery: string,
    component = APISERVER_COMPONENT,
  ): void {
    const verb = reportedVerb(req.method ?? 'GET', info, req.headers['content-type']);
    const dryRun = cleanDryRun(rawQuery);
    // Off the API upstream records the path where the subresource would be.
    const subresource = info.isResourceRequest ? info.subresource : info.path;
    const scope = cleanScope(info);
    // Found among the resource's few series by comparing labels: a key string joined
    // from eight labels per request was ~0.5 KB of garbage a get.
    let ofResource = this.series.get(info.resource);
    if (!ofResource) this.series.set(info.resource, (ofResource = []));
    let series: Series | undefined;
    for (let i = 0; i < ofResource.length && !series; i++) {
      if (ofResource[i]?.is(verb, dryRun, info, subresource, scope, component)) series = ofResource[i];
    }
    if (!series) {
      series = new Series({
        verb,
        dry_run: dryRun,
        group: info.apiGroup,
        version: info.apiVersion,
        resource: info.resource,
        subresource,
        scope,
        component,
      });
      ofResource.push(series);
    }
    let kind: RequestKind | undefined;
    if (verb === 'WATCH') {
      longRunningRequests.inc(series.responseLabels);
    } else {
      kind = READ_ONLY_VERBS.has(info.verb) ? 'readOnly' : 'mutating';
      inflight.started(kind);
    }
    this.routed.set(res, series.routedAs(kind));
  }

  /**
   * A request the overload limiter refused (max-inflight.ts), answered before it
   * was routed: counted in apiserver_request_total with code 429 as upstream's
   * RecordDroppedRequest counts it, with no duration or size. Off the API every
   * label but verb and dry_run is empty there; a resource request counts only when
   * it names a resource (and subresource) this server serves (`served`), as for routed requests.
   */
  rejected(req: IncomingMessage, info: RequestInfo, served: boolean): void {
    if (info.isResourceRequest && !served) return;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const resource = info.isResourceRequest;
    requestTotal
      .series({
        verb: reportedVerb(req.method ?? 'GET', info, req.headers['content-type']),
        dry_run: cleanDryRun(q < 0 ? '' : url.slice(q + 1)),
        group: resource ? info.apiGroup : '',
        version: resource ? info.apiVersion : '',
        resource: resource ? info.resource : '',
        subresource: info.subresource,
        scope: cleanScope(info),
        component: APISERVER_COMPONENT,
        code: '429',
      })
      .inc();
  }

  /**
   * A request the server terminated in self-defense: refused by the overload limiter
   * (429) or cut off by its deadline (504). Counted in
   * apiserver_request_terminations_total as upstream's RecordRequestTermination
   * counts it: the reported verb, no dry_run, and off the API the path as
   * subresource. `served` bounds the labels: a resource (and subresource) or a path
   * this server serves; anything else is not counted (a client could mint values).
   */
  terminated(req: IncomingMessage, info: RequestInfo, served: boolean, code: 429 | 504): void {
    if (!served) return;
    const resource = info.isResourceRequest;
    requestTerminationsTotal
      .series({
        verb: reportedVerb(req.method ?? 'GET', info, req.headers['content-type']),
        group: resource ? info.apiGroup : '',
        version: resource ? info.apiVersion : '',
        resource: resource ? info.resource : '',
        subresource: resource ? info.subresource : info.path,
        scope: cleanScope(info),
        component: APISERVER_COMPONENT,
        code: String(code),
      })
      .inc();
  }

  finish(res: ServerResponse, elapsedSeconds: number): void {
    const routed = this.routed.get(res);
    if (!routed) return;
    this.routed.delete(res);
    const { series, kind } = routed;
    if (kind) inflight.finished(kind);
    else longRunningRequests.dec(series.responseLabels);
    series.total(res.statusCode).inc();
    series.duration.observe(elapsedSeconds);
    if (series.sizes) {
      const length = Number(res.getHeader('content-length'));
      if (Number.isFinite(length)) series.sizes.observe(length);
    }
  }
}
