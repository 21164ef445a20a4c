// TEST DOUBLE. What kube-controller-manager's CSR signing controller does for a
// signer it serves: once a request is Approved (and neither Denied nor Failed),
// check the request against the signer's rules and either issue a certificate from
// the signer's CA or add a Failed condition. As upstream, the certificate is
// backdated five minutes, lives `expirationSeconds` (capped by the signer's maximum
// and the CA's own expiry), and carries the request's subject, SANs and usages.

import { toPem } from '../der.js';
import { OID } from '../x509-names.js';
import { CsrReadError, readCertificateRequest } from './csr-reader.js';
import { KEY_USAGE, signPublicKey, type CertificateAuthority } from './pki.js';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

/** Usages kube-apiserver-client certificates may carry; "client auth" is required. */
const CLIENT_SIGNER_USAGES = new Set(['digital signature', 'key encipherment', 'client auth']);

const KEY_USAGES: Record<string, number> = {
  signing: KEY_USAGE.digitalSignature,
  'digital signature': KEY_USAGE.digitalSignature,
  'content commitment': KEY_USAGE.contentCommitment,
  'key encipherment': KEY_USAGE.keyEncipherment,
  'key agreement': KEY_USAGE.keyAgreement,
  'data encipherment': KEY_USAGE.dataEncipherment,
  'cert sign': KEY_USAGE.keyCertSign,
  'crl sign': KEY_USAGE.cRLSign,
};

const EXT_KEY_USAGES: Record<string, string> = {
  any: OID.anyExtendedKeyUsage,
  'server auth': OID.serverAuth,
  'client auth': OID.clientAuth,
};

export type SignOutcome =
  | { readonly kind: 'issued'; readonly certificatePem: string }
  | { readonly kind: 'failed'; readonly reason: string; readonly message: string };

export interface SignRequest {
  readonly signerName: string;
  readonly requestPem: string;
  readonly usages: readonly string[];
  readonly expirationSeconds?: number;
}

export function signCertificateRequest(
  ca: CertificateAuthority,
  request: SignRequest,
  options: { maxDurationSeconds: number; now?: Date },
): SignOutcome {
  const fail = (message: string): SignOutcome => ({
    kind: 'failed',
    reason: 'SignerValidationFailure',
    message,
  });
  let parsed;
  try {
    parsed = readCertificateRequest(request.requestPem);
  } catch (err) {
    if (err instanceof CsrReadError) return fail(err.message);
    throw err;
  }
  if (request.signerName === KUBE_APISERVER_CLIENT_SIGNER) {
    const bad = request.usages.filter((u) => !CLIENT_SIGNER_USAGES.has(u));
    if (bad.length > 0) return fail(`invalid usage for client certificate: ${bad[0]}`);
    if (!request.usages.includes('client auth'))
      return fail('missing required usage for client certificate: client auth');
  }
  const unknown = request.usages.find((u) => !(u in KEY_USAGES) && !(u in EXT_KEY_USAGES));
  if (unknown) return fail(`unknown usage: ${unknown}`);

  const now = options.now ?? new Date();
  const requested = request.expirationSeconds ?? options.maxDurationSeconds;
  const lifetime = Math.min(requested, options.maxDurationSeconds);
  const caNotAfter = new Date(ca.cert.validTo);
  const notAfter = new Date(Math.min(now.getTime() + lifetime * 1000, caNotAfter.getTime()));
  const caNotBefore = new Date(ca.cert.validFrom);
  const notBefore = new Date(Math.max(now.getTime() - 5 * 60_000, caNotBefore.getTime()));
  const der = signPublicKey(ca, parsed.publicKeyDer, {
    commonName: parsed.commonName,
    organizations: parsed.organizations,
    notBefore,
    notAfter,
    keyUsage: [...new Set(request.usages.flatMap((u) => (u in KEY_USAGES ? [KEY_USAGES[u] ?? 0] : [])))],
    extKeyUsage: [
      ...new Set(request.usages.flatMap((u) => (u in EXT_KEY_USAGES ? [EXT_KEY_USAGES[u] ?? ''] : []))),
    ],
    dnsNames: parsed.dnsNames,
    ipAddresses: parsed.ipAddresses,
  });
  return { kind: 'issued', certificatePem: toPem('CERTIFICATE', der) };
}
