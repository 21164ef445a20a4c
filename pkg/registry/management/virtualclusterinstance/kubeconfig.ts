// POST virtualclusterinstances/<name>/kubeconfig: a kube config for one virtual
// cluster instance, reaching it through its ingress access point.
//
//   server   spec.server, else https://<ingress host>; 400 without an ingress
//            access point (the message says how to switch it on)
//   CA       the virtual cluster's CA, from its certificate secret on the host:
//            `<vc>-certs` key `ca.crt` (vcluster 0.20+), else `vc-<vc>` key
//            `certificate-authority` (older vcluster)
//   user     a platform token scoped to this virtual cluster, owned by the caller;
//            or, with clientCert, a client certificate signed through the host's
//            CertificateSigningRequest API (key made here, request approved here,
//            always deleted afterwards), bound to the caller's User and access
//            key (pkg/authentication/certificate-binding.ts), so that it stops
//            working here when they do
//
// certificateTTL: omitted one day; 0 no expirationSeconds (the signer decides; a
// token lives as long as --max-token-ttl allows); negative 422. Nothing is stored
// and a dry run signs nothing.

import {
  ApiError,
  newBadRequest,
  newForbidden,
  newInternalError,
  newInvalid,
  newServiceUnavailable,
  newTimeout,
  type GroupResource,
} from '../../../apis/meta/errors.js';
import { FieldPath, invalid, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import type { AccessKeyScope } from '../../../apis/management/v1/common.js';
import {
  DEFAULT_CERTIFICATE_TTL_SECONDS,
  KUBECONFIG_KIND,
  KUBECONFIG_SUBRESOURCE,
  kubeConfigSubresourceInfo,
  virtualClusterInstanceKubeConfigSchema,
} from '../../../apis/management/v1/virtual-cluster-instance-kubeconfig.js';
import type { CompiledSchema } from '../../../apis/schema/types.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import {
  certificateBindingGroup,
  isCertificateBindingGroup,
  type CertificateBinding,
} from '../../../authentication/certificate-binding.js';
import { userTokenGeneration } from '../../../identity/token-generation.js';
import { HostClusterError } from '../../../hostcluster/errors.js';
import {
  CertificateSigningError,
  requestClientCertificate,
} from '../../../hostcluster/client-certificate.js';
import type { HostCluster } from '../../../hostcluster/types.js';
import type { StorageDeadline } from '../../../storage/deadline.js';
import { serializeKubeConfig, singleContextKubeConfig } from '../../../kubeconfig/builder.js';
import { isUnlimitedScope, scopeExcess } from '../../../tokens/scope.js';
import { issueCallerToken, type CallerTokenIssuer } from '../directclusterendpointtoken/caller-token.js';
import { decodeObject } from '../../generic/decode.js';
import { nowTimestamp } from '../../generic/object.js';
import type {
  CreateOptions,
  RequestContext,
  RESTStorage,
  SubresourceInfo,
  SubresourceStorage,
} from '../../rest/interfaces.js';
import { ingressEnabled, ingressHost, projectOfNamespace } from './access-point.js';

/** Kubernetes refuses CertificateSigningRequests asking for less (certificates/v1 validation). */
export const MIN_EXPIRATION_SECONDS = 600;
export const DEFAULT_CSR_TIMEOUT_MS = 30_000;
export const DEFAULT_CSR_SIGNER = 'kubernetes.io/kube-apiserver-client';

export interface KubeConfigSubresourceOptions {
  readonly group: string;
  /** The VirtualClusterInstance Store: the instance is read as the caller would read it. */
  readonly instances: Required<Pick<RESTStorage, 'get'>>;
  /** The host cluster; undefined when none is configured. */
  readonly host: HostCluster | undefined;
  readonly tokens: CallerTokenIssuer;
  /** Longest token lifetime, seconds (--max-token-ttl). */
  readonly maxTokenTtlSeconds: number;
  readonly signerName?: string;
  readonly csrTimeoutMs?: number;
  readonly ingressSuffix: string;
  readonly projectNamespacePrefix: string;
  readonly compileSchema: (schema: Record<string, unknown>) => CompiledSchema;
  readonly now?: () => Date;
}

interface KubeConfigRequest {
  readonly certificateTTL: number | undefined;
  readonly server: string | undefined;
  readonly clientCert: boolean;
}

export class KubeConfigSubresource implements SubresourceStorage {
  readonly info: SubresourceInfo = kubeConfigSubresourceInfo();
  readonly schema: Record<string, unknown> = virtualClusterInstanceKubeConfigSchema();
  private readonly compiled: CompiledSchema;
  private readonly gr: GroupResource;
  private readonly now: () => Date;
  private readonly signerName: string;
  private readonly csrTimeoutMs: number;

  constructor(private readonly options: KubeConfigSubresourceOptions) {
    this.compiled = options.compileSchema(this.schema);
    this.gr = { group: options.group, resource: `virtualclusterinstances/${KUBECONFIG_SUBRESOURCE}` };
    this.now = options.now ?? (() => new Date());
    this.signerName = options.signerName ?? DEFAULT_CSR_SIGNER;
    this.csrTimeoutMs = options.csrTimeoutMs ?? DEFAULT_CSR_TIMEOUT_MS;
  }

  async create(
    ctx: RequestContext,
    parentName: string,
    body: unknown,
    options: CreateOptions,
  ): Promise<KubeObject> {
    const request = this.decode(ctx, parentName, body, options);
    // 404 for an instance that does not exist, in the Store's words.
    const instance = await this.options.instances.get(ctx, parentName, {});
    const namespace = instance.metadata.namespace ?? ctx.namespace;
    const server = request.server ?? `https://${this.ingressHostOf(instance)}`;
    const caller = ctx.user;
    const project = projectOfNamespace(namespace, this.options.projectNamespacePrefix) ?? '';
    const scope: AccessKeyScope = { virtualClusters: [{ project, virtualCluster: parentName }] };
    if (!request.clientCert) this.checkScope(caller, scope, parentName);
    else this.checkCertificateSubject(caller, parentName);

    const response: KubeObject = {
      apiVersion: `${this.options.group}/v1`,
      kind: KUBECONFIG_KIND,
      metadata: { name: parentName, namespace, creationTimestamp: nowTimestamp(this.now()) },
      spec: {
        ...(request.certificateTTL !== undefined ? { certificateTTL: request.certificateTTL } : {}),
        ...(request.server !== undefined ? { server: request.server } : {}),
        ...(request.clientCert ? { clientCert: true } : {}),
      },
      status: {},
    };
    const host = this.options.host;
    if (!host) {
      throw newServiceUnavailable(
        'no host cluster is configured, so kube configs for virtual clusters cannot be made: start the server with --host-kubeconfig, or run it inside the host cluster',
      );
    }
    const caPem = await this.virtualClusterCa(host, instance, signal(ctx));
    if (options.dryRun) return response;

    const user = request.clientCert
      ? await this.clientCertificate(host, caller, request.certificateTTL, signal(ctx), ctx.deadline)
      : { token: await this.token(ctx, caller, request.certificateTTL, scope) };
    const contextName = project ? `${parentName}-${project}` : parentName;
    const kubeConfig = singleContextKubeConfig({
      contextName,
      cluster: { server, ...(caPem ? { caPem } : {}) },
      user,
    });
    return { ...response, status: { kubeConfig: serializeKubeConfig(kubeConfig) } };
  }

  private decode(
    ctx: RequestContext,
    parentName: string,
    body: unknown,
    options: CreateOptions,
  ): KubeConfigRequest {
    const info = {
      group: this.options.group,
      version: 'v1',
      resource: this.gr.resource,
      singular: '',
      kind: KUBECONFIG_KIND,
      listKind: `${KUBECONFIG_KIND}List`,
      namespaced: true,
      shortNames: [],
      categories: [],
      verbs: this.info.verbs,
      subresources: [],
    };
    // An empty body asks for the defaults.
    const given = body === undefined || body === null || body === '' ? {} : body;
    const obj = decodeObject(given, {
      info,
      schema: this.compiled,
      fieldValidation: options.fieldValidation,
      warnings: ctx.warnings,
      mode: 'body',
    });
    const errs: FieldError[] = this.compiled.validate(obj);
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const ttl = typeof spec['certificateTTL'] === 'number' ? spec['certificateTTL'] : undefined;
    const clientCert = spec['clientCert'] === true;
    const path = FieldPath.root('spec').child('certificateTTL');
    if (ttl !== undefined && ttl < 0) errs.push(invalid(path, ttl, 'must be greater than or equal to 0'));
    else if (clientCert && ttl !== undefined && ttl > 0 && ttl < MIN_EXPIRATION_SECONDS) {
      errs.push(
        invalid(
          path,
          ttl,
          `must be 0 or at least ${MIN_EXPIRATION_SECONDS} for a client certificate (the CertificateSigningRequest minimum)`,
        ),
      );
    }
    const server = typeof spec['server'] === 'string' && spec['server'] !== '' ? spec['server'] : undefined;
    if (server !== undefined && !isHttpsUrl(server)) {
      errs.push(invalid(FieldPath.root('spec').child('server'), server, 'must be an https:// URL'));
    }
    if (errs.length > 0)
      throw newInvalid({ group: this.options.group, kind: KUBECONFIG_KIND }, parentName, errs);
    return { certificateTTL: ttl, server, clientCert };
  }

  private ingressHostOf(instance: KubeObject): string {
    const name = instance.metadata.name ?? '';
    const where = `${instance.metadata.namespace ?? ''}/${name}`;
    if (!ingressEnabled(instance)) {
      throw newBadRequest(
        `virtual cluster instance ${where} has no ingress access point, so there is no server address for its kube config: enable it with spec.template.accessPoint.ingress.enabled: true, or give spec.server`,
      );
    }
    const host = ingressHost(instance, this.options);
    if (!host) {
      throw newBadRequest(
        `virtual cluster instance ${where} has its ingress access point on but no ingress host: set spec.template.accessPoint.ingress.host, start the server with --ingress-suffix, or give spec.server`,
      );
    }
    return host;
  }

  /** A token for this virtual cluster must stay within the scope of the caller's own credential. */
  private checkScope(caller: AuthenticatedUser, scope: AccessKeyScope, name: string): void {
    if (isUnlimitedScope(caller.scope)) return;
    const excess = scopeExcess(scope, caller.scope);
    if (excess.length > 0) {
      throw newForbidden(
        this.gr,
        name,
        `the scope of User ${JSON.stringify(caller.name)}'s credential does not include this virtual cluster`,
      );
    }
  }

  /**
   * The certificate is signed for the host's client signer: a `system:` name or
   * group in it would claim a host identity the caller never proved. A scoped
   * credential gets no certificate (a certificate cannot carry the scope).
   */
  private checkCertificateSubject(caller: AuthenticatedUser, name: string): void {
    if (caller.name.startsWith('system:')) {
      throw newForbidden(
        this.gr,
        name,
        `client certificates are not issued for the identity ${JSON.stringify(caller.name)}`,
      );
    }
    if (!isUnlimitedScope(caller.scope)) {
      throw newForbidden(
        this.gr,
        name,
        `User ${JSON.stringify(caller.name)} uses a scoped credential, and a client certificate cannot carry a scope: ask for a token (clientCert: false)`,
      );
    }
  }

  private async token(
    ctx: RequestContext,
    caller: AuthenticatedUser,
    certificateTTL: number | undefined,
    scope: AccessKeyScope,
  ): Promise<string> {
    const max = this.options.maxTokenTtlSeconds;
    let ttl =
      certificateTTL === undefined
        ? DEFAULT_CERTIFICATE_TTL_SECONDS
        : certificateTTL === 0
          ? max
          : certificateTTL;
    if (ttl > max) {
      ctx.warnings.push(
        `the token lives ${max} seconds, the longest this server issues, not the ${ttl} asked for`,
      );
      ttl = max;
    }
    return issueCallerToken(this.options.tokens, caller, ttl, scope, ctx.deadline);
  }

  private async clientCertificate(
    host: HostCluster,
    caller: AuthenticatedUser,
    certificateTTL: number | undefined,
    abort: AbortSignal | undefined,
    deadline: StorageDeadline | undefined,
  ): Promise<{ clientCertificatePem: string; clientKeyPem: string }> {
    const expirationSeconds = certificateTTL === undefined ? DEFAULT_CERTIFICATE_TTL_SECONDS : certificateTTL;
    const binding = await this.bindingOf(caller, deadline);
    try {
      const cert = await requestClientCertificate(host, {
        signerName: this.signerName,
        commonName: caller.name,
        organizations: [
          ...caller.groups.filter((g) => !g.startsWith('system:') && !isCertificateBindingGroup(g)),
          ...(binding ? [certificateBindingGroup(this.options.group, binding)] : []),
        ],
        ...(expirationSeconds > 0 ? { expirationSeconds } : {}),
        timeoutMs: this.csrTimeoutMs,
        namePrefix: 'platform-kubeconfig-',
        approvalReason: 'PlatformKubeConfig',
        approvalMessage: `approved by platform-apiserver for a kube config of ${caller.name}`,
        ...(abort ? { signal: abort } : {}),
      });
      return { clientCertificatePem: cert.certPem, clientKeyPem: cert.keyPem };
    } catch (err) {
      throw this.signingFailure(err, host);
    }
  }

  /**
   * What the certificate stays bound to (certificate-binding.ts): the caller's
   * User as it is now, and the access key the caller used. A caller that is
   * neither (a host identity that is no platform User) gets a plain host certificate.
   */
  private async bindingOf(
    caller: AuthenticatedUser,
    deadline: StorageDeadline | undefined,
  ): Promise<CertificateBinding | undefined> {
    // The caller's User is read for this request: under its deadline, like every other read.
    const user = await this.options.tokens.users.user(caller.name, deadline);
    const uid = user?.metadata.uid;
    const accessKey =
      caller.accessKeyName && caller.accessKeyUid && caller.accessKeyDigest
        ? { name: caller.accessKeyName, uid: caller.accessKeyUid, digest: caller.accessKeyDigest }
        : undefined;
    if (!uid && !accessKey) return undefined;
    return {
      ...(user && uid ? { user: { uid, tokenGeneration: userTokenGeneration(user) } } : {}),
      ...(accessKey ? { accessKey } : {}),
    };
  }

  private signingFailure(err: unknown, host: HostCluster): ApiError {
    if (err instanceof CertificateSigningError) {
      switch (err.failure) {
        case 'denied':
          return newForbidden(this.gr, '', `the host cluster denied the client certificate: ${err.message}`);
        case 'failed':
          return newInternalError(
            `the host cluster's signer failed to issue the client certificate: ${err.message}`,
            err,
          );
        case 'timeout':
          return newTimeout(
            `${err.message}; is a signer for ${JSON.stringify(this.signerName)} running on the host cluster (--csr-signer-name)?`,
          );
        case 'deleted':
          return newInternalError(`the client certificate was not issued: ${err.message}`, err);
      }
    }
    return hostError(err, host, 'request a client certificate from');
  }

  private async virtualClusterCa(
    host: HostCluster,
    instance: KubeObject,
    abort: AbortSignal | undefined,
  ): Promise<string> {
    const spec = isObject(instance['spec']) ? instance['spec'] : {};
    const ref = isObject(spec['clusterRef']) ? spec['clusterRef'] : {};
    const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : '';
    const vc =
      typeof ref['virtualCluster'] === 'string' && ref['virtualCluster']
        ? ref['virtualCluster']
        : (instance.metadata.name ?? '');
    const where = `${instance.metadata.namespace ?? ''}/${instance.metadata.name ?? ''}`;
    if (!namespace) {
      throw newBadRequest(
        `virtual cluster instance ${where} does not say where it runs on the host: set spec.clusterRef.namespace (and spec.clusterRef.virtualCluster when its name differs)`,
      );
    }
    const candidates = [
      { name: `${vc}-certs`, key: 'ca.crt' },
      { name: `vc-${vc}`, key: 'certificate-authority' },
    ];
    for (const c of candidates) {
      let secret;
      try {
        secret = await host.getSecret(namespace, c.name, abort ? { signal: abort } : {});
      } catch (err) {
        throw hostError(err, host, 'read the certificate secret of the virtual cluster from');
      }
      const pem = secret?.data[c.key]?.toString('utf8');
      if (pem && pem.includes('BEGIN CERTIFICATE')) return pem;
    }
    throw newServiceUnavailable(
      `the certificate authority of virtual cluster ${namespace}/${vc} was not found on the host cluster (looked in secrets ${candidates.map((c) => `${c.name}[${c.key}]`).join(' and ')}); is the virtual cluster deployed?`,
    );
  }
}

function signal(ctx: RequestContext): AbortSignal | undefined {
  return ctx.signal;
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/** A host cluster failure as a Status that says what went wrong where. */
function hostError(err: unknown, host: HostCluster, action: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HostClusterError) {
    if (err.code === 0) {
      return newServiceUnavailable(
        `could not ${action} the host cluster at ${host.server}: it cannot be reached (${err.message})`,
      );
    }
    return newServiceUnavailable(
      `could not ${action} the host cluster at ${host.server}: it answered ${err.code}${err.reason ? ` ${err.reason}` : ''}: ${err.message}`,
    );
  }
  return newInternalError(`could not ${action} the host cluster`, err);
}
