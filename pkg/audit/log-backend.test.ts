import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';

import { encodeEvent } from './encode.js';
import { LogBackend, openRotatingFile } from './log-backend.js';
import { testEvent } from './testing.js';

const noFailure = (): never => assert.fail('no write fails');

describe('the audit log backend', () => {
  it('hands stdout lines to the line gatherer at once, in order, one event a line', async () => {
    const written: string[] = [];
    const backend = new LogBackend({ write: (text: string) => written.push(text) }, noFailure, false);
    const a = testEvent('a');
    assert.equal(await backend.processEvents([a, testEvent('b')]), true);
    assert.equal(await backend.processLine(encodeEvent(testEvent('c')), 'c'), true);
    assert.deepEqual(
      written.join('').trimEnd().split('\n').map((l) => (JSON.parse(l) as { auditID: string }).auditID),
      ['a', 'b', 'c'],
    );
    assert.equal(written[0]?.split('\n')[0], encodeEvent(a));
    await backend.shutdown();
  });

  it("writes a turn's events to a file as one write, in order, and each waits for that write", async () => {
    const chunks: string[] = [];
    const stream = new Writable({
      decodeStrings: false,
      write(chunk: string, _encoding, done) {
        chunks.push(chunk);
        setImmediate(done);
      },
    });
    const backend = new LogBackend(stream, noFailure, true);
    const stored = await Promise.all([
      backend.processEvents([testEvent('1')]),
      backend.processLine(encodeEvent(testEvent('2')), '2'),
      backend.processEvents([testEvent('3'), testEvent('4')]),
    ]);
    assert.deepEqual(stored, [true, true, true]);
    assert.equal(chunks.length, 1, 'one write for the turn');
    assert.deepEqual(
      chunks[0]?.trimEnd().split('\n').map((l) => (JSON.parse(l) as { auditID: string }).auditID),
      ['1', '2', '3', '4'],
    );
    await backend.shutdown();
  });

  it('writes what was given before shutdown, even in the same turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-log-backend-'));
    const path = join(dir, 'audit.log');
    const backend = new LogBackend(
      openRotatingFile({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, compress: false }),
      noFailure,
      true,
    );
    const pending = backend.processEvents([testEvent('last')]);
    await backend.shutdown();
    assert.equal(await pending, true);
    assert.equal((JSON.parse(readFileSync(path, 'utf8')) as { auditID: string }).auditID, 'last');
  });

  it('reports every waiter of a failed write, by its events, and says false', async () => {
    const failures: string[] = [];
    const stream = new Writable({
      write(_chunk, _encoding, done) {
        done(new Error('disk full'));
      },
    });
    stream.on('error', () => {});
    const backend = new LogBackend(stream, (plugin, _err, events) => failures.push(`${plugin}:${events.map((e) => e.auditID).join(',')}`), true);
    const stored = await Promise.all([backend.processEvents([testEvent('x'), testEvent('y')]), backend.processLine('{}', 'z')]);
    assert.deepEqual(stored, [false, false]);
    assert.deepEqual(failures, ['log:x,y', 'log:z']);
  });
});
