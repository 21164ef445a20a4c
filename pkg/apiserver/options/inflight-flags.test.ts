import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseFlags, usage } from './flags.js';
import { ServerOptions } from './server-run-options.js';

function optionsFrom(argv: string[]): ServerOptions {
  const parsed = parseFlags(argv);
  assert.deepEqual(parsed.problems, []);
  return new ServerOptions(parsed.values).complete();
}

test('--max-requests-inflight and --max-mutating-requests-inflight default as kube-apiserver', () => {
  const options = optionsFrom([]);
  assert.equal(options.values.maxRequestsInflight, 400);
  assert.equal(options.values.maxMutatingRequestsInflight, 200);
  assert.match(usage(), /--max-requests-inflight\s.*\(default 400\)/);
  assert.match(usage(), /--max-mutating-requests-inflight\s.*\(default 200\)/);
});

test('0 is accepted (no limit) and a negative limit is refused with upstream\'s words', () => {
  assert.deepEqual(optionsFrom(['--max-requests-inflight=0', '--max-mutating-requests-inflight=0']).validate(), []);
  const errs = optionsFrom(['--max-requests-inflight=-1', '--max-mutating-requests-inflight=-5']).validate();
  assert.ok(errs.includes('--max-requests-inflight can not be negative value'));
  assert.ok(errs.includes('--max-mutating-requests-inflight can not be negative value'));
});
