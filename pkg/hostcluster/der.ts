// A minimal DER (ASN.1) encoder and reader: just what certificate signing requests
// and X.509 certificates need. node:crypto signs and verifies but cannot build or
// take apart these structures, and node-forge can only do so for RSA keys; the
// host cluster's signer and our own requests must work for EC and Ed25519 keys too.

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One tag-length-value. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export function sequence(...items: Buffer[]): Buffer {
  return tlv(TAG.SEQUENCE, Buffer.concat(items));
}

export function set(...items: Buffer[]): Buffer {
  // DER orders SET OF members by their encodings.
  return tlv(TAG.SET, Buffer.concat([...items].sort(Buffer.compare)));
}

/** Context-specific tag [n]; constructed unless `primitive` (IMPLICIT tagging of a primitive). */
export function contextTag(n: number, content: Buffer, primitive = false): Buffer {
  return tlv((primitive ? 0x80 : 0xa0) | n, content);
}

/** A non-negative INTEGER from big-endian magnitude bytes. */
export function integerFromBytes(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  let content = bytes.subarray(start);
  if (content.length === 0) content = Buffer.from([0]);
  if ((content[0] ?? 0) & 0x80) content = Buffer.concat([Buffer.from([0]), content]);
  return tlv(TAG.INTEGER, content);
}

export function integer(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(v & 0xff);
    v = Math.floor(v / 256);
  } while (v > 0);
  return integerFromBytes(Buffer.from(bytes));
}

export function boolean(value: boolean): Buffer {
  return tlv(TAG.BOOLEAN, Buffer.from([value ? 0xff : 0x00]));
}

export function nullValue(): Buffer {
  return tlv(TAG.NULL, Buffer.alloc(0));
}

export function octetString(content: Buffer): Buffer {
  return tlv(TAG.OCTET_STRING, content);
}

/** BIT STRING with no unused bits. */
export function bitString(content: Buffer): Buffer {
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([0]), content]));
}

export function utf8String(s: string): Buffer {
  return tlv(TAG.UTF8_STRING, Buffer.from(s, 'utf8'));
}

export function ia5String(s: string): Buffer {
  return tlv(TAG.IA5_STRING, Buffer.from(s, 'ascii'));
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map((p) => Number(p));
  const [first = 0, second = 0, ...rest] = parts;
  const bytes: number[] = [first * 40 + second];
  for (const part of rest) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] = (chunk[i] ?? 0) | 0x80;
    bytes.push(...chunk);
  }
  return tlv(TAG.OID, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2024-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, ''); // 20240102030405
  if (date.getUTCFullYear() < 2050) return tlv(TAG.UTC_TIME, Buffer.from(digits.slice(2) + 'Z', 'ascii'));
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(digits + 'Z', 'ascii'));
}

/** One decoded element: its tag, its content, and its whole encoding (for signatures). */
export interface DerElement {
  readonly tag: number;
  readonly content: Buffer;
  readonly raw: Buffer;
}

export class DerError extends Error {
  override readonly name = 'DerError';
}

/** Reads the element at `offset` of `buf`. */
export function readElement(buf: Buffer, offset = 0): DerElement {
  const tag = buf[offset];
  const first = buf[offset + 1];
  if (tag === undefined || first === undefined) throw new DerError('truncated DER');
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not supported');
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new DerError('unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i++) {
      const b = buf[offset + 2 + i];
      if (b === undefined) throw new DerError('truncated DER');
      length = length * 256 + b;
    }
    header += count;
  }
  const end = offset + header + length;
  if (end > buf.length) throw new DerError('truncated DER');
  return { tag, content: buf.subarray(offset + header, end), raw: buf.subarray(offset, end) };
}

/** The elements inside a constructed element. */
export function children(element: DerElement): DerElement[] {
  const out: DerElement[] = [];
  let offset = 0;
  while (offset < element.content.length) {
    const child = readElement(element.content, offset);
    out.push(child);
    offset += child.raw.length;
  }
  return out;
}

/** Decodes a single top-level element and rejects trailing bytes. */
export function decode(buf: Buffer): DerElement {
  const element = readElement(buf, 0);
  if (element.raw.length !== buf.length) throw new DerError('trailing bytes after DER');
  return element;
}

export function decodeOid(element: DerElement): string {
  if (element.tag !== TAG.OID) throw new DerError('expected an OBJECT IDENTIFIER');
  const bytes = element.content;
  const first = bytes[0];
  if (first === undefined) throw new DerError('empty OBJECT IDENTIFIER');
  const parts: number[] = [Math.floor(first / 40), first % 40];
  let value = 0;
  for (let i = 1; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

export function decodeString(element: DerElement): string {
  return element.content.toString(element.tag === TAG.UTF8_STRING ? 'utf8' : 'latin1');
}

/** Wraps DER in PEM armour. */
export function toPem(label: string, der: Buffer): string {
  const b64 = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** The DER of every PEM block with `label`, in order. */
export function fromPem(pem: string, label: string): Buffer[] {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`, 'g');
  const out: Buffer[] = [];
  for (const m of pem.matchAll(re)) out.push(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64'));
  return out;
}
