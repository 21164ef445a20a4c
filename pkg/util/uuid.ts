// Random (version 4) UUIDs as one flat string each, for the audit ID every response
// carries. node:crypto's randomUUID builds its string by joining 20 pieces with `+`:
// ~20 intermediate strings (~0.5 KB of garbage) a request, more than the rest of the
// audit ID's work. Here the text is written into one reused buffer and read out as a
// single string. The randomness is the same: bytes from the CSPRNG (randomFillSync),
// taken in batches as node:crypto does (its entropy cache holds 128 UUIDs' worth),
// with the version and variant bits of RFC 9562 section 5.4 set.

import { randomFillSync } from 'node:crypto';

/** UUIDs' worth of random bytes fetched at once. */
const BATCH = 128;
const pool = Buffer.alloc(16 * BATCH);
let offset = pool.length; // filled on first use
const text = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** A random UUID, e.g. `1b4e28ba-2fa1-41d2-883f-0016d3cca427`: lower-case, as node:crypto's. */
export function randomUUID(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let t = 0;
  for (let i = 0; i < 16; i++) {
    let b = pool[offset + i] as number;
    if (i === 6) b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // variant 10
    if (i === 4 || i === 6 || i === 8 || i === 10) text[t++] = 0x2d; // '-'
    text[t++] = HEX[b >> 4] as number;
    text[t++] = HEX[b & 0x0f] as number;
  }
  offset += 16;
  return text.toString('latin1', 0, 36);
}
