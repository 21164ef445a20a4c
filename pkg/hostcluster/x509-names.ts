// X.509 pieces shared by certificate signing requests and the test double's signer:
// distinguished names (CN and O, which Kubernetes reads as user and groups),
// signature algorithm identifiers for the key types node:crypto signs with, and
// subject alternative names.

import { isIP } from 'node:net';
import type { KeyObject } from 'node:crypto';
import {
  DerError,
  TAG,
  children,
  contextTag,
  decodeOid,
  decodeString,
  nullValue,
  oid,
  sequence,
  set,
  tlv,
  utf8String,
  type DerElement,
} from './der.js';

export const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRSA: '1.2.840.113549.1.1.11',
  sha384WithRSA: '1.2.840.113549.1.1.12',
  sha512WithRSA: '1.2.840.113549.1.1.13',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA384: '1.2.840.10045.4.3.3',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
  ed25519: '1.3.101.112',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
} as const;

export interface SubjectName {
  readonly commonName: string;
  readonly organizations?: readonly string[];
}

/** RDNSequence with one attribute per RDN, O before CN as Go's pkix.Name writes it. */
export function encodeName(name: SubjectName): Buffer {
  const rdn = (type: string, value: string): Buffer => set(sequence(oid(type), utf8String(value)));
  const rdns = [...(name.organizations ?? []).map((o) => rdn(OID.organization, o))];
  if (name.commonName !== '') rdns.push(rdn(OID.commonName, name.commonName));
  return sequence(...rdns);
}

/** CN (the last one, as Go takes it) and every O of a Name. */
export function parseName(element: DerElement): { commonName: string; organizations: string[] } {
  if (element.tag !== TAG.SEQUENCE) throw new DerError('a Name must be a SEQUENCE');
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of children(element)) {
    for (const attr of children(rdn)) {
      const [type, value] = children(attr);
      if (!type || !value) throw new DerError('malformed name attribute');
      const t = decodeOid(type);
      if (t === OID.commonName) commonName = decodeString(value);
      else if (t === OID.organization) organizations.push(decodeString(value));
    }
  }
  return { commonName, organizations };
}

export interface SignatureAlgorithm {
  /** The AlgorithmIdentifier DER. */
  readonly identifier: Buffer;
  /** The digest node:crypto's sign() takes, or null for Ed25519. */
  readonly hash: string | null;
}

/** The signature algorithm used when `key` signs. */
export function signatureAlgorithmFor(key: KeyObject): SignatureAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { identifier: sequence(oid(OID.sha256WithRSA), nullValue()), hash: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { identifier: sequence(oid(OID.ecdsaWithSHA384)), hash: 'sha384' };
      if (curve === 'secp521r1') return { identifier: sequence(oid(OID.ecdsaWithSHA512)), hash: 'sha512' };
      return { identifier: sequence(oid(OID.ecdsaWithSHA256)), hash: 'sha256' };
    }
    case 'ed25519':
      return { identifier: sequence(oid(OID.ed25519)), hash: null };
    default:
      throw new Error(`unsupported key type for signing: ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

/** The digest of a signature algorithm OID; null for Ed25519; undefined when unsupported. */
export function hashForSignatureOid(algorithm: string): string | null | undefined {
  switch (algorithm) {
    case OID.sha256WithRSA:
    case OID.ecdsaWithSHA256:
      return 'sha256';
    case OID.sha384WithRSA:
    case OID.ecdsaWithSHA384:
      return 'sha384';
    case OID.sha512WithRSA:
    case OID.ecdsaWithSHA512:
      return 'sha512';
    case OID.ed25519:
      return null;
    default:
      return undefined;
  }
}

export interface AltNames {
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

/** The GeneralNames of a subjectAltName extension value. */
export function encodeAltNames(names: AltNames): Buffer {
  const items = [
    ...names.dnsNames.map((d) => contextTag(2, Buffer.from(d, 'ascii'), true)),
    ...names.ipAddresses.map((ip) => contextTag(7, ipBytes(ip), true)),
  ];
  return sequence(...items);
}

export function decodeAltNames(element: DerElement): AltNames {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const name of children(element)) {
    if (name.tag === 0x82) dnsNames.push(name.content.toString('ascii'));
    else if (name.tag === 0x87) ipAddresses.push(ipString(name.content));
  }
  return { dnsNames, ipAddresses };
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map((p) => Number(p)));
  if (isIP(ip) !== 6) throw new Error(`not an IP address: ${ip}`);
  const [head = '', tail = ''] = ip.includes('::') ? ip.split('::') : [ip, ''];
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function ipString(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < bytes.length; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

/** An Extension: SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }. */
export function extension(id: string, value: Buffer, critical = false): Buffer {
  const parts = [oid(id)];
  if (critical) parts.push(tlv(TAG.BOOLEAN, Buffer.from([0xff])));
  parts.push(tlv(TAG.OCTET_STRING, value));
  return sequence(...parts);
}
