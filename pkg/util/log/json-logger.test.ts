import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { JsonLogger, LineGatherer } from './json-logger.js';
import type { LogLevel } from './logger.js';

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

describe('JsonLogger without a copy of the fields', () => {
  /** The text each logger writes for the same calls: this one's, and line()'s copy's. */
  function both(log: (logger: JsonLogger) => void): [string, string] {
    const texts: [string[], string[]] = [[], []];
    const [fast, copying] = texts.map(
      (t, i) => new JsonLogger('debug', { write: (x: string) => t.push(x) }, {}, { copyFields: i === 1 }),
    ) as [JsonLogger, JsonLogger];
    log(fast);
    log(copying);
    return [texts[0].join(''), texts[1].join('')];
  }

  /** The time is the one thing that differs between two calls: both loggers write the same one here. */
  const sameTime = (text: string): string => text.replace(/"time":"[^"]*"/g, '"time":"T"');

  it('writes what the copy writes, byte for byte, whatever the message and the fields', () => {
    const key = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom('level', 'msg', 'time', '0', '12', '__proto__', 'authorization', 'token', 'headers', 'a'),
    );
    const val = fc.oneof(
      fc.jsonValue(),
      fc.constant(undefined),
      fc.constant(new Error('boom')),
      fc.record({ authorization: fc.string(), cookie: fc.string(), other: fc.string() }),
    );
    const fields = fc.oneof(
      fc.constant(undefined),
      fc.array(fc.tuple(key, val), { maxLength: 6 }).map((entries) => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        return out;
      }),
    );
    const msg = fc.oneof(fc.string({ unit: 'binary', maxLength: 120 }), fc.constantFrom('request', 'a"b', 'x\n', 'é😀'));
    fc.assert(
      fc.property(msg, fields, fc.constantFrom('debug', 'info', 'warn', 'error') as fc.Arbitrary<LogLevel>, (m, f, level) => {
        const [fast, copying] = both((logger) => logger[level](m, f));
        assert.equal(sameTime(fast), sameTime(copying));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes a request line with the message and time first, and the next line has no stray time', () => {
    const [fast] = both((logger) => {
      logger.info('request', { verb: 'get', code: 200 });
      logger.child({ component: 'x' }).info('next');
    });
    const [first, second] = fast.trimEnd().split('\n');
    assert.match(first ?? '', /^\{"level":"info","msg":"request","time":"[^"]+","verb":"get","code":200\}$/);
    assert.match(second ?? '', /^\{"level":"info","component":"x","msg":"next","time":"[^"]+"\}$/);
  });
});
