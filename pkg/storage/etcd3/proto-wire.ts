// The protobuf wire format, the little of it etcd's messages use: varints,
// length-delimited fields, and skipping what we do not read. Hand-written so a call
// costs no reflection: the etcd3 package decoded each response through proto-loader
// into objects with every default filled in and every int64 as a decimal string,
// which was most of its per-call cost (hack/bench/etcd-client.ts).
//
// int64 fields (revisions, counts, sizes) are read as JavaScript numbers; they are
// exact below 2^53 (see convert.ts), and a larger one is refused, not rounded.

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** Bytes a varint of `n` (a non-negative safe integer) takes. */
export function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Bytes a field tag takes (fields below 16 take one, below 2048 two). */
export function tagSize(field: number): number {
  return varintSize(field << 3);
}

/** Bytes a length-delimited field of `length` bytes takes, tag included. */
export function delimitedSize(field: number, length: number): number {
  return tagSize(field) + varintSize(length) + length;
}

/** Bytes a varint field takes, tag included. */
export function varintFieldSize(field: number, value: number): number {
  return tagSize(field) + varintSize(value);
}

/** Writes into a buffer sized exactly beforehand (the callers add the sizes up first). */
export class Writer {
  readonly buf: Buffer;
  private pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  varint(n: number): this {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
    return this;
  }

  tag(field: number, wireType: number): this {
    return this.varint((field << 3) | wireType);
  }

  varintField(field: number, value: number): this {
    return this.tag(field, VARINT).varint(value);
  }

  /** The header of a nested message or bytes field; its body follows. */
  delimited(field: number, length: number): this {
    return this.tag(field, LENGTH_DELIMITED).varint(length);
  }

  bytesField(field: number, bytes: Buffer): this {
    this.delimited(field, bytes.length);
    bytes.copy(this.buf, this.pos);
    this.pos += bytes.length;
    return this;
  }

  /** The encoded message; throws if the sizes added up beforehand were wrong. */
  finish(): Buffer {
    if (this.pos !== this.buf.length) {
      throw new Error(`protobuf: wrote ${this.pos} bytes into a message sized ${this.buf.length}`);
    }
    return this.buf;
  }
}

/** Reads one message (or a nested one: `end` bounds it). */
export class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint as a non-negative safe integer. */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('protobuf: truncated varint');
      const byte = this.buf[this.pos++] as number;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 128;
      if (scale > 2 ** 63) throw new Error('protobuf: varint too long');
    }
    if (!Number.isSafeInteger(result)) throw new Error(`protobuf: integer ${result} is not a safe integer`);
    return result;
  }

  bool(): boolean {
    return this.varint() !== 0;
  }

  /** The [start, end) of a length-delimited field's body; the reader moves past it. */
  delimited(): number {
    const length = this.varint();
    const start = this.pos;
    this.pos += length;
    if (this.pos > this.end) throw new Error('protobuf: truncated field');
    return start;
  }

  /** A bytes field as a view of the received message (no copy). */
  bytes(): Buffer {
    const start = this.delimited();
    return this.buf.subarray(start, this.pos);
  }

  string(): string {
    const start = this.delimited();
    return this.buf.toString('utf8', start, this.pos);
  }

  /** A reader over a nested message's body; this reader moves past it. */
  nested(): Reader {
    const start = this.delimited();
    return new Reader(this.buf, start, this.pos);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.varintSkip();
        return;
      case FIXED64:
        this.pos += 8;
        break;
      case LENGTH_DELIMITED:
        this.delimited();
        return;
      case FIXED32:
        this.pos += 4;
        break;
      default:
        throw new Error(`protobuf: unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new Error('protobuf: truncated field');
  }

  /** Skips a varint without range checks (uint64 fields we do not read, e.g. cluster_id). */
  private varintSkip(): void {
    while (this.pos < this.end && (this.buf[this.pos++] as number) >= 0x80);
  }
}
