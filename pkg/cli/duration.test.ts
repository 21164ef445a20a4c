import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from './errors.js';
import { formatSeconds, parseDurationSeconds } from './duration.js';

describe('parseDurationSeconds', () => {
  it('reads units, combinations and bare seconds', () => {
    const cases: Array<[string, number]> = [
      ['3600', 3600],
      ['0', 0],
      ['90s', 90],
      ['15m', 900],
      ['12h', 43_200],
      ['30d', 2_592_000],
      ['2w', 1_209_600],
      ['1h30m', 5400],
      ['1d2h3m4s', 93_784],
      [' 24h ', 86_400],
    ];
    for (const [text, seconds] of cases) assert.equal(parseDurationSeconds(text, '--ttl'), seconds, text);
  });

  it('refuses anything else, naming the flag and giving examples', () => {
    for (const text of ['', 'soon', '1y', '1.5h', '-5m', '10 m', 'h1', '5mx']) {
      assert.throws(
        () => parseDurationSeconds(text, '--certificate-ttl'),
        (err: unknown) =>
          err instanceof UsageError &&
          err.message.startsWith('--certificate-ttl: ') &&
          err.message.includes('examples: 30d'),
        JSON.stringify(text),
      );
    }
  });
});

describe('formatSeconds', () => {
  it('uses the largest whole unit below a week, and round-trips through the parser', () => {
    assert.equal(formatSeconds(2_592_000), '30d');
    assert.equal(formatSeconds(1_209_600), '14d');
    assert.equal(formatSeconds(7200), '2h');
    assert.equal(formatSeconds(5400), '90m');
    assert.equal(formatSeconds(45), '45s');
    assert.equal(formatSeconds(0), '0s');
    for (const s of [45, 5400, 7200, 2_592_000]) assert.equal(parseDurationSeconds(formatSeconds(s), 'x'), s);
  });
});
