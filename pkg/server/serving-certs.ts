// HTTPS material. With --tls-cert-file/--tls-private-key-file the operator's files
// are used as given. Without them the server makes its own CA and a serving
// certificate signed by it, once, in <data-dir>/pki, so the admin kube config can
// pin that CA and kubectl verifies the server without --insecure-skip-tls-verify.
// Keys come from node:crypto (native, fast); node-forge writes the certificates.

import {
  generateKeyPairSync,
  randomBytes,
  X509Certificate,
  createPrivateKey,
  createPublicKey,
} from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';
import forge from 'node-forge';
import { isDNS1123Subdomain } from '../apis/meta/validation.js';
import type { Logger } from '../util/log/index.js';
import { writeFileAtomic } from '../util/atomic-write.js';

export interface ServingCertificates {
  /** PEM chain presented to clients. */
  readonly certPem: string;
  readonly keyPem: string;
  /** PEM of the CA clients should trust, when known (generated CA, or a self-issued root in the given chain). */
  readonly caPem?: string;
  /** Where the material came from, for logs. */
  readonly source: 'generated' | 'reused' | 'files';
}

export const CA_CERT_FILE = 'ca.crt';
export const CA_KEY_FILE = 'ca.key';
export const SERVING_CERT_FILE = 'apiserver.crt';
export const SERVING_KEY_FILE = 'apiserver.key';

/** Renew a generated serving certificate that has less than this left. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const CA_VALIDITY_YEARS = 10;
const SERVING_VALIDITY_YEARS = 1;

/** The names and addresses the generated serving certificate must cover. */
export function desiredSANs(bindAddress: string, hostName = osHostname()): { dns: string[]; ips: string[] } {
  const dns = ['localhost'];
  const host = hostName.toLowerCase();
  // A host name that is not a valid DNS name cannot go in a SAN; skip it rather than fail.
  if (isDNS1123Subdomain(host).length === 0 && host !== 'localhost') {
    dns.push(host);
  }
  const ips = ['127.0.0.1', '::1'];
  if (isIP(bindAddress) !== 0 && !isUnspecified(bindAddress) && !ips.includes(bindAddress))
    ips.push(bindAddress);
  return { dns, ips };
}

export function isUnspecified(address: string): boolean {
  return address === '0.0.0.0' || address === '::' || /^[0:]+$/.test(address);
}

/** Loads operator-supplied files; the CA is known only when the chain ends in a self-issued certificate. */
export function loadServingCertificates(certFile: string, keyFile: string): ServingCertificates {
  const certPem = readFileSync(certFile, 'utf8');
  const keyPem = readFileSync(keyFile, 'utf8');
  const chain = splitPemCertificates(certPem);
  const first = chain[0];
  if (!first) throw new Error(`--tls-cert-file "${certFile}" holds no PEM certificate`);
  const leaf = new X509Certificate(first);
  if (!leaf.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new Error(`--tls-private-key-file "${keyFile}" does not match the certificate in "${certFile}"`);
  }
  const last = chain[chain.length - 1] ?? first;
  const root = new X509Certificate(last);
  const selfIssued = root.checkIssued(root) && root.verify(root.publicKey);
  return selfIssued
    ? { certPem, keyPem, caPem: last, source: 'files' }
    : { certPem, keyPem, source: 'files' };
}

/**
 * Returns the generated CA and serving certificate in `pkiDir`, creating what is
 * missing and replacing a serving certificate that no longer fits (SANs no longer
 * cover the bind address, not signed by the CA, close to expiry, key mismatch).
 */
export function ensureServingCertificates(options: {
  pkiDir: string;
  bindAddress: string;
  hostName?: string;
  logger?: Logger;
  now?: Date;
}): ServingCertificates {
  const { pkiDir, logger } = options;
  const now = options.now ?? new Date();
  mkdirSync(pkiDir, { recursive: true, mode: 0o700 });
  const sans = desiredSANs(options.bindAddress, options.hostName);

  let generated = false;
  let ca = readPair(join(pkiDir, CA_CERT_FILE), join(pkiDir, CA_KEY_FILE));
  if (!ca || !usableCA(ca, now)) {
    const created = createCA(now);
    writeFileAtomic(join(pkiDir, CA_KEY_FILE), created.keyPem, 0o600);
    writeFileAtomic(join(pkiDir, CA_CERT_FILE), created.certPem, 0o644);
    ca = created;
    generated = true;
    logger?.info('generated a certificate authority', { file: join(pkiDir, CA_CERT_FILE) });
  }

  let serving = readPair(join(pkiDir, SERVING_CERT_FILE), join(pkiDir, SERVING_KEY_FILE));
  const problem = serving ? servingProblem(serving, ca, sans, now) : 'missing';
  if (problem) {
    serving = createServingCert(ca, sans, now);
    writeFileAtomic(join(pkiDir, SERVING_KEY_FILE), serving.keyPem, 0o600);
    writeFileAtomic(join(pkiDir, SERVING_CERT_FILE), serving.certPem, 0o644);
    generated = true;
    logger?.info('generated a serving certificate', {
      file: join(pkiDir, SERVING_CERT_FILE),
      reason: problem,
      dnsNames: sans.dns,
      ipAddresses: sans.ips,
    });
  }
  if (!serving) throw new Error('unreachable: serving certificate was just created');
  return {
    certPem: serving.certPem,
    keyPem: serving.keyPem,
    caPem: ca.certPem,
    source: generated ? 'generated' : 'reused',
  };
}

interface Pair {
  readonly certPem: string;
  readonly keyPem: string;
}

function readPair(certFile: string, keyFile: string): Pair | undefined {
  try {
    return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  } catch {
    return undefined;
  }
}

function usableCA(ca: Pair, now: Date): boolean {
  try {
    const cert = new X509Certificate(ca.certPem);
    return (
      cert.ca &&
      cert.checkPrivateKey(createPrivateKey(ca.keyPem)) &&
      new Date(cert.validTo).getTime() - now.getTime() > RENEW_BEFORE_MS
    );
  } catch {
    return false;
  }
}

/** Why a serving certificate must be replaced, or undefined when it still fits. */
function servingProblem(
  serving: Pair,
  ca: Pair,
  sans: { dns: string[]; ips: string[] },
  now: Date,
): string | undefined {
  let cert: X509Certificate;
  let caCert: X509Certificate;
  try {
    cert = new X509Certificate(serving.certPem);
    caCert = new X509Certificate(ca.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(serving.keyPem))) return 'key does not match certificate';
  } catch {
    return 'unreadable';
  }
  if (!cert.checkIssued(caCert) || !cert.verify(caCert.publicKey)) return 'not signed by the current CA';
  if (new Date(cert.validTo).getTime() - now.getTime() < RENEW_BEFORE_MS) return 'expires soon';
  for (const ip of sans.ips) if (cert.checkIP(ip) === undefined) return `does not cover ${ip}`;
  for (const dns of sans.dns)
    if (cert.checkHost(dns, { wildcards: false }) === undefined) return `does not cover ${dns}`;
  return undefined;
}

function newKeyPair(): {
  forgeKey: forge.pki.rsa.PrivateKey;
  forgePublic: forge.pki.rsa.PublicKey;
  keyPem: string;
} {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const publicPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return {
    forgeKey: forge.pki.privateKeyFromPem(keyPem),
    forgePublic: forge.pki.publicKeyFromPem(publicPem),
    keyPem,
  };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive, as RFC 5280 requires
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, years: number): void {
  // Backdate an hour so a client whose clock is slightly behind accepts a fresh certificate.
  cert.validity.notBefore = new Date(now.getTime() - 3600 * 1000);
  const notAfter = new Date(now.getTime());
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + years);
  cert.validity.notAfter = notAfter;
}

function createCA(now: Date): Pair {
  const key = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serialNumber();
  validity(cert, now, CA_VALIDITY_YEARS);
  const subject = [
    { name: 'commonName', value: `platform-apiserver-ca-${Math.floor(now.getTime() / 1000)}` },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.forgeKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}

function createServingCert(ca: Pair, sans: { dns: string[]; ips: string[] }, now: Date): Pair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const key = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = serialNumber();
  validity(cert, now, SERVING_VALIDITY_YEARS);
  cert.setSubject([{ name: 'commonName', value: 'platform-apiserver' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        ...sans.dns.map((value) => ({ type: 2, value })),
        ...sans.ips.map((ip) => ({ type: 7, ip })),
      ],
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}

export function splitPemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
}
