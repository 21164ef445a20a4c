import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseFlags, usage } from './flags.js';
import { ServerOptions } from './server-run-options.js';

function optionsFrom(argv: string[]): { problems: readonly string[]; options: ServerOptions } {
  const parsed = parseFlags(argv);
  return { problems: parsed.problems, options: new ServerOptions(parsed.values).complete() };
}

test('--request-timeout and --min-request-timeout default as kube-apiserver', () => {
  const { options } = optionsFrom([]);
  assert.equal(options.values.requestTimeoutMs, 60_000);
  assert.equal(options.values.minRequestTimeoutSeconds, 1800);
  assert.match(usage(), /--request-timeout\s.*\(default 1m0s\)/);
  assert.match(usage(), /--min-request-timeout\s.*\(default 1800\)/);
});

test('--request-timeout takes a Go duration and --min-request-timeout seconds', () => {
  const { options, problems } = optionsFrom(['--request-timeout=30s', '--min-request-timeout', '300']);
  assert.deepEqual(problems, []);
  assert.equal(options.values.requestTimeoutMs, 30_000);
  assert.equal(options.values.minRequestTimeoutSeconds, 300);
  assert.deepEqual(options.validate(), []);
});

test('bad timeouts are reported, all at once', () => {
  const { problems } = optionsFrom(['--request-timeout=soon', '--min-request-timeout=half-an-hour']);
  assert.deepEqual(problems, [
    '--request-timeout: "soon" is not a duration (a number with a unit, such as 60s or 5m)',
    '--min-request-timeout: "half-an-hour" is not an integer',
  ]);
  const tooSmall = optionsFrom(['--request-timeout=10ms', '--min-request-timeout=0']).options.validate();
  assert.ok(tooSmall.includes('--request-timeout: must be at least 1s'));
  assert.ok(tooSmall.includes('--min-request-timeout: must be a positive number of seconds'));
});
