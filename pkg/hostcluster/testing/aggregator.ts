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
//
// This file holds the server and the routes of what the aggregator serves itself;
// the rest has a module of its own: aggregator-availability.ts (the availability
// controller), aggregator-proxy.ts (the connection to the aggregated server, the proxy),
// aggregator-discovery.ts (the discovery manager and the discovery documents),
// aggregator-openapi-download.ts (the OpenAPI controllers), aggregator-openapi.ts
// and aggregator-openapi-proto.ts (serving /openapi/v2 as JSON or gnostic
// protobuf), aggregator-apiservice.ts (the APIService objects) and
// aggregator-wire.ts / aggregator-http.ts (headers and bodies).

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serializeKubeConfig, singleContextKubeConfig } from '../../kubeconfig/index.js';
import { APIREGISTRATION, apiServiceResponse, type APIServiceCondition } from './aggregator-apiservice.js';
import { AvailabilityController } from './aggregator-availability.js';
import {
  DiscoveryManager,
  serviceKey,
  wantsDiscoveryV2,
  type DiscoverySyncResult,
} from './aggregator-discovery.js';
import { writeJSON, writePlain, writeStatus } from './aggregator-http.js';
import { OpenAPIAggregation, type OpenAPISyncResult } from './aggregator-openapi-download.js';
import {
  AggregatedServerConnection,
  type AggregatorDoubleOptions,
  type AggregatorFetch,
} from './aggregator-proxy.js';
import type { ProxiedUser, VersionDiscovery } from './aggregator-wire.js';
import { issueServingCertificate, newCertificateAuthority, type CertificateAuthority } from './pki.js';

export type { APIServiceCondition, APIServiceSpec } from './aggregator-apiservice.js';
export type { DiscoverySyncResult } from './aggregator-discovery.js';
export type { OpenAPISyncResult } from './aggregator-openapi-download.js';
export type { AggregatorController, AggregatorDoubleOptions, AggregatorFetch } from './aggregator-proxy.js';

/** A user the double authenticates by bearer token. */
export interface AggregatorUser {
  readonly username: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

const AUTHENTICATED = 'system:authenticated';

export class AggregatorDouble {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Signs the double's serving certificate: what clients trust. */
  readonly ca: CertificateAuthority;
  /** Every request the controllers made, in order. */
  readonly fetches: AggregatorFetch[];

  private readonly tokens = new Map<string, AggregatorUser>();
  private readonly sockets = new Set<Socket>();
  private readonly connection: AggregatedServerConnection;
  private readonly discovery: DiscoveryManager;
  private readonly openapi: OpenAPIAggregation;
  private readonly availability: AvailabilityController;
  private readonly uid = randomUUID();
  private readonly created = new Date(Math.floor(Date.now() / 1000) * 1000);

  private constructor(
    private readonly server: Server,
    url: string,
    ca: CertificateAuthority,
    private readonly options: AggregatorDoubleOptions,
  ) {
    this.url = url;
    this.ca = ca;
    this.connection = new AggregatedServerConnection(
      options,
      () => this.availability.condition?.status === 'True',
    );
    this.availability = new AvailabilityController(options, this.connection);
    this.fetches = this.connection.fetches;
    this.discovery = new DiscoveryManager(options.apiService, this.connection);
    this.openapi = new OpenAPIAggregation(this.connection);
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
    this.connection.destroy();
    await closed;
  }

  /** `v<version>.<group>`, the APIService's name. */
  get apiServiceName(): string {
    return `${this.options.apiService.version}.${this.options.apiService.group}`;
  }

  /** The Available condition, once checkAvailability() has run. */
  get availableCondition(): APIServiceCondition | undefined {
    return this.availability.condition;
  }

  /** The version entry published under /apis, once syncDiscovery() has run. */
  get publishedDiscovery(): VersionDiscovery | undefined {
    return this.discovery.published;
  }

  /** The OpenAPI v3 root paths fetched from the server (e.g. `apis/<group>/<version>`). */
  get openAPIV3RootPaths(): Readonly<Record<string, unknown>> | undefined {
    return this.openapi.v3Paths;
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

  /** The availability controller's probe: five GETs of /apis/<group>/<version>; sets the Available condition. */
  checkAvailability(): Promise<APIServiceCondition> {
    return this.availability.check();
  }

  // ---- the discovery manager and the OpenAPI controllers (modules of their own) ----

  /** The discovery manager's sync: fetch /apis through the proxy and publish this group version. */
  syncDiscovery(): Promise<DiscoverySyncResult> {
    return this.discovery.sync();
  }

  /** The discovery manager's fallback request on its own (/apis/<group>/<version>, legacy JSON). */
  fetchLegacyDiscovery(etag?: string): Promise<{ entry?: VersionDiscovery; error?: string }> {
    return this.discovery.fetchLegacy(etag);
  }

  /** The OpenAPI v2 and v3 aggregation controllers' downloads. */
  syncOpenAPI(): Promise<OpenAPISyncResult> {
    return this.openapi.sync();
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
      this.connection.proxy(req, res, user, path, rawQuery);
      return;
    }
    if (path.startsWith('/openapi/v3/')) {
      // handleGroupVersion: proxied only when the server's own root lists the path.
      const gv = path.slice('/openapi/v3/'.length);
      if (this.openapi.v3Paths && gv in this.openapi.v3Paths)
        this.connection.proxy(req, res, user, path, rawQuery);
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
        if (wantsDiscoveryV2(accept)) DiscoveryManager.write(req, res, { items: [] });
        else writeJSON(res, 200, { kind: 'APIVersions', versions: [], serverAddressByClientCIDRs: [] });
        return;
      case '/apis':
        if (wantsDiscoveryV2(accept)) DiscoveryManager.write(req, res, { items: this.discovery.items() });
        else
          writeJSON(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: this.discovery.apiGroups() });
        return;
      case `/apis/${group}`:
        writeJSON(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...this.discovery.apiGroups()[1] });
        return;
      case `/apis/${APIREGISTRATION}`:
        writeJSON(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...this.discovery.apiGroups()[0] });
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
        this.openapi.serveV2(req, res);
        return;
      case '/openapi/v3': {
        // The merged root: the server's paths (nothing built in here).
        writeJSON(res, 200, { paths: this.openapi.v3Paths ?? {} });
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

  /** The APIService as kube-aggregator's registry serves it: object, list or Table. */
  private writeAPIServices(res: ServerResponse, accept: string, name: string | undefined): void {
    const state = {
      name: this.apiServiceName,
      uid: this.uid,
      resourceVersion: this.availability.resourceVersion,
      created: this.created,
      spec: this.options.apiService,
      condition: this.availability.condition,
      serviceKey: serviceKey(this.options.apiService),
    };
    writeJSON(res, 200, apiServiceResponse(state, accept, name !== undefined));
  }
}
