// TEST DOUBLE of a host Kubernetes cluster's API - not a Kubernetes API server.
// It serves, in-process over real HTTPS with real client-certificate (and bearer
// token) authentication, the parts of the host API the platform server uses:
//
//   POST /apis/authentication.k8s.io/v1/tokenreviews        tokens the test registered
//   POST /apis/authentication.k8s.io/v1/selfsubjectreviews  who the caller is
//   POST /apis/authorization.k8s.io/v1/subjectaccessreviews programmable answers
//   /api/v1/namespaces/{ns}/configmaps[/{name}]             get, list, watch, create, update, delete
//   /api/v1/namespaces/{ns}/secrets[/{name}]                get, list, watch, create, update, delete
//   /apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles|rolebindings[/{name}]  CRUD only, not evaluated
//   /apis/certificates.k8s.io/v1/certificatesigningrequests[/{name}[/approval|/status]]
//
// It publishes kube-system/extension-apiserver-authentication as kube-apiserver
// does (front-proxy CA, allowed names, header names as JSON arrays), signs approved
// CSRs for its signers with a real CA and the requested expirationSeconds, and
// gives tests knobs: tokens, SubjectAccessReview policy, CA rotation, outages,
// latency, compaction (410 Gone), and a client authorizer to simulate RBAC denials.
//
// This file holds the HTTPS server and the knobs; each API it stands in for has a
// module of its own: host-object-routes.ts (the object paths and verbs), host-csr.ts
// (CertificateSigningRequest rules and the signer), host-csr-controllers.ts (the
// approval policy and signing controller acting on them), host-reviews.ts (token and
// access reviews), host-callers.ts (authentication of callers, RBAC's 403) and
// host-front-proxy.ts (the front-proxy CA and the authentication ConfigMap).

import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serializeKubeConfig, singleContextKubeConfig } from '../../kubeconfig/index.js';
import { KUBE_APISERVER_CLIENT_SIGNER } from './csr-signer.js';
import { authenticateCaller, forbidden } from './host-callers.js';
import { CertificateControllers } from './host-csr-controllers.js';
import type { SignerBehaviour } from './host-csr.js';
import { StatusError, methodNotAllowed, notFoundPage } from './host-errors.js';
import {
  AUTHENTICATION_CONFIGMAP_NAME,
  AUTHENTICATION_CONFIGMAP_NAMESPACE,
  FRONT_PROXY_CLIENT_NAME,
  FrontProxyAuthority,
} from './host-front-proxy.js';
import { asRecord, readJson, writeJson, writeStatus } from './host-http.js';
import { ObjectApi, type ClientRequest } from './host-object-routes.js';
import {
  answerSubjectAccessReview,
  answerTokenReview,
  reviewByGrants,
  reviewResource,
  selfSubjectReview,
  type AccessGrant,
  type DoubleToken,
  type DoubleUser,
  type ReceivedSubjectAccessReview,
  type SubjectAccessReviewer,
} from './host-reviews.js';
import { ObjectStore, type StoredObject } from './object-store.js';
import {
  issueClientCertificate,
  issueServingCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
  type IssuedCertificate,
} from './pki.js';

export {
  AUTHENTICATION_CONFIGMAP_NAME,
  AUTHENTICATION_CONFIGMAP_NAMESPACE,
  FRONT_PROXY_CLIENT_NAME,
} from './host-front-proxy.js';
export type { ClientRequest } from './host-object-routes.js';
/** The identity the double's kubeconfig() gives the platform server by default. */
export const DEFAULT_CLIENT_USER = 'system:serviceaccount:platform-system:platform-apiserver';

/** Decides whether a caller of the double may make a request (default: every authenticated caller). */
export type ClientAuthorizer = (user: DoubleUser, request: ClientRequest) => boolean;

export interface HostClusterDoubleOptions {
  /** Signers whose approved requests the double signs (default: kubernetes.io/kube-apiserver-client). */
  readonly signers?: readonly string[];
  /** The longest certificate the signer issues (kube-controller-manager's --cluster-signing-duration; default one year). */
  readonly maxSigningDurationSeconds?: number;
  /** requestheader-allowed-names published in the ConfigMap (default ["front-proxy-client"]). */
  readonly frontProxyAllowedNames?: readonly string[];
  /** Publish kube-system/extension-apiserver-authentication (default true). */
  readonly publishAuthenticationConfigMap?: boolean;
}

const YEAR_SECONDS = 365 * 24 * 3600;

export class HostClusterDouble {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Signs the double's serving certificate. */
  readonly serverCa: CertificateAuthority;
  /** Trusted for client certificates, and the CA the kube-apiserver-client signer issues from. */
  readonly clientCa: CertificateAuthority;
  /** How many reviews were asked, for cache tests. */
  readonly calls = { tokenReviews: 0, subjectAccessReviews: 0 };
  /** Every SubjectAccessReview spec received, in order. */
  readonly subjectAccessReviews: ReceivedSubjectAccessReview[] = [];
  /**
   * Hold a watch's response headers back until its first event, as a slow host or a
   * buffering proxy in front of it may: clients must still be able to stop such a watch.
   */
  holdWatchHeaders = false;

  private frontProxy = FrontProxyAuthority.create();
  private readonly store = new ObjectStore();
  private readonly tokens = new Map<string, DoubleToken>();
  private readonly grants: AccessGrant[] = [];
  private reviewer: SubjectAccessReviewer = (spec) => reviewByGrants(this.grants, spec);
  private clientAuthorizer: ClientAuthorizer = () => true;
  private readonly sockets = new Set<Socket>();
  private readonly watchStreams = new Set<ServerResponse>();
  private readonly objects = new ObjectApi({
    store: this.store,
    watchStreams: this.watchStreams,
    holdWatchHeaders: () => this.holdWatchHeaders,
    authorize: (user, request) => this.authorizeClient(user, request),
    afterCreate: (resource, created) => this.certificates.created(resource, created),
    afterUpdate: (resource, name) => this.certificates.updated(resource, name),
  });
  private unavailable = false;
  private latencyMs = 0;
  private readonly frontProxyAllowedNames: readonly string[];
  private readonly certificates: CertificateControllers;

  private constructor(
    private readonly server: Server,
    url: string,
    serverCa: CertificateAuthority,
    clientCa: CertificateAuthority,
    options: HostClusterDoubleOptions,
  ) {
    this.url = url;
    this.serverCa = serverCa;
    this.clientCa = clientCa;
    this.frontProxyAllowedNames = options.frontProxyAllowedNames ?? [FRONT_PROXY_CLIENT_NAME];
    this.certificates = new CertificateControllers(
      this.store,
      clientCa,
      options.maxSigningDurationSeconds ?? YEAR_SECONDS,
      options.signers ?? [KUBE_APISERVER_CLIENT_SIGNER],
    );
    if (options.publishAuthenticationConfigMap ?? true) this.publishAuthenticationConfigMap();
  }

  /** Starts the double on 127.0.0.1 with a free port. */
  static async start(options: HostClusterDoubleOptions = {}): Promise<HostClusterDouble> {
    const serverCa = newCertificateAuthority('host-double-server-ca');
    const clientCa = newCertificateAuthority('host-double-client-ca');
    const serving = issueServingCertificate(serverCa, {
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    const server = createServer({
      cert: serving.certPem,
      key: serving.keyPem,
      ca: [clientCa.certPem],
      requestCert: true,
      rejectUnauthorized: false,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const double = new HostClusterDouble(server, `https://127.0.0.1:${port}`, serverCa, clientCa, options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void double.handle(req, res));
    server.on('connection', (socket: Socket) => {
      double.sockets.add(socket);
      socket.once('close', () => double.sockets.delete(socket));
    });
    return double;
  }

  async stop(): Promise<void> {
    for (const res of this.watchStreams) res.end();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  // ---- identities and credentials ----

  /** A kube config for a client of the double, authenticated by a client certificate from the client CA. */
  kubeconfig(user: string = DEFAULT_CLIENT_USER, groups: readonly string[] = []): string {
    const cert = issueClientCertificate(this.clientCa, user, { organizations: groups });
    return serializeKubeConfig(
      singleContextKubeConfig({
        contextName: 'host',
        clusterName: 'host',
        userName: user,
        cluster: { server: this.url, caPem: this.serverCa.certPem },
        user: { clientCertificatePem: cert.certPem, clientKeyPem: cert.keyPem },
      }),
    );
  }

  /** Writes kubeconfig() to `path` (mode 0600) and returns the path. */
  writeKubeconfig(path: string, user?: string, groups?: readonly string[]): string {
    writeFileSync(path, this.kubeconfig(user, groups), { mode: 0o600 });
    return path;
  }

  /** Registers a bearer token: TokenReview authenticates it, and it authenticates callers of the double. */
  addToken(token: string, user: DoubleUser, audiences?: readonly string[]): void {
    this.tokens.set(token, audiences ? { user, audiences } : { user });
  }

  removeToken(token: string): void {
    this.tokens.delete(token);
  }

  /** The CA that signs front-proxy client certificates (the aggregator's). */
  get frontProxyCa(): CertificateAuthority {
    return this.frontProxy.ca;
  }

  /** The aggregator's client certificate: CN front-proxy-client, signed by the front-proxy CA. */
  get frontProxyClient(): IssuedCertificate {
    return this.frontProxy.client;
  }

  /**
   * Replaces the front-proxy CA and client certificate, as a cluster operator
   * rotating them would, and republishes the ConfigMap. With `keepOld` the old CA
   * stays in the bundle (an overlap period); without it, old certificates stop working.
   */
  rotateFrontProxyCa(options: { keepOld?: boolean } = {}): IssuedCertificate {
    this.frontProxy = this.frontProxy.rotated(options.keepOld ?? false);
    this.publishAuthenticationConfigMap();
    return this.frontProxy.client;
  }

  /** (Re)writes kube-system/extension-apiserver-authentication from the current CAs and settings. */
  publishAuthenticationConfigMap(overrides: Record<string, string | undefined> = {}): void {
    const data = this.frontProxy.authenticationConfigMapData(
      this.clientCa.certPem,
      this.frontProxyAllowedNames,
      overrides,
    );
    this.putConfigMap(AUTHENTICATION_CONFIGMAP_NAMESPACE, AUTHENTICATION_CONFIGMAP_NAME, data);
  }

  // ---- authorization knobs ----

  /** Adds an RBAC-like grant the default SubjectAccessReview answers from (system:masters is always allowed). */
  grant(grant: AccessGrant): void {
    this.grants.push(grant);
  }

  /** Replaces the SubjectAccessReview policy; `undefined` restores the grant-based default. */
  setSubjectAccessReviewer(reviewer: SubjectAccessReviewer | undefined): void {
    this.reviewer = reviewer ?? ((spec) => reviewByGrants(this.grants, spec));
  }

  /** Decides what callers of the double may do (e.g. simulate a missing RBAC rule); undefined allows all. */
  setClientAuthorizer(authorizer: ClientAuthorizer | undefined): void {
    this.clientAuthorizer = authorizer ?? (() => true);
  }

  // ---- failure knobs ----

  /** While set, every API request gets 503 ServiceUnavailable. */
  setUnavailable(unavailable: boolean): void {
    this.unavailable = unavailable;
  }

  /** Delays every API response by `ms` (to test deadlines). */
  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /** Forgets watch history: a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.store.compact();
  }

  /** Ends every open watch, as an API server restart or a load balancer timeout would. */
  closeWatches(): void {
    for (const res of this.watchStreams) res.end();
  }

  // ---- objects ----

  putConfigMap(namespace: string, name: string, data: Record<string, string>): void {
    const existing = this.store.get('configmaps', namespace, name);
    const obj: StoredObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
    if (existing) this.store.update('configmaps', obj);
    else this.store.create('configmaps', obj);
  }

  deleteConfigMap(namespace: string, name: string): void {
    this.store.delete('configmaps', namespace, name);
  }

  /** A stored object as the API would return it (Secret data base64, CSR request base64). */
  object(
    resource: 'configmaps' | 'secrets' | 'certificatesigningrequests' | 'roles' | 'rolebindings',
    namespace: string,
    name: string,
  ) {
    return this.store.get(resource, namespace, name);
  }

  /** A Secret's data, decoded; undefined when there is no such Secret. */
  secretData(namespace: string, name: string): Record<string, string> | undefined {
    const secret = this.store.get('secrets', namespace, name);
    if (!secret) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(asRecord(secret.data)))
      out[k] = Buffer.from(String(v), 'base64').toString('utf8');
    return out;
  }

  certificateSigningRequests(): StoredObject[] {
    return this.store.list({ resource: 'certificatesigningrequests', namespace: '' });
  }

  /** What the signer does with approved requests for `signerName`: sign, add Failed, or nothing (never answers). */
  setSignerBehaviour(signerName: string, behaviour: SignerBehaviour): void {
    this.certificates.setBehaviour(signerName, behaviour);
  }

  /** Denies a request, as a cluster administrator running `kubectl certificate deny` would. */
  denyCertificateSigningRequest(name: string, reason = 'AdminDenied', message = 'denied by the test'): void {
    this.certificates.deny(name, reason, message);
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
      if (this.unavailable)
        throw new StatusError(503, 'ServiceUnavailable', 'the host cluster double is unavailable');
      const user = authenticateCaller(req, this.tokens);
      if (!user) throw new StatusError(401, 'Unauthorized', 'Unauthorized');
      await this.route(req, res, user);
    } catch (err) {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (err instanceof StatusError) writeStatus(res, err);
      else
        writeStatus(
          res,
          new StatusError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`),
        );
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, user: DoubleUser): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const parts = url.pathname
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    const method = req.method ?? 'GET';

    const review = reviewResource(url.pathname);
    if (review !== undefined) {
      if (method !== 'POST') throw methodNotAllowed();
      this.authorizeClient(user, {
        verb: 'create',
        resource: review,
        subresource: '',
        namespace: '',
        name: '',
      });
      const body = asRecord(await readJson(req));
      if (review === 'tokenreviews') {
        this.calls.tokenReviews++;
        return writeJson(res, 201, answerTokenReview(body, this.tokens));
      }
      if (review === 'selfsubjectreviews') return writeJson(res, 201, selfSubjectReview(user));
      if (review === 'subjectaccessreviews') {
        this.calls.subjectAccessReviews++;
        return writeJson(res, 201, answerSubjectAccessReview(body, this.reviewer, this.subjectAccessReviews));
      }
      throw notFoundPage();
    }

    return this.objects.serve(req, res, user, url, parts);
  }

  private authorizeClient(user: DoubleUser, request: ClientRequest): void {
    if (!this.clientAuthorizer(user, request)) throw forbidden(user, request);
  }
}
