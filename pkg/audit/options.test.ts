import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { silentLogger } from '../util/log/index.js';
import { testEvent } from './testing.js';
import { LogBackend, backupName, openRotatingFile } from './log-backend.js';
import {
  AUDIT_OPTION_DEFAULTS,
  buildAudit,
  validateAuditOptions,
  type AuditOptionValues,
} from './options.js';

const quiet = silentLogger;

function options(overrides: Partial<AuditOptionValues>): AuditOptionValues {
  return { ...AUDIT_OPTION_DEFAULTS, ...overrides };
}

const event = testEvent;

describe('audit options', () => {
  it("reports bad values with upstream's messages", () => {
    const errs = validateAuditOptions(
      options({
        auditLogPath: '/tmp/audit.log',
        auditLogMode: 'async',
        auditLogFormat: 'legacy',
        auditLogMaxAge: -1,
        auditLogMaxBackup: -2,
        auditLogMaxSize: -3,
        auditWebhookConfigFile: '/tmp/hook.kubeconfig',
        auditWebhookBatchBufferSize: 0,
        auditWebhookBatchMaxSize: 0,
        auditWebhookBatchThrottleQps: 'fast',
        auditWebhookBatchThrottleBurst: 0,
      }),
    );
    assert.deepEqual(errs, [
      'invalid audit log mode async, allowed modes are "batch,blocking,blocking-strict"',
      'invalid audit log format legacy: the legacy one-line format is not supported, use "json"',
      "--audit-log-maxage -1 can't be a negative number",
      "--audit-log-maxbackup -2 can't be a negative number",
      "--audit-log-maxsize -3 can't be a negative number",
      'invalid audit batch webhook buffer size 0, must be a positive number',
      'invalid audit batch webhook max batch size 0, must be a positive number',
      'invalid audit batch webhook throttle QPS fast, must be a positive number',
      'invalid audit batch webhook throttle burst 0, must be a positive number',
    ]);
    assert.deepEqual(
      validateAuditOptions(options({ auditWebhookConfigFile: '/x', auditWebhookMode: 'later' })),
      ['invalid audit webhook mode later, allowed modes are "batch,blocking,blocking-strict"'],
    );
    // Backend flags are checked only for a backend in use, as upstream.
    assert.deepEqual(validateAuditOptions(options({ auditLogMode: 'async' })), []);
  });

  it('reports a policy file that does not load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-options-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
    assert.deepEqual(validateAuditOptions(options({ auditPolicyFile: file })), [
      `--audit-policy-file: loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${file}`,
    ]);
  });

  it('audits nothing without a policy, even with a log path', async () => {
    assert.equal(await buildAudit(options({ auditLogPath: '-' }), quiet), undefined);
  });

  it('writes one JSON event a line to the log file (blocking: written when the call resolves)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-options-'));
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    const log = join(dir, 'logs', 'audit.log');
    const audit = await buildAudit(options({ auditPolicyFile: policy, auditLogPath: log }), quiet);
    assert.ok(audit);
    assert.equal(await audit.backend.processEvents([event('a'), event('b')]), true);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { auditID: string }).auditID),
      ['a', 'b'],
    );
    await audit.backend.shutdown();
  });

  it('rotates the file at --audit-log-maxsize into lumberjack-named backups', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rotate-'));
    const path = join(dir, 'audit.log');
    const backend = new LogBackend(
      openRotatingFile({ path, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, compress: false }),
      () => assert.fail('no write fails'),
      true,
    );
    const big = { ...event('x'), requestURI: `/${'x'.repeat(100_000)}` };
    for (let i = 0; i < 12; i++) assert.equal(await backend.processEvents([big]), true);
    await backend.shutdown();
    const rotated = readdirSync(dir).filter((f) =>
      /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(f),
    );
    assert.ok(rotated.length >= 1, `no backup among ${readdirSync(dir).join(', ')}`);
    assert.equal(
      backupName('/var/log/audit.log', new Date(Date.UTC(2024, 4, 1, 10, 20, 30, 5))),
      '/var/log/audit-2024-05-01T10-20-30.005.log',
    );
  });

  it('reports a write that fails, and says false (what blocking-strict fails the request on)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-fail-'));
    const failures: string[] = [];
    const stream = openRotatingFile({
      path: join(dir, 'audit.log'),
      maxSizeMB: 0,
      maxBackups: 0,
      maxAgeDays: 0,
      compress: false,
    });
    const backend = new LogBackend(
      stream,
      (plugin, _err, events) => failures.push(`${plugin}:${events.length}`),
      true,
    );
    await backend.shutdown();
    assert.equal(await backend.processEvents([event('late')]), false);
    assert.deepEqual(failures, ['log:1']);
  });
});
