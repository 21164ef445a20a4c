import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { rfc3339Seconds } from './timestamp.js';

const plain = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('rfc3339Seconds', () => {
  it('is the ISO time without milliseconds, for any time and any order of calls', () => {
    const moment = fc.integer({ min: -62_000_000_000_000, max: 253_000_000_000_000 }).map((ms) => new Date(ms));
    fc.assert(
      fc.property(fc.array(moment, { minLength: 1, maxLength: 20 }), (dates) => {
        for (const d of dates) assert.equal(rfc3339Seconds(d), plain(d));
      }),
    );
  });

  it('gives the second a time falls in, also right after another time of the same second', () => {
    assert.equal(rfc3339Seconds(new Date('2026-11-26T06:53:22.001Z')), '2026-11-26T06:53:22Z');
    assert.equal(rfc3339Seconds(new Date('2026-11-26T06:53:22.999Z')), '2026-11-26T06:53:22Z');
    assert.equal(rfc3339Seconds(new Date('2026-11-26T06:53:23.000Z')), '2026-11-26T06:53:23Z');
    assert.equal(rfc3339Seconds(new Date('1969-12-31T23:59:59.500Z')), '1969-12-31T23:59:59Z');
  });
});
