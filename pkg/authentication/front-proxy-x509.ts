// Verifies the client certificate of a TLS connection against a CA bundle, the way
// k8s.io/apiserver's x509 request authenticator does (Go's x509.Verify with the
// bundle as roots, the presented chain as intermediates, and the client-auth
// extended key usage), then checks the common name against the allowed names.
//
// The server only *requests* client certificates and accepts any at the TLS layer
// (most callers have none); whether a certificate is trusted is decided here, per
// request, against the bundle in force now - so a rotated front-proxy CA takes
// effect without restarting the listener.

import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';
const MAX_CHAIN = 8;

export type VerifyResult =
  { readonly ok: true; readonly commonName: string } | { readonly ok: false; readonly reason: string };

/** Every certificate in a PEM bundle; throws when there is none. */
export function parseCertificateBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const certs = blocks.map((b) => new X509Certificate(b));
  if (certs.length === 0) throw new Error('no PEM certificate found');
  return certs;
}

/** The peer's certificate chain as presented (leaf first); empty when it sent none. */
export function peerCertificateChain(socket: TLSSocket): X509Certificate[] {
  if (typeof socket.getPeerCertificate !== 'function') return [];
  // An empty object when the client sent no certificate.
  const leaf = socket.getPeerCertificate(true) as Partial<DetailedPeerCertificate>;
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let current: DetailedPeerCertificate | undefined = leaf.raw ? (leaf as DetailedPeerCertificate) : undefined;
  while (current?.raw && chain.length < MAX_CHAIN && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    chain.push(new X509Certificate(current.raw));
    current = current.issuerCertificate;
  }
  return chain;
}

function validAt(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo);
}

/** Absent extended key usage means any usage (RFC 5280); present, it must allow client auth. */
function allowsClientAuth(cert: X509Certificate): boolean {
  const usages = cert.keyUsage as string[] | undefined;
  return (
    !usages || usages.length === 0 || usages.includes(CLIENT_AUTH) || usages.includes(ANY_EXTENDED_KEY_USAGE)
  );
}

function issuedBy(child: X509Certificate, issuer: X509Certificate, now: number): boolean {
  return issuer.ca && validAt(issuer, now) && child.checkIssued(issuer) && child.verify(issuer.publicKey);
}

/**
 * Whether `chain` (leaf first, then what the client sent) leads from a valid
 * client-auth leaf to one of `roots`, through CA certificates only.
 */
export function verifyClientChain(
  chain: readonly X509Certificate[],
  roots: readonly X509Certificate[],
  now: number = Date.now(),
): VerifyResult {
  const leaf = chain[0];
  if (!leaf) return { ok: false, reason: 'no client certificate' };
  if (!validAt(leaf, now)) return { ok: false, reason: 'x509: certificate has expired or is not yet valid' };
  if (!allowsClientAuth(leaf))
    return { ok: false, reason: 'x509: certificate specifies an incompatible key usage' };
  const intermediates = chain.slice(1).filter((c) => c.ca && allowsClientAuth(c));
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (roots.some((root) => issuedBy(current, root, now)))
      return { ok: true, commonName: commonNameOf(leaf) };
    const next = intermediates.find((i) => i !== current && issuedBy(current, i, now));
    if (!next) break;
    current = next;
  }
  return { ok: false, reason: 'x509: certificate signed by unknown authority' };
}

/** The subject's CN (the last one, as Go's pkix.Name reads it); '' when none. */
export function commonNameOf(cert: X509Certificate): string {
  let cn = '';
  for (const line of cert.subject.split('\n')) if (line.startsWith('CN=')) cn = line.slice(3);
  return cn;
}

/** k8s.io/apiserver x509 verifySubject: an empty list allows every name. */
export function checkAllowedName(commonName: string, allowedNames: readonly string[]): VerifyResult {
  if (allowedNames.length === 0 || allowedNames.includes(commonName)) return { ok: true, commonName };
  return { ok: false, reason: `x509: subject with cn=${commonName} is not in the allowed list` };
}
