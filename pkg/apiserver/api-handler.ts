// The HTTP layer proper: a node:http(s) request listener. No framework: the
// Kubernetes request-info resolver is the router, and each request costs a path
// split, an authentication, an authorization and one registry call.
//
//   audit ID -> health, version, the console's static files (no authentication; with
//   Impersonate-* headers: authenticate or anonymous -> audit -> impersonation (403))
//   -> request info -> authenticate (401, audited) -> audit -> impersonation -> max-in-flight (429)
//   -> authorize (403) -> discovery / OpenAPI documents, or a resource verb handler, or 404
// (docs/design.md, "The way a request travels", in upstream's DefaultBuildHandlerChain order).

import type { IncomingMessage, ServerResponse } from 'node:http';

import type { ApiServerConfig } from './config.js';
import { Documents, type DocumentBuilders } from './documents.js';
import { ConsoleFiles, defaultConsoleDir } from './console.js';
import { attributesFor, authenticate, authorize } from './filters.js';
import { ANONYMOUS_USER, AuditFilter, initAuditID } from './filters/audit.js';
import {
  callerOfUnauthenticatedPath,
  hasImpersonationHeaders,
  impersonate,
} from './filters/impersonation.js';
import { MaxInflightFilter } from './filters/max-inflight.js';
import { RequestMetricsFilter } from './filters/metrics.js';
import { RequestTimeoutFilter } from './filters/timeout.js';
import { exposition } from '../metrics/registry.js';
import { logs } from '../util/log/logger.js';
import { newResourceNotFound, serveResource, type HandlerEnv } from './handlers.js';
import { HealthChecks, type HealthEndpoint } from './health.js';
import { isApiError, newMethodNotAllowed } from '../apis/meta/errors.js';
import type { RESTStorage } from '../registry/rest/interfaces.js';
import { DEFAULT_MAX_REQUEST_BODY_BYTES } from './body.js';
import { newRequestInfo, normalizePrefixes, stripPrefix, type RequestInfo } from './request-info.js';
import { writeBytes, writeNotFoundPage } from './responses.js';
import { RequestScope } from './scope.js';
import { WatchServer } from './watch.js';

export interface ApiHandler {
  /** A node:http(s) request listener. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Fails readiness, ends every open watch cleanly, and resolves once no request is in flight. */
  shutdown(): Promise<void>;
  /**
   * Writes the audit events still buffered (batch mode). Separate from shutdown() so
   * that the server flushes even when draining hit its deadline, under a bound of its own.
   */
  flushAudit(): Promise<void>;
}

const DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS = 1800;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_REQUESTS_INFLIGHT = 400;
const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200;

/** Where the metrics are served (kube-apiserver's path; authorized as `get` on that non-resource URL). */
const METRICS_PATH = '/metrics';

const HEALTH_ENDPOINTS: ReadonlySet<string> = new Set(['healthz', 'livez', 'readyz']);

/** `/readyz` → ['readyz', undefined]; `/readyz/ping` → ['readyz', 'ping']; else undefined. */
function matchHealth(path: string): [HealthEndpoint, string | undefined] | undefined {
  // Every other path is told apart by its second character, with nothing sliced.
  const c = path.charCodeAt(1);
  if (c !== 104 /* h */ && c !== 108 /* l */ && c !== 114 /* r */) return undefined;
  const rest = path.slice(1);
  const slash = rest.indexOf('/');
  const head = slash < 0 ? rest : rest.slice(0, slash);
  if (!HEALTH_ENDPOINTS.has(head)) return undefined;
  const check = slash < 0 ? undefined : rest.slice(slash + 1);
  return [head as HealthEndpoint, check === '' ? undefined : check];
}

const API_ROOTS = ['/apis', '/api'] as const;

/** `/api`, `/apis` and below: the API's own paths, where the request-info resolver routes. */
function isApiPath(path: string): boolean {
  for (const root of API_ROOTS) {
    if (path.startsWith(root) && (path.length === root.length || path.charCodeAt(root.length) === 47)) {
      return true;
    }
  }
  return false;
}

/** The handler, with the discovery and OpenAPI builders given (tests pass small fakes). */
/**
 * Whether `storage` serves the request's subresource (or it names none). Upstream
 * instruments only the routes it installed: a path under an object naming no
 * served subresource is a 404 that makes no request series, so a client cannot
 * add values to the subresource label (`.../users/x/<anything>`).
 */
function servesSubresource(storage: RESTStorage | undefined, info: RequestInfo): boolean {
  if (!storage) return false;
  return info.subresource === '' || storage.subresources?.has(info.subresource) === true;
}

export function newApiHandler(config: ApiServerConfig, documentBuilders: DocumentBuilders): ApiHandler {
  return new Server(config, documentBuilders);
}

class Server implements ApiHandler {
  private readonly prefixes: string[];
  private readonly resources = new Map<string, RESTStorage>();
  /** Kubernetes' own groups answered here, by `<group>/<version>`, then resource. */
  private readonly builtin = new Map<string, Map<string, RESTStorage>>();
  private readonly documents: Documents;
  private readonly health: HealthChecks;
  private readonly watches: WatchServer;
  private readonly env: HandlerEnv;
  private readonly versionBytes: Buffer;
  private readonly metrics: RequestMetricsFilter | undefined;
  private readonly timeouts: RequestTimeoutFilter;
  private readonly audit: AuditFilter | undefined;
  private readonly maxInflight: MaxInflightFilter | undefined;
  private readonly storageDeadlines: boolean;
  private readonly console: ConsoleFiles;
  private inFlight = 0;
  private shuttingDown = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly config: ApiServerConfig,
    documentBuilders: DocumentBuilders,
  ) {
    this.prefixes = normalizePrefixes(config.pathPrefixes);
    for (const storage of config.resources) {
      if (storage.info.group === config.group && storage.info.version === config.version) {
        this.resources.set(storage.info.resource, storage);
      }
    }
    for (const storage of config.builtinResources ?? []) {
      const groupVersion = `${storage.info.group}/${storage.info.version}`;
      const byResource = this.builtin.get(groupVersion) ?? new Map<string, RESTStorage>();
      byResource.set(storage.info.resource, storage);
      this.builtin.set(groupVersion, byResource);
    }
    this.documents = new Documents(
      config.group,
      config.version,
      config.resources,
      documentBuilders,
      config.builtinResources ?? [],
    );
    this.health = new HealthChecks(config.liveChecks ?? [], config.readyChecks ?? [], config.logger);
    this.watches = new WatchServer({
      minRequestTimeoutSeconds: config.minRequestTimeoutSeconds ?? DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS,
      logger: config.logger,
    });
    this.env = {
      maxRequestBodyBytes: config.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES,
      watches: this.watches,
    };
    this.metrics = config.metrics === false ? undefined : new RequestMetricsFilter();
    // A request cut off by its deadline: counted as a termination (only routed
    // requests are armed, so its resource and subresource are served).
    this.timeouts = new RequestTimeoutFilter(config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, (scope) => {
      if (scope.info) this.metrics?.terminated(scope.req, scope.info, this.servesRequest(scope.info), 504);
    });
    this.audit = config.audit ? new AuditFilter(config.audit, config.group) : undefined;
    this.storageDeadlines = config.storageDeadlines ?? true;
    this.maxInflight = MaxInflightFilter.create({
      maxRequestsInflight: config.maxRequestsInflight ?? DEFAULT_MAX_REQUESTS_INFLIGHT,
      maxMutatingRequestsInflight:
        config.maxMutatingRequestsInflight ?? DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
      // As DefaultBuildHandlerChain gives priority and fairness: a quarter of the request timeout.
      queueWaitLimitMs: (config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) / 4,
      // Refused before routing, still counted in apiserver_request_total (code 429) and
      // in apiserver_request_terminations_total, as upstream.
      onRejected: (res, info) => {
        if (!this.metrics) return;
        this.metrics.rejected(res.req, info, servesSubresource(this.storageFor(info), info));
        this.metrics.terminated(res.req, info, this.servesRequest(info), 429);
      },
    });
    this.console = new ConsoleFiles(config.consoleDir ?? defaultConsoleDir(), config);
    // As kube-apiserver's /version: always indented.
    this.versionBytes = Buffer.from(`${JSON.stringify(config.versionInfo, null, 2)}\n`);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const scope = new RequestScope(
      req,
      res,
      q < 0 ? url : url.slice(0, q),
      q < 0 ? '' : url.slice(q + 1),
      this.config.logger,
    );
    this.inFlight++;
    scope.auditID = initAuditID(req, res);
    res.setHeader('Cache-Control', 'no-cache, private');
    if (this.shuttingDown) res.setHeader('Connection', 'close');
    // 'close' comes once per response: `on` spares the once-wrapper and its bound function.
    res.on('close', () => this.finished(scope, started));
    this.serve(scope).catch((err: unknown) => {
      if (!isApiError(err)) this.audit?.panicked(scope, err);
      try {
        scope.fail(err);
      } catch {
        res.destroy();
      }
    });
  }

  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.health.markShuttingDown();
    this.watches.shutdown();
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async flushAudit(): Promise<void> {
    await this.audit?.shutdown();
  }

  private finished(scope: RequestScope, started: number): void {
    scope.markClosed();
    this.inFlight--;
    const res = scope.res;
    this.metrics?.finish(res, (performance.now() - started) / 1000);
    this.audit?.finish(scope);
    // One line per request at debug, as kube-apiserver's httplog writes one only from
    // -v=3 (withLogging: klog.V(3).Enabled()); the audit log is the record of requests,
    // and an internal error is logged as an error where it is answered (responses.ts).
    if (logs(this.config.logger, 'debug')) {
      // logFields() is a fresh object: completed in place rather than copied.
      const fields = scope.logFields();
      fields.code = res.statusCode;
      fields.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      if (!res.writableFinished) fields.aborted = true;
      this.config.logger.debug('request', fields);
    }
    if (this.inFlight === 0 && this.shuttingDown) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Requests served without credentials are audited as kube-apiserver's anonymous user.
   * One with Impersonate-* headers first meets what kube-apiserver runs on every
   * request: its caller authenticated (system:anonymous when it presented nothing),
   * audited as that caller, then WithImpersonation, whose refusal is upstream's 403
   * (filters/impersonation.ts). Without such a header: one scan of the header names.
   */
  private async beginUnauthenticated(scope: RequestScope, info: RequestInfo): Promise<void> {
    if (!hasImpersonationHeaders(scope.req)) {
      await this.audit?.begin(scope, info, ANONYMOUS_USER);
      return;
    }
    try {
      scope.user = await callerOfUnauthenticatedPath(this.config.authenticator, scope.req, this.config.logger);
    } catch (err) {
      this.audit?.failedAuthentication(scope, info);
      throw err;
    }
    await this.audit?.begin(scope, info, scope.user);
    scope.user = await impersonate(this.config.authorizer, scope, this.config.logger);
  }

  /**
   * Public documents (the token issuer's discovery and keys) need no credentials: a
   * connected cluster fetches them to verify tokens on its own. True when served.
   */
  private async servePublicDocument(scope: RequestScope, path: string): Promise<boolean> {
    const sources = this.config.publicDocuments;
    if (!sources || sources.length === 0) return false;
    const method = scope.req.method ?? 'GET';
    const prefix = scope.rawPath.slice(0, scope.rawPath.length - (path === '/' ? 0 : path.length));
    const host = scope.req.headers.host ?? 'localhost';
    const base = `https://${host}${prefix === '/' ? '' : prefix}`;
    for (const source of sources) {
      const doc = await source.document(path, base);
      if (!doc) continue;
      await this.beginUnauthenticated(
        scope,
        newRequestInfo(method, path, scope),
      );
      if (method !== 'GET' && method !== 'HEAD') throw newMethodNotAllowed();
      writeBytes(scope.res, 200, doc.contentType, `${JSON.stringify(doc.body)}\n`, {
        'Cache-Control': `public, max-age=${doc.maxAgeSeconds}`,
      });
      return true;
    }
    return false;
  }

  /**
   * Whether the request names what this server serves: a resource (and subresource)
   * of a served group version, or a document or /metrics off the API. Bounds the
   * labels of a request that is counted before it was routed.
   */
  private servesRequest(info: RequestInfo): boolean {
    if (info.isResourceRequest) return servesSubresource(this.storageFor(info), info);
    const path = info.path.length > 1 && info.path.endsWith('/') ? info.path.slice(0, -1) : info.path;
    return (path === METRICS_PATH && this.metrics !== undefined) || this.documents.has(path);
  }

  /** The storage serving the request's resource, when this server serves it. */
  private storageFor(info: RequestInfo): RESTStorage | undefined {
    if (info.apiPrefix !== 'apis') return undefined;
    return info.apiGroup === this.config.group && info.apiVersion === this.config.version
      ? this.resources.get(info.resource)
      : this.builtin.get(`${info.apiGroup}/${info.apiVersion}`)?.get(info.resource);
  }

  private async serve(scope: RequestScope): Promise<void> {
    const { req, res } = scope;
    const method = req.method ?? 'GET';
    const path = stripPrefix(scope.rawPath, this.prefixes);

    // Probes and /version need no credentials (kubelet and load balancers have none).
    const health = matchHealth(path);
    if (health) {
      const info = newRequestInfo(method, path, scope);
      await this.beginUnauthenticated(scope, info);
      // Probes are recorded as upstream's healthz handlers record them: component ''.
      this.metrics?.route(req, res, info, scope.rawQuery, '');
      await this.health.serve(res, health[0], health[1], scope.hasQuery ? scope.query : undefined);
      return;
    }
    if (path === '/version' || path === '/version/') {
      await this.beginUnauthenticated(
        scope,
        newRequestInfo(method, path, scope),
      );
      if (method !== 'GET' && method !== 'HEAD') throw newMethodNotAllowed();
      writeBytes(res, 200, 'application/json', this.versionBytes);
      return;
    }
    // The API's own paths are never a public document: no look-up (an async call) for them.
    if (!isApiPath(path) && (await this.servePublicDocument(scope, path))) return;
    // The console's page and assets hold no secret; it then calls the API with the user's key.
    if (this.console.matches(path)) {
      await this.beginUnauthenticated(
        scope,
        newRequestInfo(method, path, scope),
      );
      return this.console.serve(req, res, path, scope.rawPath, scope.rawQuery);
    }

    const info = newRequestInfo(method, path, scope);
    // Each step below answers synchronously when it can: awaited only when it did not.
    try {
      const user = authenticate(this.config.authenticator, req, this.config.logger);
      scope.user = user instanceof Promise ? await user : user;
    } catch (err) {
      this.audit?.failedAuthentication(scope, info);
      throw err;
    }
    scope.info = info;
    if (this.audit) {
      const begun = this.audit.begin(scope, info, scope.user);
      if (begun) await begun;
    }
    // Upstream's WithImpersonation sits here: after audit, before max-in-flight and authorization.
    if (hasImpersonationHeaders(req))
      scope.user = await impersonate(this.config.authorizer, scope, this.config.logger);
    // Upstream's order: authentication, audit, then max-in-flight / fair queuing, then authorization.
    if (this.maxInflight) {
      const admitted = this.maxInflight.admit(res, info, scope.user, () => scope.signal);
      if (admitted instanceof Promise) await admitted;
    }
    const allowed = authorize(this.config.authorizer, attributesFor(scope.user, info), scope.audit);
    if (allowed instanceof Promise) await allowed;

    if (!info.isResourceRequest) {
      const docPath = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
      if (method !== 'GET' && method !== 'HEAD') {
        if (
          docPath === '/api' ||
          docPath === '/apis' ||
          docPath.startsWith('/apis/') ||
          docPath.startsWith('/openapi/')
        ) {
          throw newMethodNotAllowed();
        }
        writeNotFoundPage(res);
        return;
      }
      if (docPath === METRICS_PATH && this.metrics) {
        this.metrics.route(req, res, info, scope.rawQuery);
        const { contentType, body } = await exposition();
        writeBytes(res, 200, contentType, body);
        return;
      }
      if (this.documents.serve(scope, docPath)) this.metrics?.route(req, res, info, scope.rawQuery);
      else writeNotFoundPage(res);
      return;
    }

    const storage = this.storageFor(info);
    if (!storage) throw newResourceNotFound();
    if (servesSubresource(storage, info)) this.metrics?.route(req, res, info, scope.rawQuery);
    // Watches are long-running: they end on their own timeout (see watch.ts).
    // Returned, not awaited: a watch lives long, and a frame waiting on it is heap per watch.
    if (info.verb === 'watch') return serveResource(scope, storage, this.env);
    const deadline = this.timeouts.arm(scope);
    // Its storage calls work under the request's deadline: the registry passes it down
    // with each call (scope.context().deadline).
    if (this.storageDeadlines) scope.storageDeadline = deadline;
    return serveResource(scope, storage, this.env);
  }
}
