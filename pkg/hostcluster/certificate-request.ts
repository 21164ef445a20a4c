// PKCS#10 certificate signing requests: made here for the host cluster's
// CertificateSigningRequest API (a client certificate whose CN is the user and
// whose O entries are the groups), and read back by the test double's signer.
// Works for RSA, EC and Ed25519 keys.

import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import {
  DerError,
  TAG,
  bitString,
  children,
  contextTag,
  decode,
  decodeOid,
  fromPem,
  integer,
  oid,
  sequence,
  set,
  toPem,
  type DerElement,
} from './der.js';
import {
  OID,
  decodeAltNames,
  encodeAltNames,
  encodeName,
  extension,
  hashForSignatureOid,
  parseName,
  signatureAlgorithmFor,
  type SubjectName,
} from './x509-names.js';

export const CSR_PEM_LABEL = 'CERTIFICATE REQUEST';

export interface CertificateRequestOptions extends SubjectName {
  readonly privateKey: KeyObject;
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

/** A PEM `CERTIFICATE REQUEST` signed by `privateKey`. */
export function createCertificateRequest(options: CertificateRequestOptions): string {
  const spki = createPublicKey(options.privateKey).export({ type: 'spki', format: 'der' });
  const dnsNames = options.dnsNames ?? [];
  const ipAddresses = options.ipAddresses ?? [];
  const attributes: Buffer[] = [];
  if (dnsNames.length > 0 || ipAddresses.length > 0) {
    const extensions = sequence(extension(OID.subjectAltName, encodeAltNames({ dnsNames, ipAddresses })));
    attributes.push(sequence(oid(OID.extensionRequest), set(extensions)));
  }
  const info = sequence(
    integer(0),
    encodeName(options),
    spki,
    contextTag(0, Buffer.concat([...attributes].sort(Buffer.compare))),
  );
  const algorithm = signatureAlgorithmFor(options.privateKey);
  const signature = sign(algorithm.hash, info, options.privateKey);
  return toPem(CSR_PEM_LABEL, sequence(info, algorithm.identifier, bitString(signature)));
}

export interface ParsedCertificateRequest {
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  /** SubjectPublicKeyInfo DER: the key the certificate will carry. */
  readonly publicKeyDer: Buffer;
  readonly publicKey: KeyObject;
}

export class CertificateRequestError extends Error {
  override readonly name = 'CertificateRequestError';
}

/**
 * Reads a PEM certificate request and checks its self-signature (proof that the
 * requester holds the private key). Throws CertificateRequestError when it is not
 * one PEM CERTIFICATE REQUEST block, is malformed, or its signature does not verify.
 */
export function parseCertificateRequest(pem: string): ParsedCertificateRequest {
  const blocks = fromPem(pem, CSR_PEM_LABEL);
  const der = blocks[0];
  if (blocks.length !== 1 || !der)
    throw new CertificateRequestError('PEM block type must be CERTIFICATE REQUEST');
  try {
    return parseDer(der);
  } catch (err) {
    if (err instanceof CertificateRequestError) throw err;
    throw new CertificateRequestError(`malformed certificate request: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

function parseDer(der: Buffer): ParsedCertificateRequest {
  const [info, algorithm, signature] = children(decode(der));
  if (!info || !algorithm || !signature || signature.tag !== TAG.BIT_STRING)
    throw new DerError('expected SEQUENCE { info, algorithm, signature }');
  const [version, subject, spki, attributes] = children(info);
  if (!version || !subject || !spki) throw new DerError('truncated certificationRequestInfo');
  const [algorithmOid] = children(algorithm);
  if (!algorithmOid) throw new DerError('empty signature algorithm');
  const hash = hashForSignatureOid(decodeOid(algorithmOid));
  if (hash === undefined) throw new CertificateRequestError('unsupported signature algorithm');

  const publicKey = createPublicKey({ key: spki.raw, format: 'der', type: 'spki' });
  const sig = signature.content.subarray(1);
  if (!verify(hash, info.raw, publicKey, sig))
    throw new CertificateRequestError('the certificate request signature does not verify');

  const names = parseName(subject);
  const alt = attributes ? requestedAltNames(attributes) : { dnsNames: [], ipAddresses: [] };
  return { ...names, ...alt, publicKeyDer: Buffer.from(spki.raw), publicKey };
}

function requestedAltNames(attributes: DerElement): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const attr of children(attributes)) {
    const [type, values] = children(attr);
    if (!type || !values || decodeOid(type) !== OID.extensionRequest) continue;
    for (const extensions of children(values)) {
      for (const ext of children(extensions)) {
        const parts = children(ext);
        const id = parts[0];
        const value = parts[parts.length - 1];
        if (!id || !value || decodeOid(id) !== OID.subjectAltName) continue;
        const alt = decodeAltNames(decode(value.content));
        dnsNames.push(...alt.dnsNames);
        ipAddresses.push(...alt.ipAddresses);
      }
    }
  }
  return { dnsNames, ipAddresses };
}
