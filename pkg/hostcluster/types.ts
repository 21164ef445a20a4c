// What the platform server asks of the Kubernetes cluster it is installed in (the
// host): who a bearer token belongs to (TokenReview), whether a host identity may
// do something (SubjectAccessReview), the front-proxy settings kube-apiserver
// publishes in kube-system/extension-apiserver-authentication, a few Secrets of its
// own, and client certificates through CertificateSigningRequests.
//
// The shapes here are this project's, not @kubernetes/client-node's: callers stay
// independent of the client library, Secret data is bytes, and PEM fields are
// decoded text instead of base64.

export interface HostUserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface TokenReviewResult {
  readonly authenticated: boolean;
  /** Set when authenticated. */
  readonly user?: HostUserInfo;
  readonly audiences?: readonly string[];
  /** The host's explanation when not authenticated. */
  readonly error?: string;
}

export interface ResourceAttributes {
  readonly namespace?: string;
  readonly verb: string;
  readonly group?: string;
  readonly version?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
}

export interface NonResourceAttributes {
  readonly path: string;
  readonly verb: string;
}

export interface SubjectAccessReviewSpec {
  readonly user: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  readonly resourceAttributes?: ResourceAttributes;
  readonly nonResourceAttributes?: NonResourceAttributes;
}

export interface SubjectAccessReviewResult {
  readonly allowed: boolean;
  /** An explicit denial: no other authorizer may allow. */
  readonly denied: boolean;
  readonly reason: string;
  readonly evaluationError: string;
}

export interface HostObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface HostConfigMap {
  readonly metadata: HostObjectMeta;
  readonly data: Readonly<Record<string, string>>;
}

export interface HostSecret {
  readonly metadata: HostObjectMeta;
  /** Default `Opaque`. */
  readonly type?: string;
  readonly data: Readonly<Record<string, Buffer>>;
}

export interface CertificateSigningRequestCondition {
  /** Approved, Denied or Failed. */
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface HostCertificateSigningRequest {
  readonly metadata: HostObjectMeta;
  readonly signerName: string;
  /** The PEM `CERTIFICATE REQUEST`. */
  readonly requestPem: string;
  /** In Kubernetes' words: "client auth", "digital signature", "key encipherment", ... */
  readonly usages: readonly string[];
  readonly expirationSeconds?: number;
  /** Who filed it (set by the host). */
  readonly username?: string;
  readonly conditions: readonly CertificateSigningRequestCondition[];
  /** The issued PEM certificate, once the signer has signed. */
  readonly certificatePem?: string;
}

export interface NewCertificateSigningRequest {
  /** Exactly this name, or a prefix when `generateName` is set. */
  readonly name?: string;
  readonly generateName?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly signerName: string;
  readonly requestPem: string;
  readonly usages: readonly string[];
  readonly expirationSeconds?: number;
}

/** Stops a watch; resolves once no more callbacks will run. */
export interface WatchHandle {
  stop(): Promise<void>;
}

/** Called with the object as it now is, or undefined when it does not exist (or was deleted). */
export type ObjectHandler<T> = (obj: T | undefined) => void;

export interface WatchOptions {
  /** Told about failed list or watch attempts (the watch keeps retrying). */
  readonly onError?: (err: Error) => void;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
}

export interface HostCluster {
  /** Where the host's API is, for logs. */
  readonly server: string;

  tokenReview(
    token: string,
    audiences?: readonly string[],
    options?: RequestOptions,
  ): Promise<TokenReviewResult>;
  subjectAccessReview(
    spec: SubjectAccessReviewSpec,
    options?: RequestOptions,
  ): Promise<SubjectAccessReviewResult>;

  getConfigMap(namespace: string, name: string, options?: RequestOptions): Promise<HostConfigMap | undefined>;
  /** Lists, then watches, one ConfigMap; the handler first sees the current state. */
  watchConfigMap(
    namespace: string,
    name: string,
    handler: ObjectHandler<HostConfigMap>,
    options?: WatchOptions,
  ): WatchHandle;

  getSecret(namespace: string, name: string, options?: RequestOptions): Promise<HostSecret | undefined>;
  /** Throws HostClusterError AlreadyExists (409) when it exists. */
  createSecret(secret: HostSecret, options?: RequestOptions): Promise<HostSecret>;
  /** A PUT: carries metadata.resourceVersion for optimistic concurrency when set (409 Conflict otherwise). */
  updateSecret(secret: HostSecret, options?: RequestOptions): Promise<HostSecret>;

  createCertificateSigningRequest(
    csr: NewCertificateSigningRequest,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest>;
  /** Adds the Approved condition through the approval subresource. */
  approveCertificateSigningRequest(
    name: string,
    reason: string,
    message: string,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest>;
  getCertificateSigningRequest(
    name: string,
    options?: RequestOptions,
  ): Promise<HostCertificateSigningRequest | undefined>;
  watchCertificateSigningRequest(
    name: string,
    handler: ObjectHandler<HostCertificateSigningRequest>,
    options?: WatchOptions,
  ): WatchHandle;
  /** Succeeds when it does not exist. */
  deleteCertificateSigningRequest(name: string, options?: RequestOptions): Promise<void>;
}
