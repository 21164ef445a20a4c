import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

import { JsonLogger, LineGatherer } from './json-logger.js';

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

describe('JsonLogger and secrets', () => {
  it('writes no value of a field named for a credential, at the top or in headers', () => {
    const r = recording();
    new JsonLogger('info', r.out).warn('odd request', {
      token: 'hunter2-token',
      password: 'hunter2-password',
      headers: {
        authorization: 'Bearer hunter2-bearer',
        cookie: 'session=hunter2-cookie',
        accept: 'application/json',
      },
      user: 'alice',
    });
    const [line] = r.lines();
    assert.doesNotMatch(JSON.stringify(line), /hunter2/);
    assert.equal(line?.['token'], '[REDACTED]');
    assert.equal(line?.['user'], 'alice');
    assert.deepEqual(line?.['headers'], {
      authorization: '[REDACTED]',
      cookie: '[REDACTED]',
      accept: 'application/json',
    });
  });
});

describe('JsonLogger on stdout', () => {
  it('has written every line when the process exits at once (as the server does on a fatal error)', () => {
    const module = new URL('./json-logger.js', import.meta.url).href;
    const script = `
      const { JsonLogger } = await import(${JSON.stringify(module)});
      const logger = new JsonLogger('info');
      for (let i = 0; i < 2000; i++) logger.info('line', { i });
      logger.error('last words', { error: new Error('fatal') });
      process.exit(1);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 1, child.stderr);
    const lines = child.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2001);
    assert.deepEqual(
      lines.slice(0, 2000).map((l) => l['i']),
      Array.from({ length: 2000 }, (_, i) => i),
    );
    assert.equal(lines[2000]?.['msg'], 'last words');
    assert.equal((lines[2000]?.['error'] as { message?: string } | undefined)?.message, 'fatal');
  });
});

describe('LineGatherer', () => {
  it('hands the lines of one turn of the event loop to the sink as one write, in order', async () => {
    const writes: string[] = [];
    const gatherer = new LineGatherer({ write: (text: string) => writes.push(text) });
    gatherer.write('a\n');
    gatherer.write('b\n');
    gatherer.write('c\n');
    assert.deepEqual(writes, [], 'nothing reaches the sink within the turn');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(writes, ['a\nb\nc\n']);
    gatherer.write('d\n');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(writes, ['a\nb\nc\n', 'd\n']);
  });
});
