// Certificates for tests: certificate authorities, client and serving certificates,
// and signing a certificate request's public key. Real X.509 built with the DER
// helpers and signed by node:crypto, so TLS, Go's and OpenSSL's verifiers accept
// them. EC P-256 keys by default: they are generated in microseconds, where RSA
// keys take tens of milliseconds each.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  X509Certificate,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  bitString,
  boolean,
  children,
  contextTag,
  decode,
  fromPem,
  integer,
  integerFromBytes,
  octetString,
  oid,
  sequence,
  time,
  toPem,
} from '../der.js';
import { OID, encodeAltNames, encodeName, extension, signatureAlgorithmFor } from '../x509-names.js';

export type KeyType = 'ec' | 'rsa' | 'ed25519';

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: X509Certificate;
  readonly privateKey: KeyObject;
}

export interface CertificateAuthority extends IssuedCertificate {
  /** The CA's subject Name DER, copied verbatim into what it issues. */
  readonly subjectDer: Buffer;
  readonly subjectKeyId: Buffer;
}

/** Key usage bits (RFC 5280 §4.2.1.3). */
export const KEY_USAGE = {
  digitalSignature: 0,
  contentCommitment: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
} as const;

export function generateKey(type: KeyType = 'ec'): KeyObject {
  if (type === 'rsa') return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  if (type === 'ed25519') return generateKeyPairSync('ed25519').privateKey;
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
}

export function keyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export interface CertificateTemplate {
  readonly commonName: string;
  readonly organizations?: readonly string[];
  readonly notBefore?: Date;
  readonly notAfter?: Date;
  readonly isCA?: boolean;
  readonly keyUsage?: readonly number[];
  /** Extended key usage OIDs; omitted when empty. */
  readonly extKeyUsage?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

const DAY_MS = 24 * 3600 * 1000;

/** A self-signed CA valid from an hour ago for `days` days. */
export function newCertificateAuthority(
  commonName: string,
  options: { keyType?: KeyType; days?: number; now?: Date } = {},
): CertificateAuthority {
  const now = options.now ?? new Date();
  const privateKey = generateKey(options.keyType);
  const spki = publicKeyDer(privateKey);
  const subjectDer = encodeName({ commonName });
  const subjectKeyId = keyId(spki);
  const der = buildCertificate({
    template: {
      commonName,
      isCA: true,
      keyUsage: [KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign],
      notBefore: new Date(now.getTime() - 3600_000),
      notAfter: new Date(now.getTime() + (options.days ?? 365) * DAY_MS),
    },
    subjectDer,
    spki,
    issuerDer: subjectDer,
    authorityKeyId: subjectKeyId,
    signingKey: privateKey,
  });
  return {
    certPem: toPem('CERTIFICATE', der),
    keyPem: keyPem(privateKey),
    cert: new X509Certificate(der),
    privateKey,
    subjectDer,
    subjectKeyId,
  };
}

/** A client certificate (CN = user, O = groups) signed by `ca`. */
export function issueClientCertificate(
  ca: CertificateAuthority,
  commonName: string,
  options: Omit<CertificateTemplate, 'commonName'> & { keyType?: KeyType } = {},
): IssuedCertificate {
  return issueCertificate(ca, {
    keyUsage: [KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment],
    extKeyUsage: [OID.clientAuth],
    ...options,
    commonName,
  });
}

/** A serving certificate for `dnsNames`/`ipAddresses` signed by `ca`. */
export function issueServingCertificate(
  ca: CertificateAuthority,
  names: { dnsNames?: readonly string[]; ipAddresses?: readonly string[] },
): IssuedCertificate {
  return issueCertificate(ca, {
    commonName: names.dnsNames?.[0] ?? names.ipAddresses?.[0] ?? 'localhost',
    keyUsage: [KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment],
    extKeyUsage: [OID.serverAuth],
    ...names,
  });
}

/** A certificate with a fresh key, signed by `ca` (valid from an hour ago for a year unless told). */
export function issueCertificate(
  ca: CertificateAuthority,
  template: CertificateTemplate & { keyType?: KeyType },
): IssuedCertificate {
  const privateKey = generateKey(template.keyType);
  const der = signPublicKey(ca, publicKeyDer(privateKey), template);
  return {
    certPem: toPem('CERTIFICATE', der),
    keyPem: keyPem(privateKey),
    cert: new X509Certificate(der),
    privateKey,
  };
}

/** Certifies someone else's public key (SubjectPublicKeyInfo DER): what a CSR signer does. Returns DER. */
export function signPublicKey(ca: CertificateAuthority, spki: Buffer, template: CertificateTemplate): Buffer {
  const now = Date.now();
  return buildCertificate({
    template: {
      notBefore: new Date(now - 3600_000),
      notAfter: new Date(now + 365 * DAY_MS),
      ...template,
    },
    subjectDer: encodeName(template),
    spki,
    issuerDer: ca.subjectDer,
    authorityKeyId: ca.subjectKeyId,
    signingKey: ca.privateKey,
  });
}

/** Reads the CA back from PEM (e.g. one a test wrote to disk). */
export function loadCertificateAuthority(certPem: string, keyPemText: string): CertificateAuthority {
  const der = fromPem(certPem, 'CERTIFICATE')[0];
  if (!der) throw new Error('no CERTIFICATE in PEM');
  const tbs = children(decode(der))[0];
  const fields = tbs ? children(tbs) : [];
  // version [0], serial, signature, issuer, validity, subject, spki
  const subject = fields[5];
  const spki = fields[6];
  if (!subject || !spki) throw new Error('malformed certificate');
  const privateKey = createPrivateKey(keyPemText);
  return {
    certPem,
    keyPem: keyPemText,
    cert: new X509Certificate(der),
    privateKey,
    subjectDer: Buffer.from(subject.raw),
    subjectKeyId: keyId(Buffer.from(spki.raw)),
  };
}

function publicKeyDer(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
function keyId(spki: Buffer): Buffer {
  const bits = children(decode(spki))[1];
  return createHash('sha1')
    .update(bits ? bits.content.subarray(1) : spki)
    .digest();
}

function keyUsageBits(bits: readonly number[]): Buffer {
  const max = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(max / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)] = (bytes[Math.floor(b / 8)] ?? 0) | (0x80 >> (b % 8));
  // DER named bit lists drop trailing zero bits and say how many were unused.
  const unused = 7 - (max % 8);
  return Buffer.concat([Buffer.from([0x03, bytes.length + 1, unused]), bytes]);
}

function buildCertificate(parts: {
  template: CertificateTemplate;
  subjectDer: Buffer;
  spki: Buffer;
  issuerDer: Buffer;
  authorityKeyId: Buffer;
  signingKey: KeyObject;
}): Buffer {
  const { template } = parts;
  const extensions: Buffer[] = [];
  if (template.isCA) extensions.push(extension(OID.basicConstraints, sequence(boolean(true)), true));
  else extensions.push(extension(OID.basicConstraints, sequence(), true));
  if (template.keyUsage && template.keyUsage.length > 0)
    extensions.push(extension(OID.keyUsage, keyUsageBits(template.keyUsage), true));
  if (template.extKeyUsage && template.extKeyUsage.length > 0)
    extensions.push(extension(OID.extKeyUsage, sequence(...template.extKeyUsage.map((o) => oid(o)))));
  extensions.push(extension(OID.subjectKeyIdentifier, octetString(keyId(parts.spki))));
  extensions.push(extension(OID.authorityKeyIdentifier, sequence(contextTag(0, parts.authorityKeyId, true))));
  const dnsNames = template.dnsNames ?? [];
  const ipAddresses = template.ipAddresses ?? [];
  if (dnsNames.length > 0 || ipAddresses.length > 0)
    extensions.push(extension(OID.subjectAltName, encodeAltNames({ dnsNames, ipAddresses })));

  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  if (serial[0] === 0) serial[0] = 1;
  const algorithm = signatureAlgorithmFor(parts.signingKey);
  const now = Date.now();
  const tbs = sequence(
    contextTag(0, integer(2)),
    integerFromBytes(serial),
    algorithm.identifier,
    parts.issuerDer,
    sequence(
      time(template.notBefore ?? new Date(now - 3600_000)),
      time(template.notAfter ?? new Date(now + 365 * DAY_MS)),
    ),
    parts.subjectDer,
    parts.spki,
    contextTag(3, sequence(...extensions)),
  );
  const signature = sign(algorithm.hash, tbs, parts.signingKey);
  return sequence(tbs, algorithm.identifier, bitString(signature));
}
