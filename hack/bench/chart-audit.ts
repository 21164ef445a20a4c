// The audit set-up the chart deploys by default, as server flags for a bench server:
// the default policy (reads and watches at Metadata, other writes at RequestResponse,
// probes and discovery not at all), taken from the rendered
// deploy/05-configmap-platform-apiserver-audit-policy.yaml (hack/chart/sync-deploy.ts
// keeps it equal to the chart's template), and the log settings of values.yaml's
// audit.log. The chart writes events to stdout by default; the bench writes them to a
// file (the chart's `destination: file`, with its rotation settings), so they do not
// mix with the server's log and the harness's output.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** The repository's root: the nearest folder above this module holding charts/ and deploy/. */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'charts', 'platform-apiserver'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no charts/platform-apiserver above ${import.meta.dirname}`);
    dir = up;
  }
  return dir;
}

interface AuditLogValues {
  readonly mode: string;
  readonly maxSize: number;
  readonly maxBackup: number;
  readonly maxAge: number;
  readonly compress: boolean;
}

/** The chart's default audit policy, written into `dir`; returns the file's path. */
export function chartAuditPolicyFile(dir: string): string {
  const rendered = join(repoRoot(), 'deploy', '05-configmap-platform-apiserver-audit-policy.yaml');
  const configMap = parseYaml(readFileSync(rendered, 'utf8')) as { data?: Record<string, string> };
  const policy = configMap.data?.['policy.yaml'];
  if (!policy) throw new Error(`${rendered}: no data.policy.yaml`);
  const policyFile = join(dir, 'chart-audit-policy.yaml');
  writeFileSync(policyFile, policy);
  return policyFile;
}

/**
 * Flags that make a server audit as the chart's defaults do, its events written to
 * `logFile`; the policy file is written into `dir`.
 */
export function chartAuditArgs(dir: string, logFile: string): string[] {
  const root = repoRoot();
  const policyFile = chartAuditPolicyFile(dir);
  const values = parseYaml(
    readFileSync(join(root, 'charts', 'platform-apiserver', 'values.yaml'), 'utf8'),
  ) as {
    audit?: { log?: AuditLogValues };
  };
  const log = values.audit?.log;
  if (!log) throw new Error('charts/platform-apiserver/values.yaml: no audit.log');
  // The flags deployment.yaml passes for `destination: file`, with values.yaml's defaults.
  return [
    '--audit-policy-file',
    policyFile,
    `--audit-log-mode=${log.mode}`,
    '--audit-log-path',
    logFile,
    `--audit-log-maxsize=${log.maxSize}`,
    `--audit-log-maxbackup=${log.maxBackup}`,
    `--audit-log-maxage=${log.maxAge}`,
    `--audit-log-compress=${String(log.compress)}`,
  ];
}
