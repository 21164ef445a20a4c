// The host cluster through @kubernetes/client-node: the only place that library is
// used for talking to the host. Every request has a deadline (a hung host must not
// hang a caller's request), and the library's errors become HostClusterErrors.

import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CertificatesV1Api,
  CoreV1Api,
  Observable,
  Watch,
  type KubeConfig,
  type V1CertificateSigningRequest,
  type V1Secret,
} from '@kubernetes/client-node';
import { HostClusterError, isHostConflict, isHostNotFound, statusOf } from './errors.js';
import {
  toCertificateSigningRequest,
  toConfigMap,
  toSecret,
  toTokenReviewResult,
  toSubjectAccessReviewResult,
} from './convert.js';
import type {
  HostCertificateSigningRequest,
  HostCluster,
  HostConfigMap,
  HostSecret,
  NewCertificateSigningRequest,
  ObjectHandler,
  RequestOptions,
  SubjectAccessReviewResult,
  SubjectAccessReviewSpec,
  TokenReviewResult,
  WatchHandle,
  WatchOptions,
} from './types.js';
import { watchObject, type RawWatchEvent, type WatchObjectSource } from './watch-object.js';

export interface KubeHostClusterOptions {
  /** Deadline of each request (default 10 s). */
  readonly requestTimeoutMs?: number;
  /** How long a watch stays open before it is renewed (default 5 min, plus jitter). */
  readonly watchTimeoutSeconds?: number;
}

const FIELD_MANAGER = 'platform-apiserver';

export class KubeHostCluster implements HostCluster {
  readonly server: string;
  private readonly core: CoreV1Api;
  private readonly authentication: AuthenticationV1Api;
  private readonly authorization: AuthorizationV1Api;
  private readonly certificates: CertificatesV1Api;
  private readonly watcher: Watch;
  private readonly requestTimeoutMs: number;
  private readonly watchTimeoutSeconds: number;

  constructor(kubeConfig: KubeConfig, options: KubeHostClusterOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the host kube config has no current cluster');
    this.server = cluster.server;
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
    this.authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
    this.certificates = kubeConfig.makeApiClient(CertificatesV1Api);
    this.watcher = new Watch(kubeConfig);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.watchTimeoutSeconds = options.watchTimeoutSeconds ?? 300;
  }

  async tokenReview(
    token: string,
    audiences?: readonly string[],
    options?: RequestOptions,
  ): Promise<TokenReviewResult> {
    const review = await this.call('create tokenreviews', options, (o) =>
      this.authentication.createTokenReview(
        {
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: audiences && audiences.length > 0 ? { token, audiences: [...audiences] } : { token },
          },
        },
        o,
      ),
    );
    return toTokenReviewResult(review);
  }

  async subjectAccessReview(
    spec: SubjectAccessReviewSpec,
    options?: RequestOptions,
  ): Promise<SubjectAccessReviewResult> {
    const body = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: spec.user,
        ...(spec.uid ? { uid: spec.uid } : {}),
        ...(spec.groups ? { groups: [...spec.groups] } : {}),
        ...(spec.extra ? { extra: copyExtra(spec.extra) } : {}),
        ...(spec.resourceAttributes ? { resourceAttributes: { ...spec.resourceAttributes } } : {}),
        ...(spec.nonResourceAttributes ? { nonResourceAttributes: { ...spec.nonResourceAttributes } } : {}),
      },
    };
    const review = await this.call('create subjectaccessreviews', options, (o) =>
      this.authorization.createSubjectAccessReview({ body }, o),
    );
    return toSubjectAccessReviewResult(review);
  }

  async getConfigMap(
    namespace: string,
    name: string,
    options?: RequestOptions,
  ): Promise<HostConfigMap | undefined> {
    try {
      const cm = await this.call(`get configmap ${namespace}/${name}`, options, (o) =>
        this.core.readNamespacedConfigMap({ namespace, name }, o),
      );
      return toConfigMap(cm);
    } catch (err) {
      if (isHostNotFound(err)) return undefined;
      throw err;
    }
  }

  watchConfigMap(
    namespace: string,
    name: string,
    handler: ObjectHandler<HostConfigMap>,
    options: WatchOptions = {},
  ): WatchHandle {
    return watchObject({
      name,
      source: this.watchSource(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
        (fieldSelector) => this.core.listNamespacedConfigMap({ namespace, fieldSelector }, this.deadline()),
      ),
      convert: toConfigMap,
      handler,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  async getSecret(
    namespace: string,
    name: string,
    options?: RequestOptions,
  ): Promise<HostSecret | undefined> {
    try {
      const secret = await this.call(`get secret ${namespace}/${name}`, options, (o) =>
        this.core.readNamespacedSecret({ namespace, name }, o),
      );
      return toSecret(secret);
    } catch (err) {
      if (isHostNotFound(err)) return undefined;
      throw err;
    }
  }

  async createSecret(secret: HostSecret, options?: RequestOptions): Promise<HostSecret> {
    const namespace = requireNamespace(secret);
    const created = await this.call(`create secret ${namespace}/${secret.metadata.name}`, options, (o) =>
      this.core.createNamespacedSecret(
        { namespace, body: fromSecret(secret), fieldManager: FIELD_MANAGER },
        o,
      ),
    );
    return toSecret(created);
  }

  async updateSecret(secret: HostSecret, options?: RequestOptions): Promise<HostSecret> {
    const namespace = requireNamespace(secret);
    const name = secret.metadata.name;
    const updated = await this.call(`update secret ${namespace}/${name}`, options, (o) =>
      this.core.replaceNamespacedSecret(
        { namespace, name, body: fromSecret(secret), fieldManager: FIELD_MANAGER },
        o,
      ),
    );
    return toSecret(updated);
  }

  async createCertificateSigningRequest(
    csr: NewCertificateSigningRequest,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest> {
    const body: V1CertificateSigningRequest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: {
        ...(csr.name ? { name: csr.name } : {}),
        ...(csr.generateName ? { generateName: csr.generateName } : {}),
        ...(csr.labels ? { labels: { ...csr.labels } } : {}),
      },
      spec: {
        request: Buffer.from(csr.requestPem, 'utf8').toString('base64'),
        signerName: csr.signerName,
        usages: [...csr.usages],
        ...(csr.expirationSeconds !== undefined ? { expirationSeconds: csr.expirationSeconds } : {}),
      },
    };
    const created = await this.call('create certificatesigningrequest', options, (o) =>
      this.certificates.createCertificateSigningRequest({ body, fieldManager: FIELD_MANAGER }, o),
    );
    return toCertificateSigningRequest(created);
  }

  async approveCertificateSigningRequest(
    name: string,
    reason: string,
    message: string,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest> {
    // The approval subresource is a PUT of the whole object: read, add, write, and retry on a conflict.
    for (let attempt = 0; ; attempt++) {
      const current = await this.call(`get certificatesigningrequest ${name}`, options, (o) =>
        this.certificates.readCertificateSigningRequest({ name }, o),
      );
      const conditions = current.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Approved' && c.status === 'True'))
        return toCertificateSigningRequest(current);
      const body: V1CertificateSigningRequest = {
        ...current,
        status: {
          ...current.status,
          conditions: [
            ...conditions,
            { type: 'Approved', status: 'True', reason, message, lastUpdateTime: new Date() },
          ],
        },
      };
      try {
        const approved = await this.call(`approve certificatesigningrequest ${name}`, options, (o) =>
          this.certificates.replaceCertificateSigningRequestApproval(
            { name, body, fieldManager: FIELD_MANAGER },
            o,
          ),
        );
        return toCertificateSigningRequest(approved);
      } catch (err) {
        if (!isHostConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  async getCertificateSigningRequest(
    name: string,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest | undefined> {
    try {
      const csr = await this.call(`get certificatesigningrequest ${name}`, options, (o) =>
        this.certificates.readCertificateSigningRequest({ name }, o),
      );
      return toCertificateSigningRequest(csr);
    } catch (err) {
      if (isHostNotFound(err)) return undefined;
      throw err;
    }
  }

  watchCertificateSigningRequest(
    name: string,
    handler: ObjectHandler<HostCertificateSigningRequest>,
    options: WatchOptions = {},
  ): WatchHandle {
    return watchObject({
      name,
      source: this.watchSource('/apis/certificates.k8s.io/v1/certificatesigningrequests', (fieldSelector) =>
        this.certificates.listCertificateSigningRequest({ fieldSelector }, this.deadline()),
      ),
      convert: toCertificateSigningRequest,
      handler,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  async deleteCertificateSigningRequest(name: string, options?: RequestOptions): Promise<void> {
    try {
      await this.call(`delete certificatesigningrequest ${name}`, options, (o) =>
        this.certificates.deleteCertificateSigningRequest({ name }, o),
      );
    } catch (err) {
      if (isHostNotFound(err)) return;
      throw err;
    }
  }

  /** Per-request options that abort the request at the deadline or when `signal` aborts. */
  private deadline(signal?: AbortSignal): CallOptions {
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    return {
      middleware: [
        {
          pre: (ctx) => {
            ctx.setSignal(combined);
            return new Observable(Promise.resolve(ctx));
          },
          post: (ctx) => new Observable(Promise.resolve(ctx)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
  }

  private async call<T>(
    what: string,
    options: RequestOptions | undefined,
    fn: (o: CallOptions) => Promise<T>,
  ): Promise<T> {
    try {
      return await fn(this.deadline(options?.signal));
    } catch (err) {
      throw toHostError(what, err);
    }
  }

  private watchSource(
    path: string,
    list: (fieldSelector: string) => Promise<{ items: unknown[]; metadata?: { resourceVersion?: string } }>,
  ): WatchObjectSource {
    return {
      list: async (fieldSelector) => {
        try {
          const result = await list(fieldSelector);
          return { items: result.items, resourceVersion: result.metadata?.resourceVersion ?? '' };
        } catch (err) {
          throw toHostError(`list ${path}`, err);
        }
      },
      watch: (fieldSelector, resourceVersion, onEvent, abort) =>
        new Promise<void>((resolve, reject) => {
          const timeoutSeconds =
            this.watchTimeoutSeconds + Math.floor(Math.random() * this.watchTimeoutSeconds);
          let controller: AbortController | undefined;
          let finished = false;
          const finish = (err: unknown): void => {
            if (finished) return;
            finished = true;
            abort.removeEventListener('abort', onAbort);
            if (err && !abort.aborted) reject(toHostError(`watch ${path}`, err));
            else resolve();
          };
          // client-node hands out the request's AbortController only once the response
          // headers have come; a host that has not sent them yet must not hold up a stop
          // (shutdown would wait for it), so the watch ends here at once, and the request
          // is aborted as soon as its controller exists.
          const onAbort = (): void => {
            controller?.abort();
            finish(undefined);
          };
          abort.addEventListener('abort', onAbort, { once: true });
          this.watcher
            .watch(
              path,
              { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
              (type: string, object: unknown) => {
                if (!abort.aborted) onEvent({ type, object } satisfies RawWatchEvent);
              },
              finish,
            )
            .then(
              (c) => {
                controller = c;
                if (abort.aborted) c.abort();
              },
              (err: unknown) => finish(err ?? new Error('watch failed')),
            );
        }),
    };
  }
}

type CallOptions = NonNullable<Parameters<CoreV1Api['readNamespacedSecret']>[1]>;

function requireNamespace(secret: HostSecret): string {
  const namespace = secret.metadata.namespace;
  if (!namespace) throw new Error(`secret ${secret.metadata.name} has no namespace`);
  return namespace;
}

function fromSecret(secret: HostSecret): V1Secret {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data)) data[k] = v.toString('base64');
  const m = secret.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
      ...(m.labels ? { labels: { ...m.labels } } : {}),
      ...(m.annotations ? { annotations: { ...m.annotations } } : {}),
    },
    type: secret.type ?? 'Opaque',
    data,
  };
}

function copyExtra(extra: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(extra)) out[k] = [...v];
  return out;
}

/** A library or network error as a HostClusterError that says what was being done. */
export function toHostError(what: string, err: unknown): HostClusterError {
  if (err instanceof HostClusterError) return err;
  if (err instanceof ApiException) {
    const status = statusOf(err.body);
    const detail = status?.message || (err.code === 401 ? 'Unauthorized' : `HTTP ${err.code}`);
    return new HostClusterError(`host cluster: ${what}: ${detail}`, err.code, status?.reason ?? '', {
      cause: err,
    });
  }
  const e = err as { statusCode?: unknown; name?: unknown; message?: unknown };
  if (typeof e.statusCode === 'number')
    return new HostClusterError(`host cluster: ${what}: HTTP ${e.statusCode}`, e.statusCode, '', {
      cause: err,
    });
  const timedOut = e.name === 'AbortError' || e.name === 'TimeoutError';
  const message = timedOut ? 'no answer in time' : typeof e.message === 'string' ? e.message : String(err);
  return new HostClusterError(`host cluster: ${what}: ${message}`, 0, timedOut ? 'Timeout' : '', {
    cause: err,
  });
}
