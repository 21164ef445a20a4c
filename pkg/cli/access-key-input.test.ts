import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';

import { loginAccessKey } from './access-key-input.js';
import { UsageError } from './errors.js';
import type { CliIO } from './io.js';

function io(overrides: Partial<CliIO> & { input?: string } = {}): CliIO {
  const sink = { write: () => true };
  return {
    stdout: sink,
    stderr: sink,
    stdin: Readable.from(overrides.input === undefined ? [] : [Buffer.from(overrides.input)]),
    stdoutIsTTY: false,
    env: {},
    homeDir: '/nonexistent',
    cwd: '/',
    ...overrides,
  };
}

test('--access-key - reads the first line of standard input', async () => {
  assert.equal(await loginAccessKey(io({ input: 'k3y\nrest\n' }), '-'), 'k3y');
  await assert.rejects(loginAccessKey(io({ input: '\n' }), '-'), /standard input holds no access key/);
});

test('PLATFORM_ACCESS_KEY when no key is given; --access-key <key> still wins', async () => {
  assert.equal(await loginAccessKey(io({ env: { PLATFORM_ACCESS_KEY: ' fromenv ' } }), undefined), 'fromenv');
  assert.equal(await loginAccessKey(io({ env: { PLATFORM_ACCESS_KEY: 'fromenv' } }), 'given'), 'given');
  await assert.rejects(loginAccessKey(io(), ''), /--access-key is empty/);
});

test('in a terminal with neither, login asks (without echo); elsewhere it says where a key may come from', async () => {
  const prompts: string[] = [];
  const tty = io({
    stdinIsTTY: true,
    readSecret: (prompt) => {
      prompts.push(prompt);
      return Promise.resolve('typed\n');
    },
  });
  assert.equal(await loginAccessKey(tty, undefined), 'typed');
  assert.deepEqual(prompts, ['Access key: ']);
  await assert.rejects(
    loginAccessKey(io(), undefined),
    (err: unknown) =>
      err instanceof UsageError &&
      /set PLATFORM_ACCESS_KEY, or pass --access-key - and give the key on standard input/.test(err.message),
  );
});
