import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { writeFileAtomic } from './atomic-write.js';

describe('writeFileAtomic', () => {
  const dir = mkdtempSync(join(tmpdir(), 'atomic-write-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the file with the given mode and leaves no temporary file behind', () => {
    const path = join(dir, 'new.txt');
    writeFileAtomic(path, 'secret\n', 0o600);
    assert.equal(readFileSync(path, 'utf8'), 'secret\n');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.startsWith('new.txt')),
      ['new.txt'],
    );
  });

  it('replaces an existing file whole', () => {
    const path = join(dir, 'old.txt');
    writeFileSync(path, 'a much longer old content that must not survive\n');
    writeFileAtomic(path, 'new\n', 0o600);
    assert.equal(readFileSync(path, 'utf8'), 'new\n');
  });

  it('exclusive: writes a new file, and refuses to replace an existing one', () => {
    const path = join(dir, 'exclusive.txt');
    writeFileAtomic(path, 'first\n', 0o600, { exclusive: true });
    assert.equal(readFileSync(path, 'utf8'), 'first\n');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.throws(() => writeFileAtomic(path, 'second\n', 0o600, { exclusive: true }), { code: 'EEXIST' });
    assert.equal(readFileSync(path, 'utf8'), 'first\n');
    assert.ok(!readdirSync(dir).some((f) => f.includes('.tmp-')));
  });

  it('fails without leaving a temporary file when the directory is missing', () => {
    const missing = join(dir, 'no-such-dir', 'f.txt');
    assert.throws(() => writeFileAtomic(missing, 'x', 0o600), { code: 'ENOENT' });
    assert.ok(!readdirSync(dir).some((f) => f.includes('.tmp-')));
  });
});
