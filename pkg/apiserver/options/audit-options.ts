// The audit flags (kube-apiserver's AuditOptions, k8s.io/apiserver pkg/server/options/audit.go):
// their values, defaults and checks live with the audit code in pkg/audit/options.ts, which
// also builds the policy and backends from them.

import { AUDIT_OPTION_DEFAULTS, validateAuditOptions, type AuditOptionValues } from '../../audit/options.js';
import type { OptionGroup } from './option-group.js';

export type { AuditOptionValues };

export const auditOptions = {
  title: 'Auditing flags',
  flags: [
    {
      name: 'audit-policy-file',
      field: 'auditPolicyFile',
      kind: 'string',
      usage:
        'Path to the file that defines the audit policy configuration (an audit.k8s.io/v1 Policy). Without it nothing is audited. See docs/audit.md.',
      default: '',
    },
    {
      name: 'audit-log-path',
      field: 'auditLogPath',
      kind: 'string',
      usage:
        "If set, all requests coming to the apiserver will be logged to this file, one audit.k8s.io/v1 Event a line. '-' means standard out.",
      default: '',
    },
    {
      name: 'audit-log-maxage',
      field: 'auditLogMaxAge',
      kind: 'int',
      usage:
        'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename. 0: no limit.',
      default: 0,
    },
    {
      name: 'audit-log-maxbackup',
      field: 'auditLogMaxBackup',
      kind: 'int',
      usage: 'The maximum number of old audit log files to retain. 0: all.',
      default: 0,
    },
    {
      name: 'audit-log-maxsize',
      field: 'auditLogMaxSize',
      kind: 'int',
      usage: 'The maximum size in megabytes of the audit log file before it gets rotated. 0: 100.',
      default: 0,
    },
    {
      name: 'audit-log-compress',
      field: 'auditLogCompress',
      kind: 'bool',
      usage: 'If set, the rotated log files will be compressed using gzip.',
      default: false,
    },
    {
      name: 'audit-log-format',
      field: 'auditLogFormat',
      kind: 'string',
      usage:
        'Format of saved audits: json (structured, one event a line). The legacy one-line text format is not supported.',
      default: 'json',
    },
    {
      name: 'audit-log-mode',
      field: 'auditLogMode',
      kind: 'string',
      usage:
        'Strategy for writing audit events to the log: blocking (the request waits for the write), blocking-strict (and fails with 500 when its RequestReceived event cannot be written) or batch (buffered and written asynchronously; a full buffer drops events).',
      default: 'blocking',
    },
    {
      name: 'audit-webhook-config-file',
      field: 'auditWebhookConfigFile',
      kind: 'string',
      usage:
        "Path to a kubeconfig formatted file that defines the audit webhook configuration: events are POSTed as an audit.k8s.io/v1 EventList to the current context's server, with its TLS settings and credentials.",
      default: '',
    },
    {
      name: 'audit-webhook-mode',
      field: 'auditWebhookMode',
      kind: 'string',
      usage:
        'Strategy for sending audit events to the webhook: batch, blocking or blocking-strict (as --audit-log-mode).',
      default: 'batch',
    },
    {
      name: 'audit-webhook-batch-buffer-size',
      field: 'auditWebhookBatchBufferSize',
      kind: 'int',
      usage: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
      default: 10_000,
    },
    {
      name: 'audit-webhook-batch-max-size',
      field: 'auditWebhookBatchMaxSize',
      kind: 'int',
      usage: 'The maximum size of a batch. Only used in batch mode.',
      default: 400,
    },
    {
      name: 'audit-webhook-batch-max-wait',
      field: 'auditWebhookBatchMaxWaitMs',
      kind: 'duration',
      usage:
        "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
      default: 30_000,
    },
    {
      name: 'audit-webhook-batch-throttle-enable',
      field: 'auditWebhookBatchThrottleEnable',
      kind: 'bool',
      usage: 'Whether batching throttling is enabled. Only used in batch mode.',
      default: true,
    },
    {
      name: 'audit-webhook-batch-throttle-qps',
      field: 'auditWebhookBatchThrottleQps',
      kind: 'string',
      usage: 'Maximum average number of batches per second (a decimal number). Only used in batch mode.',
      default: '10',
    },
    {
      name: 'audit-webhook-batch-throttle-burst',
      field: 'auditWebhookBatchThrottleBurst',
      kind: 'int',
      usage:
        'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
      default: 15,
    },
    {
      name: 'audit-webhook-initial-backoff',
      field: 'auditWebhookInitialBackoffMs',
      kind: 'duration',
      usage:
        'The amount of time to wait before retrying the first failed request (then 1.5 times longer each time, five tries in all).',
      default: AUDIT_OPTION_DEFAULTS.auditWebhookInitialBackoffMs,
    },
  ],
  complete() {},
  validate: (v) => validateAuditOptions(v),
} satisfies OptionGroup<AuditOptionValues>;
