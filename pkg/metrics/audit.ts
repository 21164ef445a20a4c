// The audit metrics of k8s.io/apiserver pkg/audit/metrics.go, under upstream's names.

import { Counter } from 'prom-client';

import { registry } from './registry.js';

export const auditEventTotal = new Counter({
  name: 'apiserver_audit_event_total',
  help: 'Counter of audit events generated and sent to the audit backend.',
  registers: [registry],
});

export const auditErrorTotal = new Counter({
  name: 'apiserver_audit_error_total',
  help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
  labelNames: ['plugin'],
  registers: [registry],
});

export const auditLevelTotal = new Counter({
  name: 'apiserver_audit_level_total',
  help: 'Counter of policy levels for audit events (1 per request).',
  labelNames: ['level'],
  registers: [registry],
});

export const auditRequestsRejectedTotal = new Counter({
  name: 'apiserver_audit_requests_rejected_total',
  help: 'Counter of apiserver requests rejected due to an error in audit logging backend.',
  registers: [registry],
});
