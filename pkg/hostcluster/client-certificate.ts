// A client certificate signed by the host cluster: make a key, file a
// CertificateSigningRequest for the signer, approve it, wait for the signer to
// issue, and always delete the request afterwards (signed, denied, failed or timed
// out) so no CSR is left behind on the host.

import { generateKeyPairSync } from 'node:crypto';
import { createCertificateRequest } from './certificate-request.js';
import type { HostCertificateSigningRequest, HostCluster } from './types.js';

export type CertificateSigningFailure = 'denied' | 'failed' | 'timeout' | 'deleted';

export class CertificateSigningError extends Error {
  override readonly name = 'CertificateSigningError';

  constructor(
    message: string,
    readonly failure: CertificateSigningFailure,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface ClientCertificateOptions {
  readonly signerName: string;
  /** The user (CN). */
  readonly commonName: string;
  /** The groups (O). */
  readonly organizations?: readonly string[];
  /** Omitted: the signer's default lifetime. */
  readonly expirationSeconds?: number;
  /** How long to wait for the signer after approving. */
  readonly timeoutMs: number;
  /** Prefix of the request's generated name. */
  readonly namePrefix?: string;
  readonly keyType?: 'ec' | 'rsa';
  readonly approvalReason?: string;
  readonly approvalMessage?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface ClientCertificate {
  /** The issued certificate (and any intermediates the signer returned). */
  readonly certPem: string;
  readonly keyPem: string;
  /** Name of the (now deleted) request, for logs. */
  readonly requestName: string;
}

export async function requestClientCertificate(
  host: HostCluster,
  options: ClientCertificateOptions,
): Promise<ClientCertificate> {
  const keyType = options.keyType ?? 'ec';
  const privateKey =
    keyType === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const requestPem = createCertificateRequest({
    privateKey,
    commonName: options.commonName,
    organizations: options.organizations ?? [],
  });
  const usages =
    keyType === 'rsa'
      ? ['digital signature', 'key encipherment', 'client auth']
      : ['digital signature', 'client auth'];
  const signal = options.signal ? { signal: options.signal } : {};
  const created = await host.createCertificateSigningRequest(
    {
      generateName: options.namePrefix ?? 'platform-',
      ...(options.labels ? { labels: options.labels } : {}),
      signerName: options.signerName,
      requestPem,
      usages,
      ...(options.expirationSeconds !== undefined ? { expirationSeconds: options.expirationSeconds } : {}),
    },
    signal,
  );
  const name = created.metadata.name;
  try {
    try {
      await host.approveCertificateSigningRequest(
        name,
        options.approvalReason ?? 'PlatformApproved',
        options.approvalMessage ?? `approved by platform-apiserver for ${options.commonName}`,
        signal,
      );
    } catch (err) {
      // Someone (an approval policy, an administrator) may have denied it first: say that, not "invalid".
      const current = await host.getCertificateSigningRequest(name).catch(() => undefined);
      const outcome = current ? outcomeOf(current) : undefined;
      throw outcome ?? err;
    }
    const certPem = await waitForCertificate(host, name, options.timeoutMs, options.signal);
    return {
      certPem,
      keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      requestName: name,
    };
  } finally {
    await host.deleteCertificateSigningRequest(name).catch(() => undefined);
  }
}

/** Resolves with the issued PEM certificate; rejects with a CertificateSigningError on denial, failure, deletion or timeout. */
export function waitForCertificate(
  host: HostCluster,
  name: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    let seen = false;
    const finish = (err: Error | undefined, pem?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void handle.stop();
      if (err) reject(err);
      else resolve(pem ?? '');
    };
    const onAbort = (): void =>
      finish(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    const timer = setTimeout(
      () =>
        finish(
          new CertificateSigningError(
            `the signer did not issue a certificate for certificate signing request ${name} within ${Math.round(timeoutMs / 1000)}s`,
            'timeout',
          ),
        ),
      timeoutMs,
    );
    const handle = host.watchCertificateSigningRequest(name, (csr) => {
      if (!csr) {
        if (seen)
          finish(new CertificateSigningError(`certificate signing request ${name} was deleted`, 'deleted'));
        return;
      }
      seen = true;
      const outcome = outcomeOf(csr);
      if (outcome) finish(outcome);
      else if (csr.certificatePem) finish(undefined, csr.certificatePem);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function outcomeOf(csr: HostCertificateSigningRequest): CertificateSigningError | undefined {
  const name = csr.metadata.name;
  for (const c of csr.conditions) {
    if (c.status !== 'True') continue;
    const why = [c.reason, c.message].filter(Boolean).join(': ');
    if (c.type === 'Denied')
      return new CertificateSigningError(
        `certificate signing request ${name} was denied${why ? `: ${why}` : ''}`,
        'denied',
      );
    if (c.type === 'Failed')
      return new CertificateSigningError(
        `the signer failed to sign certificate signing request ${name}${why ? `: ${why}` : ''}`,
        'failed',
      );
  }
  return undefined;
}
