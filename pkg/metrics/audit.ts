// The audit metrics of k8s.io/apiserver pkg/audit/metrics.go, under upstream's names.

import { Counter } from 'prom-client';

import { CounterFamily, type CounterSeries } from './families.js';
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

// Counted on every request, so a resolved-series family (families.ts) with each
// level's series kept: the levels are the policy's four, never a client's value.
const auditLevelTotal = new CounterFamily({
  name: 'apiserver_audit_level_total',
  help: 'Counter of policy levels for audit events (1 per request).',
  labelNames: ['level'],
  registry,
});

const levelSeries = new Map<string, CounterSeries>();

/** Counts one request's audit policy level in apiserver_audit_level_total. */
export function countAuditLevel(level: 'None' | 'Metadata' | 'Request' | 'RequestResponse'): void {
  let series = levelSeries.get(level);
  if (!series) levelSeries.set(level, (series = auditLevelTotal.series({ level })));
  series.inc();
}

export const auditRequestsRejectedTotal = new Counter({
  name: 'apiserver_audit_requests_rejected_total',
  help: 'Counter of apiserver requests rejected due to an error in audit logging backend.',
  registers: [registry],
});
