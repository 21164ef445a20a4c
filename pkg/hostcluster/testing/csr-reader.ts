// TEST DOUBLE. The host double's own reading of a PKCS#10 certificate request (RFC
// 2986), as kube-apiserver's CSR validation reads one (certificates.ParseCSR, then
// CheckSignature): one PEM block of type CERTIFICATE REQUEST, its self-signature
// verified over the raw certificationRequestInfo bytes, then the subject's CN and O
// and the requested subject alternative names.
//
// Why a reader of its own: the server writes these requests (certificate-request.ts).
// Were the double to read them back with the server's parser, a request the server
// encodes wrongly would be read by the same wrong code and every test would pass.
// This file therefore imports nothing from the server: a small strict DER walk here
// (definite, minimal lengths as Go's encoding/asn1 demands) and node:crypto for the
// key and the signature. node-forge cannot stand in: it reads only RSA requests, and
// the server's are EC P-256 by default.

import { createPublicKey, verify, type KeyObject } from 'node:crypto';

export class CsrReadError extends Error {
  override readonly name = 'CsrReadError';
}

export interface RequestedCertificate {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  /** The SubjectPublicKeyInfo DER as the request carries it. */
  readonly publicKeyDer: Buffer;
  readonly publicKey: KeyObject;
}

/** One TLV: its tag byte, the whole encoding and the content. */
interface Tlv {
  readonly tag: number;
  readonly raw: Buffer;
  readonly content: Buffer;
}

const SEQUENCE = 0x30;
const SET = 0x31;
const OID_TAG = 0x06;
const BIT_STRING = 0x03;
const OCTET_STRING = 0x04;
const ATTRIBUTES_TAG = 0xa0;
const SAN_DNS_TAG = 0x82;
const SAN_IP_TAG = 0x87;

const CN_OID = '2.5.4.3';
const O_OID = '2.5.4.10';
const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14';
const SAN_OID = '2.5.29.17';

/** Signature algorithms Go's x509 accepts for requests, with the key type each needs. */
const SIGNATURE_ALGORITHMS: Record<string, { hash: string | null; keyType: string; failure: string }> = {
  '1.2.840.113549.1.1.11': { hash: 'sha256', keyType: 'rsa', failure: 'crypto/rsa: verification error' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', keyType: 'rsa', failure: 'crypto/rsa: verification error' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', keyType: 'rsa', failure: 'crypto/rsa: verification error' },
  '1.2.840.10045.4.3.2': { hash: 'sha256', keyType: 'ec', failure: 'x509: ECDSA verification failure' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', keyType: 'ec', failure: 'x509: ECDSA verification failure' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', keyType: 'ec', failure: 'x509: ECDSA verification failure' },
  '1.3.101.112': { hash: null, keyType: 'ed25519', failure: 'x509: Ed25519 verification failure' },
};

/** Reads one TLV at `offset`; strict DER: one-byte tags, definite and minimal lengths. */
function readTlv(buf: Buffer, offset: number): Tlv {
  const tag = buf[offset];
  const first = buf[offset + 1];
  if (tag === undefined || first === undefined) throw new CsrReadError('x509: malformed certificate request');
  if ((tag & 0x1f) === 0x1f) throw new CsrReadError('x509: malformed certificate request: high tag number');
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4 || offset + 2 + count > buf.length)
      throw new CsrReadError('x509: malformed certificate request: bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (buf[offset + 2 + i] ?? 0);
    if (buf[offset + 2] === 0 || length < 0x80)
      throw new CsrReadError('x509: malformed certificate request: non-minimal length');
    header += count;
  }
  const end = offset + header + length;
  if (end > buf.length) throw new CsrReadError('x509: malformed certificate request: truncated');
  return { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + header, end) };
}

/** The TLVs inside a constructed value, which must fill it exactly. */
function items(tlv: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < tlv.content.length;) {
    const next = readTlv(tlv.content, at);
    out.push(next);
    at += next.raw.length;
  }
  return out;
}

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv || tlv.tag !== tag) throw new CsrReadError(`x509: malformed certificate request: ${what}`);
  return tlv;
}

function oidText(tlv: Tlv): string {
  const bytes = expect(tlv, OID_TAG, 'object identifier').content;
  const arcs: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      arcs.push(value);
      value = 0;
    }
  }
  const head = arcs.shift() ?? 0;
  const first = head < 80 ? Math.floor(head / 40) : 2;
  return [first, head - first * 40, ...arcs].join('.');
}

/** The directory string types a subject uses (UTF8, Printable, IA5, T61). */
function text(tlv: Tlv): string {
  if (tlv.tag === 0x0c || tlv.tag === 0x13 || tlv.tag === 0x16) return tlv.content.toString('utf8');
  if (tlv.tag === 0x14) return tlv.content.toString('latin1');
  throw new CsrReadError('x509: malformed certificate request: unsupported string type in subject');
}

/** CN (the last, as Go's pkix.Name keeps it) and every O, in order. */
function subjectOf(name: Tlv): { commonName: string; organizations: string[] } {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of items(expect(name, SEQUENCE, 'subject'))) {
    for (const attribute of items(expect(rdn, SET, 'relative distinguished name'))) {
      const [type, value] = items(expect(attribute, SEQUENCE, 'subject attribute'));
      if (!type || !value) throw new CsrReadError('x509: malformed certificate request: subject attribute');
      const id = oidText(type);
      if (id === CN_OID) commonName = text(value);
      else if (id === O_OID) organizations.push(text(value));
    }
  }
  return { commonName, organizations };
}

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) throw new CsrReadError('x509: cannot parse IP address of length ' + bytes.length);
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  // The shortest form: the longest run of two or more zero groups becomes "::".
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

/** DNS names and IP addresses of the extensionRequest attribute's subjectAltName. */
function requestedNames(attributes: Tlv | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const attribute of attributes ? items(attributes) : []) {
    const [type, values] = items(expect(attribute, SEQUENCE, 'attribute'));
    if (!type || !values || oidText(type) !== EXTENSION_REQUEST_OID) continue;
    for (const extensions of items(expect(values, SET, 'attribute values'))) {
      for (const ext of items(expect(extensions, SEQUENCE, 'extensions'))) {
        const parts = items(expect(ext, SEQUENCE, 'extension'));
        const value = expect(parts[parts.length - 1], OCTET_STRING, 'extension value');
        if (!parts[0] || oidText(parts[0]) !== SAN_OID) continue;
        for (const general of items(readTlv(value.content, 0))) {
          if (general.tag === SAN_DNS_TAG) dnsNames.push(general.content.toString('ascii'));
          else if (general.tag === SAN_IP_TAG) ipAddresses.push(ipText(general.content));
        }
      }
    }
  }
  return { dnsNames, ipAddresses };
}

/** The first PEM block's type and bytes, as Go's pem.Decode finds it. */
function firstPemBlock(pem: string): { type: string; der: Buffer } | undefined {
  const match = /-----BEGIN ([^\n-]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!match?.[1] || match[2] === undefined) return undefined;
  const body = match[2]
    .split(/\r?\n/)
    .filter((line) => !line.includes(':'))
    .join('');
  return { type: match[1], der: Buffer.from(body, 'base64') };
}

/**
 * Reads a PEM certificate request as kube-apiserver's validation does, and checks
 * that its self-signature verifies. Throws CsrReadError with Go's wording otherwise.
 */
export function readCertificateRequest(pem: string): RequestedCertificate {
  const block = firstPemBlock(pem);
  if (!block || block.type !== 'CERTIFICATE REQUEST')
    throw new CsrReadError('PEM block type must be CERTIFICATE REQUEST');
  const outer = expect(readTlv(block.der, 0), SEQUENCE, 'not a SEQUENCE');
  if (outer.raw.length !== block.der.length)
    throw new CsrReadError('x509: trailing data after certificate request');
  const [info, algorithm, signature] = items(outer);
  const infoItems = items(expect(info, SEQUENCE, 'certificationRequestInfo'));
  const [version, subject, spki, attributes] = infoItems;
  if (!version || !subject || !spki || (attributes && attributes.tag !== ATTRIBUTES_TAG))
    throw new CsrReadError('x509: malformed certificate request: certificationRequestInfo');
  const [algorithmId] = items(expect(algorithm, SEQUENCE, 'signature algorithm'));
  if (!algorithmId) throw new CsrReadError('x509: malformed certificate request: signature algorithm');
  const algorithmOid = oidText(algorithmId);
  const bits = expect(signature, BIT_STRING, 'signature').content;
  if (bits[0] !== 0) throw new CsrReadError('x509: malformed certificate request: signature bits');

  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({
      key: expect(spki, SEQUENCE, 'public key').raw,
      format: 'der',
      type: 'spki',
    });
  } catch {
    throw new CsrReadError('x509: unsupported public key in certificate request');
  }
  const scheme = SIGNATURE_ALGORITHMS[algorithmOid];
  if (!scheme) throw new CsrReadError('x509: cannot verify signature: algorithm unimplemented');
  if (publicKey.asymmetricKeyType !== scheme.keyType)
    throw new CsrReadError('x509: signature algorithm does not match the public key type');
  if (!verify(scheme.hash, info?.raw ?? Buffer.alloc(0), publicKey, bits.subarray(1)))
    throw new CsrReadError(scheme.failure);

  return {
    ...subjectOf(subject),
    ...requestedNames(attributes),
    publicKeyDer: Buffer.from(spki.raw),
    publicKey,
  };
}
