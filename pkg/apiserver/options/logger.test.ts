import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { JsonLogger } from './logger.js';

function recording(): { out: { write(text: string): boolean }; lines: () => Record<string, unknown>[] } {
  const texts: string[] = [];
  return {
    out: {
      write: (text: string) => {
        texts.push(text);
        return true;
      },
    },
    lines: () =>
      texts.map((t) => {
        assert.ok(t.endsWith('\n') && !t.slice(0, -1).includes('\n'), 'one line per entry');
        return JSON.parse(t) as Record<string, unknown>;
      }),
  };
}

describe('JsonLogger', () => {
  it('writes one JSON object per line, level, msg and time first, then the fields', () => {
    const r = recording();
    const logger = new JsonLogger('info', r.out);
    logger.info('request', { method: 'GET', path: '/a"b', code: 200, skipped: undefined });
    logger.info('no fields');
    logger.info('empty fields', {});
    const [request, bare, empty] = r.lines();
    assert.deepEqual(Object.keys(request ?? {}), ['level', 'msg', 'time', 'method', 'path', 'code']);
    assert.equal(request?.['path'], '/a"b');
    assert.match(String(request?.['time']), /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(Object.keys(bare ?? {}), ['level', 'msg', 'time']);
    assert.deepEqual(Object.keys(empty ?? {}), ['level', 'msg', 'time']);
  });

  it('never lets fields replace the level or the message', () => {
    const r = recording();
    new JsonLogger('info', r.out).warn('real', { level: 'debug', msg: 'fake', a: 1 });
    const [line] = r.lines();
    assert.equal(line?.['level'], 'warn');
    assert.equal(line?.['msg'], 'real');
    assert.equal(line?.['a'], 1);
  });

  it('writes an Error field as its name, message and stack, and keeps child fields', () => {
    const r = recording();
    const logger = new JsonLogger('info', r.out).child({ component: 'cache' });
    logger.error('failed', { error: new Error('boom') });
    const [line] = r.lines();
    assert.equal(line?.['component'], 'cache');
    const error = line?.['error'] as { name: string; message: string; stack: string };
    assert.equal(error.message, 'boom');
    assert.equal(error.name, 'Error');
    assert.match(error.stack, /boom/);
  });

  it('drops lines below its level', () => {
    const r = recording();
    const logger = new JsonLogger('warn', r.out);
    logger.info('quiet');
    logger.warn('loud');
    assert.deepEqual(
      r.lines().map((l) => l['msg']),
      ['loud'],
    );
  });
});
