// The audit flags of kube-apiserver (k8s.io/apiserver pkg/server/options/audit.go):
// their defaults, their validation with upstream's messages, and the policy and
// backends they build. Without --audit-policy-file nothing is audited, as upstream;
// a policy without a backend audits nothing either.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

import {
  AUDIT_MODES,
  IgnoreErrorsBackend,
  UnionBackend,
  pluginErrorReporter,
  type AuditBackend,
  type AuditMode,
  type PluginErrorReporter,
} from './backend.js';
import { BufferedBackend, type BatchConfig } from './buffered.js';
import { LOG_PLUGIN, LogBackend, openRotatingFile } from './log-backend.js';
import { PolicyChecker, loadPolicyFile } from './policy.js';
import { stdout, type Logger } from '../util/log/index.js';
import {
  DEFAULT_WEBHOOK_INITIAL_BACKOFF_MS,
  WEBHOOK_PLUGIN,
  WebhookBackend,
  loadWebhookTarget,
} from './webhook.js';

export interface AuditOptionValues {
  auditPolicyFile: string;
  auditLogPath: string;
  auditLogMaxAge: number;
  auditLogMaxBackup: number;
  auditLogMaxSize: number;
  auditLogCompress: boolean;
  auditLogFormat: string;
  auditLogMode: string;
  auditWebhookConfigFile: string;
  auditWebhookMode: string;
  auditWebhookBatchBufferSize: number;
  auditWebhookBatchMaxSize: number;
  auditWebhookBatchMaxWaitMs: number;
  auditWebhookBatchThrottleEnable: boolean;
  /** A decimal number (upstream's float32 flag). */
  auditWebhookBatchThrottleQps: string;
  auditWebhookBatchThrottleBurst: number;
  auditWebhookInitialBackoffMs: number;
}

/** upstream's defaults: the log blocks, the webhook batches. */
export const AUDIT_OPTION_DEFAULTS: Readonly<AuditOptionValues> = Object.freeze({
  auditPolicyFile: '',
  auditLogPath: '',
  auditLogMaxAge: 0,
  auditLogMaxBackup: 0,
  auditLogMaxSize: 0,
  auditLogCompress: false,
  auditLogFormat: 'json',
  auditLogMode: 'blocking',
  auditWebhookConfigFile: '',
  auditWebhookMode: 'batch',
  auditWebhookBatchBufferSize: 10_000,
  auditWebhookBatchMaxSize: 400,
  auditWebhookBatchMaxWaitMs: 30_000,
  auditWebhookBatchThrottleEnable: true,
  auditWebhookBatchThrottleQps: '10',
  auditWebhookBatchThrottleBurst: 15,
  auditWebhookInitialBackoffMs: DEFAULT_WEBHOOK_INITIAL_BACKOFF_MS,
});

/** The log backend's batch settings (upstream's defaultLogBatchConfig: one event a write, in order). */
export const LOG_BATCH_CONFIG: BatchConfig = {
  bufferSize: 10_000,
  maxBatchSize: 1,
  maxBatchWaitMs: 0,
  throttleEnable: false,
  throttleQPS: 0,
  throttleBurst: 0,
  asyncDelegate: false,
};

function isMode(mode: string): mode is AuditMode {
  return (AUDIT_MODES as readonly string[]).includes(mode);
}

function validateMode(plugin: string, mode: string): string | undefined {
  if (isMode(mode)) return undefined;
  return `invalid audit ${plugin} mode ${mode}, allowed modes are ${JSON.stringify(AUDIT_MODES.join(','))}`;
}

function throttleQps(v: AuditOptionValues): number {
  return /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v.auditWebhookBatchThrottleQps)
    ? Number(v.auditWebhookBatchThrottleQps)
    : Number.NaN;
}

/** Every problem with the audit flags, in upstream's words where upstream has them. */
export function validateAuditOptions(v: AuditOptionValues): string[] {
  const errs: string[] = [];
  if (v.auditPolicyFile !== '') {
    try {
      loadPolicyFile(v.auditPolicyFile);
    } catch (err) {
      errs.push(`--audit-policy-file: ${(err as Error).message}`);
    }
  }
  if (v.auditLogPath !== '') {
    const modeErr = validateMode(LOG_PLUGIN, v.auditLogMode);
    if (modeErr) errs.push(modeErr);
    if (v.auditLogFormat === 'legacy') {
      errs.push('invalid audit log format legacy: the legacy one-line format is not supported, use "json"');
    } else if (v.auditLogFormat !== 'json') {
      errs.push(`invalid audit log format ${v.auditLogFormat}, allowed formats are "json"`);
    }
    if (v.auditLogMaxAge < 0) errs.push(`--audit-log-maxage ${v.auditLogMaxAge} can't be a negative number`);
    if (v.auditLogMaxBackup < 0)
      errs.push(`--audit-log-maxbackup ${v.auditLogMaxBackup} can't be a negative number`);
    if (v.auditLogMaxSize < 0)
      errs.push(`--audit-log-maxsize ${v.auditLogMaxSize} can't be a negative number`);
  }
  if (v.auditWebhookConfigFile !== '') {
    const modeErr = validateMode(WEBHOOK_PLUGIN, v.auditWebhookMode);
    if (modeErr) errs.push(modeErr);
    else if (v.auditWebhookMode === 'batch') {
      const plugin = WEBHOOK_PLUGIN;
      if (v.auditWebhookBatchBufferSize <= 0)
        errs.push(
          `invalid audit batch ${plugin} buffer size ${v.auditWebhookBatchBufferSize}, must be a positive number`,
        );
      if (v.auditWebhookBatchMaxSize <= 0)
        errs.push(
          `invalid audit batch ${plugin} max batch size ${v.auditWebhookBatchMaxSize}, must be a positive number`,
        );
      if (v.auditWebhookBatchThrottleEnable) {
        const qps = throttleQps(v);
        if (!(qps > 0))
          errs.push(
            `invalid audit batch ${plugin} throttle QPS ${v.auditWebhookBatchThrottleQps}, must be a positive number`,
          );
        if (v.auditWebhookBatchThrottleBurst <= 0)
          errs.push(
            `invalid audit batch ${plugin} throttle burst ${v.auditWebhookBatchThrottleBurst}, must be a positive number`,
          );
      }
    }
    if (v.auditWebhookInitialBackoffMs < 0)
      errs.push('--audit-webhook-initial-backoff: must not be negative');
  }
  return errs;
}

/** What the HTTP layer audits with: the policy, and where events go. */
export interface AuditConfig {
  readonly policy: PolicyChecker;
  readonly backend: AuditBackend;
}

/** upstream's wrapBackend: the mode around a backend. */
function withMode(
  backend: AuditBackend,
  mode: AuditMode,
  batch: BatchConfig,
  report: PluginErrorReporter,
): AuditBackend {
  if (mode === 'blocking-strict') return backend;
  if (mode === 'blocking') return new IgnoreErrorsBackend(backend);
  return new BufferedBackend(backend, batch, report);
}

/** The policy and backends the (validated) flags ask for; undefined when nothing is audited. */
export async function buildAudit(v: AuditOptionValues, logger: Logger): Promise<AuditConfig | undefined> {
  const logging = v.auditLogPath !== '';
  const webhook = v.auditWebhookConfigFile !== '';
  if (v.auditPolicyFile === '') {
    if (logging || webhook) logger.info('no audit policy file provided: no audit events will be recorded');
    return undefined;
  }
  const policy = new PolicyChecker(loadPolicyFile(v.auditPolicyFile));
  // Only the audit IDs are logged with a failure: events may carry request objects.
  const report = pluginErrorReporter((plugin, message, auditIDs) =>
    logger.error('audit events could not be stored', {
      plugin,
      error: message,
      events: auditIDs.length,
      auditIDs: auditIDs.slice(0, 10),
    }),
  );
  const backends: AuditBackend[] = [];
  if (logging) {
    let log: LogBackend;
    if (v.auditLogPath === '-') {
      // Standard output as the process's logger writes it: one line gatherer for the log
      // lines and the audit events, so that neither splits the other's lines and each
      // turn's lines go out in one write (a second writer on fd 1 could land in the
      // middle of a line).
      log = new LogBackend(stdout(), report, false);
    } else {
      mkdirSync(dirname(v.auditLogPath), { recursive: true, mode: 0o755 });
      const file = openRotatingFile({
        path: v.auditLogPath,
        maxSizeMB: v.auditLogMaxSize,
        maxBackups: v.auditLogMaxBackup,
        maxAgeDays: v.auditLogMaxAge,
        compress: v.auditLogCompress,
      });
      log = new LogBackend(file, report, true);
    }
    backends.push(withMode(log, v.auditLogMode as AuditMode, LOG_BATCH_CONFIG, report));
  }
  if (webhook) {
    const target = await loadWebhookTarget(v.auditWebhookConfigFile);
    const hook = new WebhookBackend(target, { initialBackoffMs: v.auditWebhookInitialBackoffMs }, report);
    const batch: BatchConfig = {
      bufferSize: v.auditWebhookBatchBufferSize,
      maxBatchSize: v.auditWebhookBatchMaxSize,
      maxBatchWaitMs: v.auditWebhookBatchMaxWaitMs,
      throttleEnable: v.auditWebhookBatchThrottleEnable,
      throttleQPS: throttleQps(v),
      throttleBurst: v.auditWebhookBatchThrottleBurst,
      asyncDelegate: true,
    };
    backends.push(withMode(hook, v.auditWebhookMode as AuditMode, batch, report));
  }
  if (backends.length === 0) return undefined;
  return {
    policy,
    backend: backends.length === 1 ? (backends[0] as AuditBackend) : new UnionBackend(backends),
  };
}
