// Where the JSON memos of cached states (encoded.ts) keep their bytes: laid end to end
// in slabs of their own, each preceded by a comma. The memos a list makes are made in
// the list's order, so on every later list its items' bytes, commas included, are a few
// long runs of slab memory: the body is written as those runs, not as a piece per item.
//
// Own slabs rather than Node's shared Buffer pool: a slab lives while any memo in it
// does, and memos are let go in the order they were made (encoded.ts's ring), so the
// slabs still held are those of the last MAX_ENCODED_STATES memos and at most one
// more. In the shared pool every memo could keep 8 KiB of other, dead buffers alive.

/** Big enough that a list of 10,000 ~1 KiB items is ~45 runs; small next to the memos' bound (~12 MiB). */
const SLAB_BYTES = 256 * 1024;
/** Memos larger than this get a Buffer of their own instead of ending a slab early. */
const LARGEST_IN_SLAB = SLAB_BYTES / 8;
const COMMA = 0x2c;

let slab = Buffer.allocUnsafeSlow(0);
let used = 0;

/** An object's JSON in UTF-8 (`bytes`) and, in the same memory, the same preceded by a comma (`listed`). */
export interface MemoBytes {
  readonly bytes: Buffer;
  readonly listed: Buffer;
}

/** `json` as MemoBytes, in a slab when `kept` (a memo), else in a Buffer of its own (one use). */
export function memoBytes(json: string, kept: boolean): MemoBytes {
  const length = Buffer.byteLength(json) + 1;
  if (!kept || length > LARGEST_IN_SLAB) {
    const listed = Buffer.from(`,${json}`);
    return { bytes: listed.subarray(1), listed };
  }
  if (used + length > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    used = 0;
  }
  slab[used] = COMMA;
  slab.write(json, used + 1);
  const listed = slab.subarray(used, used + length);
  used += length;
  return { bytes: listed.subarray(1), listed };
}

/**
 * A body's pieces in order, a piece that starts where the previous one ended in the
 * same memory joined to it (the same bytes either way), and their total length.
 */
export class BodyPieces {
  private readonly pieces: Buffer[] = [];
  private run: Buffer | undefined;
  private runLength = 0;
  bytes = 0;

  add(piece: Buffer): void {
    this.bytes += piece.length;
    const run = this.run;
    if (run !== undefined && piece.buffer === run.buffer && piece.byteOffset === run.byteOffset + this.runLength) {
      this.runLength += piece.length;
      return;
    }
    this.endRun();
    this.run = piece;
    this.runLength = piece.length;
  }

  /** The pieces, runs joined; add nothing after. */
  parts(): Buffer[] {
    this.endRun();
    return this.pieces;
  }

  private endRun(): void {
    const run = this.run;
    if (run === undefined) return;
    this.pieces.push(
      this.runLength === run.length ? run : Buffer.from(run.buffer, run.byteOffset, this.runLength),
    );
    this.run = undefined;
  }
}
