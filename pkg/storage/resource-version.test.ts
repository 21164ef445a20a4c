import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError } from './errors.js';
import { parseResourceVersion } from './resource-version.js';

describe('parseResourceVersion', () => {
  it('reads "" and "0" as 0 and decimal integers as themselves', () => {
    assert.equal(parseResourceVersion(''), 0);
    assert.equal(parseResourceVersion('0'), 0);
    assert.equal(parseResourceVersion('42'), 42);
    assert.equal(parseResourceVersion('007'), 7);
  });

  it('rejects anything else with an InvalidError in apiserver’s words', () => {
    for (const bad of ['abc', '-1', '1.5', ' 1', '+1', '1e3', '99999999999999999999']) {
      assert.throws(
        () => parseResourceVersion(bad),
        (err: unknown) => {
          assert.ok(isStorageError(err, 'InvalidError'), bad);
          assert.equal(
            err.message,
            `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(bad)}: strconv.ParseUint: parsing ${JSON.stringify(bad)}: invalid syntax`,
          );
          return true;
        },
      );
    }
  });
});
