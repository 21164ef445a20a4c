// TEST DOUBLE of a host cluster's aggregation layer (kube-aggregator inside
// kube-apiserver) - not kube-aggregator. It stands in front of one aggregated API
// server registered by one APIService, in-process, over real HTTPS on 127.0.0.1,
// and does what kube-aggregator does with it (kube-aggregator @232ca687):
//
//   clients     authenticated by bearer tokens the test registers (user, groups,
//               extra; `system:authenticated` added, as kube-apiserver does); no
//               token or an unknown one is a 401 Status. No client certificates,
//               no impersonation, and no authorization of its own: every
//               authenticated request is passed on, as if RBAC allowed it.
//   proxy       /apis/<group>/<version>[/...] and the /openapi/v3/<path>s the
//               server's OpenAPI root lists (pkg/apiserver/handler_proxy.go): 503
//               text/plain "service unavailable" until the Available condition is
//               True; otherwise to the Service endpoint over TLS verified against
//               the APIService caBundle with ServerName <service>.<namespace>.svc,
//               authenticating with the proxy client (front-proxy) certificate;
//               the client's Authorization, Impersonate-*, X-Remote-* and
//               hop-by-hop headers dropped and X-Remote-User/-Group/-Extra-* set
//               from the authenticated user (client-go SetAuthProxyHeaders);
//               query re-encoded; responses streamed as they arrive (watches),
//               with a 5 s deadline on the discovery path /apis/<g>/<v> only;
//               backend errors as 503 text/plain. Upgrades (exec, SPDY,
//               websockets) are not implemented.
//   availability checkAvailability(): the remote available controller's probe
//               (pkg/controllers/status/remote): five parallel GETs of
//               /apis/<group>/<version> as system:kube-aggregator in
//               system:masters, fresh TLS connections, 5 s each, redirects not
//               followed; any 2xx/3xx makes the APIService Available (reason
//               Passed, "all checks passed"), otherwise False/FailedDiscoveryCheck
//               with the last error. No Service/EndpointSlice checks: the
//               endpoint is given.
//   discovery   syncDiscovery(): the discovery manager (handler_discovery.go):
//               GET /apis through the proxy as system:kube-aggregator +
//               system:masters with the v2 Accept header, If-None-Match with the
//               cached ETag, 5 s; 304 keeps the cache; 503 is an error; 200 with
//               the v2 Content-Type is decoded; anything else falls back to
//               /apis/<group>/<version> (Accept: application/json, no groups;
//               also on its own as fetchLegacyDiscovery()).
//               Only this APIService's group/version entry is published, as
//               Current, or as an empty Stale version after an error.
//   openapi     syncOpenAPI(): the v2 and v3 aggregation controllers' downloads
//               (controllers/openapi*/aggregator/downloader.go) as system:aggregator:
//               /openapi/v2 with Accept application/json and If-None-Match (unless
//               the ETag was made up locally), 404 tolerated; /openapi/v3 root with
//               no Accept header, 404 meaning "legacy" (the v2-to-v3 conversion
//               kube-aggregator then does is not implemented).
//   served      /api (no core group), /apis (v2 aggregated with ETag/304, or an
//               APIGroupList), /apis/<group>, /version, /openapi/v2 (JSON, or gnostic
//               protobuf for kubectl <= 1.2x) and the merged
//               /openapi/v3 root from what was fetched, and APIService objects
//               (get, list, Table) under apiregistration.k8s.io so
//               `kubectl get apiservice` shows the condition.
//
// Controllers run when a test calls them (sync() runs all three), not on timers,
// so tests are deterministic. Never imported by production code.

import { randomUUID } from 'node:crypto';
import { createServer, request, Agent, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serializeKubeConfig, singleContextKubeConfig } from '../../kubeconfig/index.js';
import {
  APIREGISTRATION,
  apiServiceResponse,
  type APIServiceCondition,
  type APIServiceSpec,
} from './aggregator-apiservice.js';
import { serveMergedOpenAPIV2 } from './aggregator-openapi.js';
import {
  ACCEPT_DISCOVERY_V2,
  authProxyHeaders,
  convertLegacyResources,
  HOP_BY_HOP,
  ifNoneMatchHits,
  isDiscoveryV2ContentType,
  isDroppedRequestHeader,
  quotedEtag,
  reencodeQuery,
  type GroupDiscoveryList,
  type LegacyAPIResource,
  type ProxiedUser,
  type VersionDiscovery,
} from './aggregator-wire.js';
import { issueServingCertificate, newCertificateAuthority, type CertificateAuthority } from './pki.js';

export type { APIServiceCondition, APIServiceSpec } from './aggregator-apiservice.js';

/** A user the double authenticates by bearer token. */
export interface AggregatorUser {
  readonly username: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AggregatorController = 'availability' | 'discovery' | 'openapi-v2' | 'openapi-v3';

/** One request a controller of the double made to the aggregated server, and its answer. */
export interface AggregatorFetch {
  readonly controller: AggregatorController;
  readonly path: string;
  readonly user: ProxiedUser;
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface DiscoverySyncResult {
  /** The entry now published under /apis for this APIService's group/version. */
  readonly entry: VersionDiscovery;
  /** Why the entry is Stale; undefined when Current. */
  readonly error?: string;
}

export interface OpenAPISyncResult {
  readonly v2: { readonly status: number; readonly etag: string; readonly error?: string };
  readonly v3: { readonly status: number; readonly legacy: boolean; readonly error?: string };
}

export interface AggregatorDoubleOptions {
  readonly apiService: APIServiceSpec;
  /** Where the Service routes to (what endpoint resolution would give): the aggregated server's address. */
  readonly endpoint: { readonly host: string; readonly port: number };
  /** kube-apiserver's --proxy-client-cert-file/--proxy-client-key-file: a front-proxy client certificate. */
  readonly proxyClient: { readonly certPem: string; readonly keyPem: string };
}

const KUBE_AGGREGATOR: ProxiedUser = { name: 'system:kube-aggregator', groups: ['system:masters'] };
const KUBE_AGGREGATOR_NO_GROUPS: ProxiedUser = { name: 'system:kube-aggregator', groups: [] };
const OPENAPI_AGGREGATOR: ProxiedUser = { name: 'system:aggregator', groups: [] };
const AUTHENTICATED = 'system:authenticated';
const DISCOVERY_TIMEOUT_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;
const PROBE_HARD_TIMEOUT_MS = 6_000;
const PROBE_ATTEMPTS = 5;
const OPENAPI_TIMEOUT_MS = 60_000;
/** kube-aggregator marks ETags it computed itself with this prefix and never sends them. */
const LOCAL_ETAG_PREFIX = '"6E8F849B434D4B98A569B9D7718876E9-';

interface Captured {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export class AggregatorDouble {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Signs the double's serving certificate: what clients trust. */
  readonly ca: CertificateAuthority;
  /** Every request the controllers made, in order. */
  readonly fetches: AggregatorFetch[] = [];

  private readonly tokens = new Map<string, AggregatorUser>();
  private readonly sockets = new Set<Socket>();
  private readonly agent: Agent;
  private readonly uid = randomUUID();
  private readonly created = new Date(Math.floor(Date.now() / 1000) * 1000);
  private condition: APIServiceCondition | undefined;
  private discoveryCache: { byGroupVersion: Map<string, VersionDiscovery>; etag: string } | undefined;
  private published: VersionDiscovery | undefined;
  private openAPIV2: { body: string; etag: string; served: string } | undefined;
  private openAPIV2Etag = '';
  private openAPIV3Paths: Record<string, unknown> | undefined;
  private openAPIV3Legacy = false;
  private resourceVersion = 1;

  private constructor(
    private readonly server: Server,
    url: string,
    ca: CertificateAuthority,
    private readonly options: AggregatorDoubleOptions,
  ) {
    this.url = url;
    this.ca = ca;
    this.agent = new Agent({ keepAlive: true });
  }

  static async start(options: AggregatorDoubleOptions): Promise<AggregatorDouble> {
    const ca = newCertificateAuthority('aggregator-double-ca');
    const serving = issueServingCertificate(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const server = createServer({ cert: serving.certPem, key: serving.keyPem });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const double = new AggregatorDouble(server, `https://127.0.0.1:${port}`, ca, options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => double.handle(req, res));
    server.on('connection', (socket: Socket) => {
      double.sockets.add(socket);
      socket.once('close', () => double.sockets.delete(socket));
    });
    return double;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    await closed;
  }

  /** `v<version>.<group>`, the APIService's name. */
  get apiServiceName(): string {
    return `${this.options.apiService.version}.${this.options.apiService.group}`;
  }

  /** The Available condition, once checkAvailability() has run. */
  get availableCondition(): APIServiceCondition | undefined {
    return this.condition;
  }

  /** The version entry published under /apis, once syncDiscovery() has run. */
  get publishedDiscovery(): VersionDiscovery | undefined {
    return this.published;
  }

  /** The OpenAPI v3 root paths fetched from the server (e.g. `apis/<group>/<version>`). */
  get openAPIV3RootPaths(): Readonly<Record<string, unknown>> | undefined {
    return this.openAPIV3Paths;
  }

  /** Registers a bearer token for a client of the double. */
  addToken(token: string, user: AggregatorUser): void {
    this.tokens.set(token, user);
  }

  /** A kube config pointing at the double with a bearer token. */
  kubeconfig(token: string): string {
    const user = this.tokens.get(token)?.username ?? 'user';
    return serializeKubeConfig(
      singleContextKubeConfig({
        contextName: 'aggregator',
        clusterName: 'aggregator',
        userName: user,
        cluster: { server: this.url, caPem: this.ca.certPem },
        user: { token },
      }),
    );
  }

  /** Runs the three controllers once, as kube-aggregator does when an APIService appears. */
  async sync(): Promise<void> {
    await this.checkAvailability();
    await this.syncDiscovery();
    await this.syncOpenAPI();
  }

  // ---- the availability controller ----

  async checkAvailability(): Promise<APIServiceCondition> {
    const { group, version } = this.options.apiService;
    const { host, port } = this.options.endpoint;
    const path = `/apis/${group}/${version}`;
    const url = `https://${host}:${port}${path}`;
    const attempt = async (): Promise<string | undefined> => {
      let timer: NodeJS.Timeout | undefined;
      const hard = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`timed out waiting for ${url}`), PROBE_HARD_TIMEOUT_MS);
      });
      const probe = this.send('availability', KUBE_AGGREGATOR, 'GET', path, {}, PROBE_TIMEOUT_MS, false).then(
        (r) =>
          r.status >= 200 && r.status < 300
            ? undefined
            : r.status >= 300 && r.status < 400
              ? undefined
              : `failing or missing response from ${url}: bad status from ${url}: ${r.status}`,
        (err: Error) => `failing or missing response from ${url}: Get "${url}": ${err.message}`,
      );
      try {
        return await Promise.race([probe, hard]);
      } finally {
        clearTimeout(timer);
      }
    };
    const results = await Promise.all(Array.from({ length: PROBE_ATTEMPTS }, attempt));
    const failures = results.filter((r): r is string => r !== undefined);
    const passed = failures.length < results.length;
    this.setCondition(
      passed
        ? { status: 'True', reason: 'Passed', message: 'all checks passed' }
        : { status: 'False', reason: 'FailedDiscoveryCheck', message: failures[failures.length - 1] ?? '' },
    );
    return this.condition as APIServiceCondition;
  }

  private setCondition(next: Pick<APIServiceCondition, 'status' | 'reason' | 'message'>): void {
    const previous = this.condition;
    const lastTransitionTime =
      previous && previous.status === next.status
        ? previous.lastTransitionTime
        : new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    if (
      previous?.status !== next.status ||
      previous.reason !== next.reason ||
      previous.message !== next.message
    )
      this.resourceVersion++;
    this.condition = { type: 'Available', ...next, lastTransitionTime };
  }

  // ---- the discovery manager ----

  async syncDiscovery(): Promise<DiscoverySyncResult> {
    const { group, version } = this.options.apiService;
    const key = `${group}/${version}`;
    let found: Map<string, VersionDiscovery> | undefined;
    let error: string | undefined;
    const cached = this.discoveryCache;
    const headers: Record<string, string> = { Accept: ACCEPT_DISCOVERY_V2 };
    if (cached && cached.etag) headers['If-None-Match'] = cached.etag;
    const r = await this.throughProxy('discovery', KUBE_AGGREGATOR, '/apis', headers, DISCOVERY_TIMEOUT_MS);
    const contentType = headerValue(r.headers, 'content-type');
    if (r.status === 304) {
      found = cached?.byGroupVersion;
    } else if (r.status === 503) {
      error = `service ${this.serviceKey()} returned non-success response code: 503`;
    } else if (r.status === 200 && isDiscoveryV2ContentType(contentType)) {
      try {
        found = discoveryMap(JSON.parse(r.body) as GroupDiscoveryList);
        this.discoveryCache = { byGroupVersion: found, etag: headerValue(r.headers, 'etag') ?? '' };
      } catch (err) {
        error = (err as Error).message;
      }
    } else {
      // Not aggregated discovery: the legacy document of exactly this group version.
      const legacy = await this.fetchLegacyDiscovery(cached?.etag);
      if (legacy.error !== undefined) error = legacy.error;
      else if (legacy.entry) found = new Map([[key, legacy.entry]]);
    }
    const entry: VersionDiscovery = { ...(found?.get(key) ?? { version }) };
    entry.freshness = error === undefined ? 'Current' : 'Stale';
    this.published = entry;
    return error === undefined ? { entry } : { entry, error };
  }

  /**
   * The discovery manager's fallback request on its own: `/apis/<group>/<version>`
   * through the proxy as system:kube-aggregator without groups, Accept
   * application/json, converted to a v2 version entry as kube-aggregator converts it.
   */
  async fetchLegacyDiscovery(etag?: string): Promise<{ entry?: VersionDiscovery; error?: string }> {
    const { group, version } = this.options.apiService;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (etag) headers['If-None-Match'] = etag;
    const path = `/apis/${group}/${version}`;
    const r = await this.throughProxy(
      'discovery',
      KUBE_AGGREGATOR_NO_GROUPS,
      path,
      headers,
      DISCOVERY_TIMEOUT_MS,
    );
    if (r.status !== 200) return { error: `failed to download legacy discovery for ${path}: ${r.body}` };
    try {
      const list = JSON.parse(r.body) as { resources?: LegacyAPIResource[] };
      return { entry: convertLegacyResources(version, list.resources ?? []) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  private serviceKey(): string {
    const { namespace, name } = this.options.apiService.service;
    return `${namespace}/${name}`;
  }

  // ---- the OpenAPI aggregation controllers ----

  async syncOpenAPI(): Promise<OpenAPISyncResult> {
    // v2 (controllers/openapi): If-None-Match only with an ETag the server sent.
    const v2Headers: Record<string, string> = { Accept: 'application/json' };
    if (this.openAPIV2Etag && !this.openAPIV2Etag.startsWith(LOCAL_ETAG_PREFIX))
      v2Headers['If-None-Match'] = this.openAPIV2Etag;
    const v2 = await this.throughProxy(
      'openapi-v2',
      OPENAPI_AGGREGATOR,
      '/openapi/v2',
      v2Headers,
      OPENAPI_TIMEOUT_MS,
    );
    let v2Result: OpenAPISyncResult['v2'];
    if (v2.status === 304) {
      v2Result = this.openAPIV2Etag
        ? { status: 304, etag: this.openAPIV2Etag }
        : { status: 304, etag: '', error: 'http.StatusNotModified is not allowed in absence of etag' };
    } else if (v2.status === 404) {
      this.openAPIV2Etag = '';
      v2Result = { status: 404, etag: '' };
    } else if (v2.status === 200) {
      try {
        JSON.parse(v2.body);
        const sent = headerValue(v2.headers, 'etag');
        const etag = sent ?? `${LOCAL_ETAG_PREFIX}${quotedEtag(v2.body).slice(1)}`;
        this.openAPIV2Etag = etag;
        this.openAPIV2 = { body: v2.body, etag, served: quotedEtag(v2.body) };
        v2Result = { status: 200, etag };
      } catch (err) {
        v2Result = { status: 200, etag: this.openAPIV2Etag, error: (err as Error).message };
      }
    } else {
      v2Result = {
        status: v2.status,
        etag: this.openAPIV2Etag,
        error: `failed to retrieve openAPI spec, http error: ${v2.body}`,
      };
    }

    // v3 (controllers/openapiv3): the root only; group documents are proxied on demand.
    const v3 = await this.throughProxy(
      'openapi-v3',
      OPENAPI_AGGREGATOR,
      '/openapi/v3',
      {},
      OPENAPI_TIMEOUT_MS,
    );
    let v3Result: OpenAPISyncResult['v3'];
    if (v3.status === 404) {
      this.openAPIV3Legacy = true;
      this.openAPIV3Paths = undefined;
      v3Result = { status: 404, legacy: true };
    } else if (v3.status === 200) {
      try {
        const root = JSON.parse(v3.body) as { paths?: Record<string, unknown> };
        this.openAPIV3Paths = root.paths ?? {};
        this.openAPIV3Legacy = false;
        v3Result = { status: 200, legacy: false };
      } catch (err) {
        v3Result = { status: 200, legacy: this.openAPIV3Legacy, error: (err as Error).message };
      }
    } else {
      v3Result = {
        status: v3.status,
        legacy: this.openAPIV3Legacy,
        error: 'Error, could not get list of group versions for APIService',
      };
    }
    return { v2: v2Result, v3: v3Result };
  }

  // ---- talking to the aggregated server ----

  private tlsOptions(): {
    host: string;
    port: number;
    servername: string;
    ca?: string;
    cert: string;
    key: string;
    rejectUnauthorized: boolean;
  } {
    const { apiService, endpoint, proxyClient } = this.options;
    const insecure = apiService.insecureSkipTLSVerify === true;
    return {
      host: endpoint.host,
      port: endpoint.port,
      // BuildTransportConfig: the certificate must name the Service, whatever address it is reached at.
      servername: `${apiService.service.name}.${apiService.service.namespace}.svc`,
      ...(apiService.caBundle ? { ca: apiService.caBundle } : {}),
      cert: proxyClient.certPem,
      key: proxyClient.keyPem,
      rejectUnauthorized: !insecure,
    };
  }

  /**
   * One request from a controller, recorded. `pooled` false opens a fresh
   * connection (the availability check builds a new transport each sync).
   */
  private send(
    controller: AggregatorController,
    user: ProxiedUser,
    method: string,
    path: string,
    headers: Record<string, string>,
    timeoutMs: number,
    pooled = true,
  ): Promise<Captured> {
    const outgoing: OutgoingHttpHeaders = { ...headers };
    for (const [name, value] of authProxyHeaders(user)) appendHeader(outgoing, name, value);
    return new Promise<Captured>((resolve, reject) => {
      const req = request(
        {
          ...this.tlsOptions(),
          method,
          path,
          headers: outgoing,
          agent: pooled ? this.agent : false,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const captured = {
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            };
            this.fetches.push({ controller, path, user, requestHeaders: headers, ...captured });
            resolve(captured);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('Client.Timeout exceeded while awaiting headers')));
      req.on('error', reject);
      req.end();
    });
  }

  /**
   * A controller's request through the proxy handler, as kube-aggregator makes
   * them (in memory, wrapped in http.TimeoutHandler): 503 while unavailable, the
   * backend's answer, 503 with the error when it cannot be reached.
   */
  private async throughProxy(
    controller: AggregatorController,
    user: ProxiedUser,
    path: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<Captured> {
    if (this.condition?.status !== 'True') {
      const unavailable = {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'service unavailable\n',
      };
      this.fetches.push({ controller, path, user, requestHeaders: headers, ...unavailable });
      return unavailable;
    }
    try {
      return await this.send(controller, user, 'GET', path, headers, timeoutMs);
    } catch (err) {
      const timedOut = (err as Error).message.includes('Timeout');
      const failed = {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: timedOut ? 'request timed out' : `${(err as Error).message}\n`,
      };
      this.fetches.push({ controller, path, user, requestHeaders: headers, ...failed });
      return failed;
    }
  }

  // ---- serving clients ----

  private handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.route(req, res);
    } catch (err) {
      if (!res.headersSent) writeStatus(res, 500, 'InternalError', (err as Error).message);
      else res.destroy();
    }
  }

  private authenticate(req: IncomingMessage): ProxiedUser | undefined {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const user = m?.[1] ? this.tokens.get(m[1]) : undefined;
    if (!user) return undefined;
    const groups = [...(user.groups ?? [])];
    if (!groups.includes(AUTHENTICATED)) groups.push(AUTHENTICATED);
    return { name: user.username, groups, ...(user.extra ? { extra: user.extra } : {}) };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const rawQuery = q < 0 ? '' : target.slice(q + 1);
    const user = this.authenticate(req);
    if (!user) {
      writeStatus(res, 401, 'Unauthorized', 'Unauthorized');
      return;
    }
    const { group, version } = this.options.apiService;
    const proxied = `/apis/${group}/${version}`;
    if (path === proxied || path.startsWith(`${proxied}/`)) {
      this.proxy(req, res, user, path, rawQuery);
      return;
    }
    if (path.startsWith('/openapi/v3/')) {
      // handleGroupVersion: proxied only when the server's own root lists the path.
      const gv = path.slice('/openapi/v3/'.length);
      if (this.openAPIV3Paths && gv in this.openAPIV3Paths) this.proxy(req, res, user, path, rawQuery);
      else writePlain(res, 404, '');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      writeStatus(
        res,
        405,
        'MethodNotAllowed',
        `the server does not allow this method on the requested resource`,
      );
      return;
    }
    const accept = req.headers.accept ?? '';
    const services = `/apis/${APIREGISTRATION}/v1/apiservices`;
    switch (path) {
      case '/api':
        if (wantsDiscoveryV2(accept)) this.writeDiscoveryV2(req, res, { items: [] });
        else writeJSON(res, 200, { kind: 'APIVersions', versions: [], serverAddressByClientCIDRs: [] });
        return;
      case '/apis':
        if (wantsDiscoveryV2(accept)) this.writeDiscoveryV2(req, res, { items: this.discoveryItems() });
        else writeJSON(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: this.apiGroups() });
        return;
      case `/apis/${group}`:
        writeJSON(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...this.apiGroups()[1] });
        return;
      case `/apis/${APIREGISTRATION}`:
        writeJSON(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...this.apiGroups()[0] });
        return;
      case `/apis/${APIREGISTRATION}/v1`:
        writeJSON(res, 200, {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: `${APIREGISTRATION}/v1`,
          resources: [
            {
              name: 'apiservices',
              singularName: 'apiservice',
              namespaced: false,
              kind: 'APIService',
              verbs: ['get', 'list'],
              categories: ['api-extensions'],
            },
          ],
        });
        return;
      case services:
        this.writeAPIServices(res, accept, undefined);
        return;
      case `${services}/${this.apiServiceName}`:
        this.writeAPIServices(res, accept, this.apiServiceName);
        return;
      case '/version':
        writeJSON(res, 200, {
          major: '1',
          minor: '32',
          gitVersion: 'v1.32.0-aggregator-double',
          gitCommit: '',
          gitTreeState: 'clean',
          buildDate: this.created.toISOString(),
          goVersion: 'go1.23',
          compiler: 'gc',
          platform: 'linux/amd64',
        });
        return;
      case '/openapi/v2':
        this.writeOpenAPIV2(req, res);
        return;
      case '/openapi/v3': {
        // The merged root: the server's paths (nothing built in here).
        writeJSON(res, 200, { paths: this.openAPIV3Paths ?? {} });
        return;
      }
      default:
        if (path.startsWith(`${services}/`)) {
          writeStatus(
            res,
            404,
            'NotFound',
            `apiservices.${APIREGISTRATION} "${path.slice(services.length + 1)}" not found`,
            {
              name: path.slice(services.length + 1),
              group: APIREGISTRATION,
              kind: 'apiservices',
            },
          );
          return;
        }
        writePlain(res, 404, '404 page not found\n');
    }
  }

  private proxy(
    req: IncomingMessage,
    res: ServerResponse,
    user: ProxiedUser,
    path: string,
    rawQuery: string,
  ): void {
    if (this.condition?.status !== 'True') {
      writePlain(res, 503, 'service unavailable\n');
      return;
    }
    const headers: OutgoingHttpHeaders = {};
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] ?? '';
      if (!isDroppedRequestHeader(name)) appendHeader(headers, name, raw[i + 1] ?? '');
    }
    for (const [name, value] of authProxyHeaders(user)) appendHeader(headers, name, value);
    appendHeader(headers, 'X-Forwarded-For', req.socket.remoteAddress ?? '127.0.0.1');
    const query = reencodeQuery(rawQuery);
    const upstream = request({
      ...this.tlsOptions(),
      agent: this.agent,
      method: req.method ?? 'GET',
      path: query ? `${path}?${query}` : path,
      headers,
    });
    // Only discovery of the group version has a deadline; watches and other long requests have none.
    const { group, version } = this.options.apiService;
    const deadline =
      path === `/apis/${group}/${version}`
        ? setTimeout(() => upstream.destroy(new Error('context deadline exceeded')), DISCOVERY_TIMEOUT_MS)
        : undefined;
    upstream.on('response', (answer) => {
      const out: OutgoingHttpHeaders = {};
      const rawOut = answer.rawHeaders;
      for (let i = 0; i + 1 < rawOut.length; i += 2) {
        const name = rawOut[i] ?? '';
        if (!HOP_BY_HOP.has(name.toLowerCase())) appendHeader(out, name, rawOut[i + 1] ?? '');
      }
      res.writeHead(answer.statusCode ?? 502, out);
      res.flushHeaders();
      answer.pipe(res);
      answer.on('end', () => clearTimeout(deadline));
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => {
      clearTimeout(deadline);
      if (!res.headersSent) writePlain(res, 503, `${err.message}\n`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private apiGroups(): { name: string; versions: unknown[]; preferredVersion: unknown }[] {
    const { group, version } = this.options.apiService;
    const gv = (g: string, v: string): { groupVersion: string; version: string } => ({
      groupVersion: `${g}/${v}`,
      version: v,
    });
    return [
      {
        name: APIREGISTRATION,
        versions: [gv(APIREGISTRATION, 'v1')],
        preferredVersion: gv(APIREGISTRATION, 'v1'),
      },
      { name: group, versions: [gv(group, version)], preferredVersion: gv(group, version) },
    ];
  }

  /** The merged v2 document: apiregistration first, then the APIService's group once discovery synced. */
  private discoveryItems(): GroupDiscoveryList['items'] {
    const items: GroupDiscoveryList['items'] = [
      {
        metadata: { name: APIREGISTRATION },
        versions: [
          {
            version: 'v1',
            freshness: 'Current',
            resources: [
              {
                resource: 'apiservices',
                responseKind: { group: APIREGISTRATION, version: 'v1', kind: 'APIService' },
                scope: 'Cluster',
                singularResource: 'apiservice',
                verbs: ['get', 'list'],
                categories: ['api-extensions'],
              },
            ],
          },
        ],
      },
    ];
    if (this.published)
      items.push({ metadata: { name: this.options.apiService.group }, versions: [this.published] });
    return items;
  }

  private writeDiscoveryV2(
    req: IncomingMessage,
    res: ServerResponse,
    doc: Pick<GroupDiscoveryList, 'items'>,
  ): void {
    const body = JSON.stringify({
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      metadata: {},
      ...doc,
    });
    const etag = quotedEtag(body);
    res.setHeader('Vary', 'Accept');
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'public');
    if (ifNoneMatchHits(req.headers['if-none-match'], etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    writeBody(res, 200, ACCEPT_DISCOVERY_V2, body);
  }

  private writeOpenAPIV2(req: IncomingMessage, res: ServerResponse): void {
    const doc = this.openAPIV2;
    if (!doc) {
      writeStatus(res, 503, 'ServiceUnavailable', 'the OpenAPI v2 document has not been aggregated yet');
      return;
    }
    // kube-openapi's handler serves the merged document as JSON or, to kubectl up to
    // 1.2x, as gnostic protobuf (a representation with its own ETag).
    serveMergedOpenAPIV2(req, res, doc);
  }

  /** The APIService as kube-aggregator's registry serves it: object, list or Table. */
  private writeAPIServices(res: ServerResponse, accept: string, name: string | undefined): void {
    const state = {
      name: this.apiServiceName,
      uid: this.uid,
      resourceVersion: this.resourceVersion,
      created: this.created,
      spec: this.options.apiService,
      condition: this.condition,
      serviceKey: this.serviceKey(),
    };
    writeJSON(res, 200, apiServiceResponse(state, accept, name !== undefined));
  }
}

function discoveryMap(doc: GroupDiscoveryList): Map<string, VersionDiscovery> {
  const out = new Map<string, VersionDiscovery>();
  for (const g of doc.items ?? []) {
    for (const v of g.versions ?? []) {
      // An absent responseKind becomes an empty one (kube-aggregator guards old clients from nil).
      for (const r of v.resources ?? []) {
        r.responseKind ??= { group: '', version: '', kind: '' };
        for (const s of r.subresources ?? []) s.responseKind ??= { group: '', version: '', kind: '' };
      }
      out.set(`${g.metadata.name}/${v.version}`, v);
    }
  }
  return out;
}

function wantsDiscoveryV2(accept: string): boolean {
  return accept.split(',').some((part) => isDiscoveryV2ContentType(part));
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function appendHeader(headers: OutgoingHttpHeaders, name: string, value: string): void {
  const existing = headers[name];
  if (existing === undefined) headers[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else headers[name] = [String(existing), value];
}

function writeBody(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function writeJSON(res: ServerResponse, status: number, obj: unknown): void {
  writeBody(res, status, 'application/json', JSON.stringify(obj));
}

/** Go's http.Error: text/plain, nosniff. */
function writePlain(res: ServerResponse, status: number, text: string): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  writeBody(res, status, 'text/plain; charset=utf-8', text);
}

function writeStatus(
  res: ServerResponse,
  code: number,
  reason: string,
  message: string,
  details?: Record<string, unknown>,
): void {
  writeJSON(res, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  });
}
