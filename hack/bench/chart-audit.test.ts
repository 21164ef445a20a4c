// The bench's audited server audits as the chart deploys it: the flags chartAuditArgs
// gives are ones the server accepts, its policy is the chart's default (a get of a
// User at Metadata, probes not at all), and events go to the file asked for.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ServerOptions, parseFlags } from '../../pkg/apiserver/options/index.js';
import { PolicyChecker, loadPolicyFile } from '../../pkg/audit/policy.js';
import type { AuditAttributes } from '../../pkg/audit/types.js';
import { chartAuditArgs } from './chart-audit.js';
import { GROUP } from './objects.js';

const admin = { name: 'admin', groups: ['system:masters'] };

function request(verb: string, resource: string, path: string): AuditAttributes {
  return {
    user: admin,
    verb,
    isResourceRequest: resource !== '',
    path,
    apiGroup: resource !== '' ? GROUP : '',
    resource,
    subresource: '',
    namespace: '',
    name: resource !== '' ? 'someone' : '',
  };
}

test("chartAuditArgs: the chart's default policy and file log settings, as flags the server accepts", () => {
  const dir = mkdtempSync(join(tmpdir(), 'chart-audit-test-'));
  try {
    const logFile = join(dir, 'audit.log');
    const args = chartAuditArgs(dir, logFile);
    const flags = parseFlags(['--secure-port', '0', '--data-dir', join(dir, 'data'), ...args]);
    assert.deepEqual(flags.problems, []);
    const options = new ServerOptions(flags.values, flags.problems);
    assert.deepEqual(options.validate(), []);
    // Events go to the file, not stdout ('-'), blocking as the chart's default mode.
    assert.equal(args[args.indexOf('--audit-log-path') + 1], logFile);
    assert.ok(args.includes('--audit-log-mode=blocking'), args.join(' '));

    const policyFile = args[args.indexOf('--audit-policy-file') + 1] ?? '';
    const checker = new PolicyChecker(loadPolicyFile(policyFile));
    const get = checker.evaluate(request('get', 'users', `/apis/${GROUP}/v1/users/someone`));
    assert.equal(get.level, 'Metadata');
    assert.deepEqual(get.omitStages, ['RequestReceived']);
    assert.equal(
      checker.evaluate(request('create', 'users', `/apis/${GROUP}/v1/users`)).level,
      'RequestResponse',
    );
    assert.equal(checker.evaluate(request('get', '', '/healthz')).level, 'None');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
