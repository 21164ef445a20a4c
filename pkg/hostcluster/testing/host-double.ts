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

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { serializeKubeConfig, singleContextKubeConfig } from '../../kubeconfig/index.js';
import { KUBE_APISERVER_CLIENT_SIGNER } from './csr-signer.js';
import {
  answerTokenReview,
  reviewByGrants,
  subjectAccessReviewErrors,
  subjectAccessReviewResponse,
  subjectAccessReviewSpec,
  type AccessGrant,
  type DoubleToken,
  type DoubleUser,
  type ReceivedSubjectAccessReview,
  type SubjectAccessReviewer,
} from './host-reviews.js';
import {
  prepareCertificateSigningRequest,
  signApprovedRequest,
  updateCertificateSigningRequest,
  withDeniedCondition,
  type SignerBehaviour,
} from './host-csr.js';
import { StatusError } from './host-errors.js';
import { KINDS, normalizeSecret, notFound, withKind, type KindInfo } from './host-kinds.js';
import { ObjectStore, type StoredObject, type WatchFilter } from './object-store.js';
import {
  issueClientCertificate,
  issueServingCertificate,
  newCertificateAuthority,
  type CertificateAuthority,
  type IssuedCertificate,
} from './pki.js';

export const AUTHENTICATION_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTHENTICATION_CONFIGMAP_NAME = 'extension-apiserver-authentication';
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';
/** The identity the double's kubeconfig() gives the platform server by default. */
export const DEFAULT_CLIENT_USER = 'system:serviceaccount:platform-system:platform-apiserver';

export interface ClientRequest {
  readonly verb: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

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
const MAX_BODY = 3 * 1024 * 1024;

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

  private frontProxy: { ca: CertificateAuthority; bundlePem: string; client: IssuedCertificate };
  private readonly store = new ObjectStore();
  private readonly tokens = new Map<string, DoubleToken>();
  private readonly grants: AccessGrant[] = [];
  private reviewer: SubjectAccessReviewer = (spec) => reviewByGrants(this.grants, spec);
  private clientAuthorizer: ClientAuthorizer = () => true;
  private readonly signerBehaviour = new Map<string, SignerBehaviour>();
  private readonly sockets = new Set<Socket>();
  private readonly watchStreams = new Set<ServerResponse>();
  private unavailable = false;
  private latencyMs = 0;
  private readonly options: Required<
    Pick<HostClusterDoubleOptions, 'maxSigningDurationSeconds' | 'frontProxyAllowedNames'>
  >;

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
    this.options = {
      maxSigningDurationSeconds: options.maxSigningDurationSeconds ?? YEAR_SECONDS,
      frontProxyAllowedNames: options.frontProxyAllowedNames ?? [FRONT_PROXY_CLIENT_NAME],
    };
    for (const signer of options.signers ?? [KUBE_APISERVER_CLIENT_SIGNER])
      this.signerBehaviour.set(signer, 'sign');
    const ca = newCertificateAuthority('front-proxy-ca');
    this.frontProxy = {
      ca,
      bundlePem: ca.certPem,
      client: issueClientCertificate(ca, FRONT_PROXY_CLIENT_NAME),
    };
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
    const ca = newCertificateAuthority(`front-proxy-ca-${randomBytes(3).toString('hex')}`);
    const bundlePem = options.keepOld ? ca.certPem + this.frontProxy.bundlePem : ca.certPem;
    this.frontProxy = { ca, bundlePem, client: issueClientCertificate(ca, FRONT_PROXY_CLIENT_NAME) };
    this.publishAuthenticationConfigMap();
    return this.frontProxy.client;
  }

  /** (Re)writes kube-system/extension-apiserver-authentication from the current CAs and settings. */
  publishAuthenticationConfigMap(overrides: Record<string, string | undefined> = {}): void {
    const data: Record<string, string> = {
      'client-ca-file': this.clientCa.certPem,
      'requestheader-client-ca-file': this.frontProxy.bundlePem,
      'requestheader-allowed-names': JSON.stringify(this.options.frontProxyAllowedNames),
      'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
      'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
      'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
    };
    for (const [k, v] of Object.entries(overrides)) {
      if (v === undefined) delete data[k];
      else data[k] = v;
    }
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
    this.signerBehaviour.set(signerName, behaviour);
  }

  /** Denies a request, as a cluster administrator running `kubectl certificate deny` would. */
  denyCertificateSigningRequest(name: string, reason = 'AdminDenied', message = 'denied by the test'): void {
    const csr = this.store.get('certificatesigningrequests', '', name);
    if (!csr) throw new Error(`no certificate signing request ${name}`);
    this.store.update('certificatesigningrequests', withDeniedCondition(csr, reason, message));
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
      if (this.unavailable)
        throw new StatusError(503, 'ServiceUnavailable', 'the host cluster double is unavailable');
      const user = this.authenticate(req);
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

  private authenticate(req: IncomingMessage): DoubleUser | undefined {
    const socket = req.socket as TLSSocket;
    if (socket.authorized) {
      const cert = socket.getPeerCertificate();
      const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
      const cn = subject.CN;
      const o = subject.O;
      const username = Array.isArray(cn) ? (cn[cn.length - 1] ?? '') : (cn ?? '');
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      if (username) return { username, groups: [...groups, 'system:authenticated'] };
    }
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    const entry = m?.[1] ? this.tokens.get(m[1]) : undefined;
    if (entry) return { ...entry.user, groups: [...(entry.user.groups ?? []), 'system:authenticated'] };
    return undefined;
  }

  private async route(req: IncomingMessage, res: ServerResponse, user: DoubleUser): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const parts = url.pathname
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    const method = req.method ?? 'GET';

    const review = url.pathname.match(/^\/apis\/(authentication|authorization)\.k8s\.io\/v1\/([a-z]+)$/);
    if (review) {
      if (method !== 'POST')
        throw new StatusError(
          405,
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
      const resource = review[2] ?? '';
      this.authorizeClient(user, { verb: 'create', resource, subresource: '', namespace: '', name: '' });
      const body = asRecord(await readJson(req));
      if (resource === 'tokenreviews') return writeJson(res, 201, this.tokenReview(body));
      if (resource === 'selfsubjectreviews')
        return writeJson(res, 201, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
          metadata: {},
          status: {
            userInfo: {
              username: user.username,
              groups: user.groups ?? [],
              ...(user.extra ? { extra: user.extra } : {}),
            },
          },
        });
      if (resource === 'subjectaccessreviews') return writeJson(res, 201, this.subjectAccessReview(body));
      throw notFoundPage();
    }

    // /api/v1/namespaces/{ns}/{resource}[/{name}]
    let resource = '';
    let namespace = '';
    let name = '';
    let subresource = '';
    if (parts[0] === 'api' && parts[1] === 'v1' && parts[2] === 'namespaces' && parts.length >= 5) {
      namespace = parts[3] ?? '';
      resource = parts[4] ?? '';
      name = parts[5] ?? '';
      if (parts.length > 6) throw notFoundPage();
      if (resource !== 'configmaps' && resource !== 'secrets') throw notFoundPage();
    } else if (
      parts[0] === 'apis' &&
      parts[1] === 'rbac.authorization.k8s.io' &&
      parts[2] === 'v1' &&
      parts[3] === 'namespaces' &&
      parts.length >= 6
    ) {
      // /apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{roles|rolebindings}[/{name}]
      namespace = parts[4] ?? '';
      resource = parts[5] ?? '';
      name = parts[6] ?? '';
      if (parts.length > 7 || (resource !== 'roles' && resource !== 'rolebindings')) throw notFoundPage();
    } else if (
      parts[0] === 'apis' &&
      parts[1] === 'certificates.k8s.io' &&
      parts[2] === 'v1' &&
      parts[3] === 'certificatesigningrequests'
    ) {
      resource = 'certificatesigningrequests';
      name = parts[4] ?? '';
      subresource = parts[5] ?? '';
      if (parts.length > 6 || (subresource !== '' && subresource !== 'approval' && subresource !== 'status'))
        throw notFoundPage();
    } else {
      throw notFoundPage();
    }
    const info = KINDS[resource];
    if (!info) throw notFoundPage();

    const watch = url.searchParams.get('watch');
    const isWatch = watch === 'true' || watch === '1';
    const verb =
      method === 'GET'
        ? name
          ? 'get'
          : isWatch
            ? 'watch'
            : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'DELETE'
              ? 'delete'
              : '';
    if (
      verb === '' ||
      (name === '' && verb !== 'list' && verb !== 'watch' && verb !== 'create') ||
      (name !== '' && verb === 'create')
    )
      throw new StatusError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    if (subresource !== '' && verb !== 'get' && verb !== 'update')
      throw new StatusError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    this.authorizeClient(user, { verb, resource, subresource, namespace, name });

    const nameFilter = fieldSelectorName(url.searchParams.get('fieldSelector'));
    const filter: WatchFilter =
      nameFilter !== undefined ? { resource, namespace, name: nameFilter } : { resource, namespace };
    switch (verb) {
      case 'get': {
        const obj = this.store.get(resource, namespace, name);
        if (!obj) throw notFound(info, name);
        return writeJson(res, 200, withKind(info, obj));
      }
      case 'list':
        return writeJson(res, 200, {
          apiVersion: info.apiVersion,
          kind: `${info.kind}List`,
          metadata: { resourceVersion: String(this.store.currentRevision) },
          items: this.store.list(filter).map((o) => withKind(info, o)),
        });
      case 'watch':
        return this.serveWatch(req, res, info, filter, url.searchParams);
      case 'create': {
        const body = asRecord(await readJson(req));
        const created = this.create(info, resource, namespace, body, user);
        return writeJson(res, 201, withKind(info, created));
      }
      case 'update': {
        const body = asRecord(await readJson(req));
        const updated = this.update(info, resource, namespace, name, subresource, body);
        return writeJson(res, 200, withKind(info, updated));
      }
      case 'delete': {
        const deleted = this.store.delete(resource, namespace, name);
        if (!deleted) throw notFound(info, name);
        return writeJson(res, 200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name, kind: resource, uid: deleted.metadata.uid },
        });
      }
    }
  }

  private authorizeClient(user: DoubleUser, request: ClientRequest): void {
    if (this.clientAuthorizer(user, request)) return;
    const res = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
    const group = KINDS[request.resource]?.apiVersion.includes('/')
      ? (KINDS[request.resource]?.apiVersion.split('/')[0] ?? '')
      : '';
    const where = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
    const qualified = KINDS[request.resource]?.qualified ?? request.resource;
    throw new StatusError(
      403,
      'Forbidden',
      `${qualified}${request.name ? ` "${request.name}"` : ''} is forbidden: User "${user.username}" cannot ${request.verb} resource "${res}" in API group "${group}" ${where}`,
    );
  }

  private tokenReview(body: Record<string, unknown>): Record<string, unknown> {
    this.calls.tokenReviews++;
    return answerTokenReview(body, this.tokens);
  }

  private subjectAccessReview(body: Record<string, unknown>): Record<string, unknown> {
    this.calls.subjectAccessReviews++;
    const spec = subjectAccessReviewSpec(body);
    const errs = subjectAccessReviewErrors(spec);
    if (errs.length > 0)
      throw new StatusError(
        422,
        'Invalid',
        `SubjectAccessReview.authorization.k8s.io "" is invalid: ${errs.join(', ')}`,
      );
    this.subjectAccessReviews.push(structuredClone(spec));
    return subjectAccessReviewResponse(spec, this.reviewer(spec));
  }

  /** The signing controller: issue or fail approved requests for signers the double serves. */
  private runSigner(name: string): void {
    const csr = this.store.get('certificatesigningrequests', '', name);
    if (!csr) return;
    const next = signApprovedRequest(
      csr,
      (signer) => this.signerBehaviour.get(signer),
      this.clientCa,
      this.options.maxSigningDurationSeconds,
    );
    if (next) this.store.update('certificatesigningrequests', next);
  }

  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    info: KindInfo,
    filter: WatchFilter,
    query: URLSearchParams,
  ): void {
    const rvParam = query.get('resourceVersion') ?? '';
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // kube-apiserver flushes a watch's headers at once.
    if (!this.holdWatchHeaders) res.flushHeaders();
    this.watchStreams.add(res);
    const send = (type: string, object: unknown): void => {
      if (res.writableEnded || res.destroyed) return;
      res.write(JSON.stringify({ type, object }) + '\n');
    };
    let since: number;
    if (rvParam === '' || rvParam === '0') {
      for (const obj of this.store.list(filter)) send('ADDED', withKind(info, obj));
      since = this.store.currentRevision;
    } else {
      since = Number(rvParam);
      const backlog = Number.isFinite(since) ? this.store.eventsSince(filter, since) : undefined;
      if (!backlog) {
        send('ERROR', {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${rvParam} (${this.store.compactedRevision})`,
          reason: 'Expired',
          code: 410,
        });
        this.watchStreams.delete(res);
        res.end();
        return;
      }
      for (const e of backlog) send(e.type, withKind(info, e.object));
      since = Math.max(since, backlog[backlog.length - 1]?.revision ?? since);
    }
    const unsubscribe = this.store.subscribe(filter, (e) => {
      if (e.revision > since) send(e.type, withKind(info, e.object));
    });
    const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    const cleanup = (): void => {
      unsubscribe();
      clearTimeout(timer);
      this.watchStreams.delete(res);
    };
    res.once('close', cleanup);
    res.once('finish', cleanup);
    req.once('close', cleanup);
  }

  private create(
    info: KindInfo,
    resource: string,
    namespace: string,
    body: Record<string, unknown>,
    user: DoubleUser,
  ): StoredObject {
    const meta = asRecord(body.metadata);
    if (
      info.namespaced &&
      typeof meta.namespace === 'string' &&
      meta.namespace !== '' &&
      meta.namespace !== namespace
    )
      throw new StatusError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    let name = typeof meta.name === 'string' ? meta.name : '';
    if (name === '' && typeof meta.generateName === 'string' && meta.generateName !== '')
      name = meta.generateName + randomBytes(4).toString('hex').slice(0, 5);
    if (name === '')
      throw new StatusError(
        422,
        'Invalid',
        `${info.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
      );
    const obj: StoredObject = {
      ...body,
      apiVersion: info.apiVersion,
      kind: info.kind,
      metadata: { ...meta, name, ...(info.namespaced ? { namespace } : {}) },
    };
    delete obj.metadata.resourceVersion;
    delete obj.metadata.uid;
    if (resource === 'secrets') normalizeSecret(obj);
    if (resource === 'certificatesigningrequests') prepareCertificateSigningRequest(obj, user);
    const created = this.store.create(resource, obj);
    if (!created)
      throw new StatusError(409, 'AlreadyExists', `${info.qualified} "${name}" already exists`, {
        name,
        kind: resource,
      });
    const signerName = asRecord(created.spec).signerName;
    if (resource === 'certificatesigningrequests' && this.signerBehaviour.get(String(signerName)) === 'deny')
      this.denyCertificateSigningRequest(name, 'PolicyDenied', 'denied by the approval policy (test double)');
    return created;
  }

  private update(
    info: KindInfo,
    resource: string,
    namespace: string,
    name: string,
    subresource: string,
    body: Record<string, unknown>,
  ): StoredObject {
    const current = this.store.get(resource, namespace, name);
    if (!current) throw notFound(info, name);
    const meta = asRecord(body.metadata);
    if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name)
      throw new StatusError(
        400,
        'BadRequest',
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    if (
      typeof meta.resourceVersion === 'string' &&
      meta.resourceVersion !== '' &&
      meta.resourceVersion !== current.metadata.resourceVersion
    )
      throw new StatusError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${info.qualified} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: resource },
      );
    let next: StoredObject;
    if (resource === 'certificatesigningrequests') {
      next = updateCertificateSigningRequest(current, subresource, body);
    } else {
      next = {
        ...body,
        apiVersion: info.apiVersion,
        kind: info.kind,
        metadata: { ...meta, name, namespace },
      } as StoredObject;
      if (resource === 'secrets') normalizeSecret(next);
    }
    const updated = this.store.update(resource, next);
    if (!updated) throw notFound(info, name);
    if (resource === 'certificatesigningrequests') setImmediate(() => this.runSigner(name));
    return updated;
  }
}

function fieldSelectorName(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const term of selector.split(',')) {
    const m = /^metadata\.name==?(.*)$/.exec(term.trim());
    if (m) return m[1] ?? '';
  }
  return undefined;
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function notFoundPage(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) throw new StatusError(413, 'RequestEntityTooLarge', 'the request is too large');
    chunks.push(b);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new StatusError(400, 'BadRequest', 'the request body is not JSON');
  }
}

function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function writeStatus(res: ServerResponse, err: StatusError): void {
  writeJson(res, err.code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: err.reason,
    ...(err.details ? { details: err.details } : {}),
    code: err.code,
  });
}
