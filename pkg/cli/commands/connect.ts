// `platform connect <virtual cluster> --project <project>`: find the instance,
// ask the platform for its kube config (the kubeconfig subresource), and merge it
// into the user's kube config as a context of its own.

import type { Command } from 'commander';
import type { KubeObject } from '../../apis/meta/types.js';
import { isObject } from '../../apis/meta/types.js';
import type { KubeList, PlatformApi } from '../api-client.js';
import { parseDurationSeconds } from '../duration.js';
import { CliError, PlatformApiError } from '../errors.js';
import type { CliIO } from '../io.js';
import { extractCurrentContext, kubeconfigPath, mergeIntoKubeConfigFile } from '../kubeconfig-merge.js';
import { withCommonOptions } from '../options.js';
import { reviewSelf } from '../self.js';
import type { CommonOptions } from '../session.js';
import { openSession } from '../session.js';

export interface FoundInstance {
  readonly name: string;
  readonly namespace: string;
  readonly project: string;
  readonly object: KubeObject;
}

function projectOf(namespace: string, prefix: string): string {
  return namespace.startsWith(prefix) ? namespace.slice(prefix.length) : namespace;
}

/**
 * The virtual cluster instance named `name`: in the project's namespace when a
 * project is given, else the only one of that name in any project the caller sees.
 */
export async function findInstance(
  api: PlatformApi,
  name: string,
  project: string | undefined,
  prefix: string,
): Promise<FoundInstance> {
  if (project) {
    const namespace = prefix + project;
    const obj = await api.getOptional<KubeObject>(`/namespaces/${namespace}/virtualclusterinstances/${name}`);
    if (obj) return { name, namespace, project, object: obj };
    const list = await api.call<KubeList>('GET', `/namespaces/${namespace}/virtualclusterinstances`);
    const names = list.items.map((i) => i.metadata.name ?? '').filter((n) => n !== '');
    if (names.length === 0) {
      throw new CliError(
        `project "${project}" not found: it has no virtual clusters you can see (namespace ${namespace})`,
      );
    }
    throw new CliError(
      `virtual cluster "${name}" not found in project "${project}"; it has: ${names.sort().join(', ')}`,
    );
  }
  const list = await api.call<KubeList>('GET', '/virtualclusterinstances');
  const matches = list.items.filter((i) => i.metadata.name === name);
  const only = matches[0];
  if (!only) throw new CliError(`virtual cluster "${name}" not found in any project you can see`);
  if (matches.length > 1) {
    const projects = matches.map((m) => projectOf(m.metadata.namespace ?? '', prefix)).sort();
    throw new CliError(
      `several virtual clusters are named "${name}" (in projects ${projects.join(', ')}): choose one with --project`,
    );
  }
  const namespace = only.metadata.namespace ?? '';
  return { name, namespace, project: projectOf(namespace, prefix), object: only };
}

export function contextName(project: string, name: string): string {
  return `platform_${name}_${project}`;
}

interface ConnectOptions extends CommonOptions {
  project?: string;
  clientCert?: boolean;
  certificateTtl?: string;
  server?: string;
  print?: boolean;
  switchContext: boolean;
  kubeconfig?: string;
}

async function connect(io: CliIO, name: string, opts: ConnectOptions): Promise<void> {
  const { api } = openSession(io, opts);
  const ttl =
    opts.certificateTtl === undefined
      ? undefined
      : parseDurationSeconds(opts.certificateTtl, '--certificate-ttl');
  const self = await reviewSelf(api);
  const found = await findInstance(api, name, opts.project, self.projectNamespacePrefix);
  const spec: Record<string, unknown> = {};
  if (opts.clientCert) spec.clientCert = true;
  if (ttl !== undefined) spec.certificateTTL = ttl;
  if (opts.server) spec.server = opts.server;
  const body = {
    apiVersion: `${api.group}/v1`,
    kind: 'VirtualClusterInstanceKubeConfig',
    metadata: { name: found.name, namespace: found.namespace },
    spec,
  };
  let answer: unknown;
  try {
    answer = await api.call<unknown>(
      'POST',
      `/namespaces/${found.namespace}/virtualclusterinstances/${found.name}/kubeconfig`,
      body,
    );
  } catch (err) {
    if (err instanceof PlatformApiError) {
      throw new CliError(
        `cannot get a kube config for virtual cluster ${found.project}/${found.name}: ${err.message}`,
      );
    }
    throw err;
  }
  const kubeConfig = isObject(answer) && isObject(answer.status) ? answer.status.kubeConfig : undefined;
  if (typeof kubeConfig !== 'string' || kubeConfig.trim() === '') {
    throw new CliError(
      `the platform returned no kube config for virtual cluster ${found.project}/${found.name}`,
    );
  }
  if (opts.print) {
    io.stdout.write(kubeConfig.endsWith('\n') ? kubeConfig : `${kubeConfig}\n`);
    return;
  }
  const context = contextName(found.project, found.name);
  const entries = extractCurrentContext(kubeConfig, context);
  const path = kubeconfigPath(opts.kubeconfig, io.env, io.homeDir);
  mergeIntoKubeConfigFile(path, entries, opts.switchContext);
  io.stdout.write(
    `Virtual cluster ${found.project}/${found.name} is context "${context}" in ${path}` +
      (opts.switchContext ? ', now the current context.\n' : '.\n'),
  );
}

export function registerConnect(program: Command, io: CliIO): void {
  withCommonOptions(
    program
      .command('connect')
      .description("Write a kube config context for a virtual cluster into the user's kube config")
      .argument('<virtual-cluster>', 'the virtual cluster instance name')
      .option(
        '--project <project>',
        'the project the virtual cluster is in (needed when several share the name)',
      )
      .option('--client-cert', 'authenticate with a client certificate instead of a platform token')
      .option(
        '--certificate-ttl <duration>',
        'lifetime of the credential, e.g. 24h, 30d; 0 for the signer default',
      )
      .option('--server <url>', 'use this server address in the kube config')
      .option('--print', 'print the kube config to stdout instead of merging it')
      .option('--no-switch-context', 'add the context without making it the current one')
      .option(
        '--kubeconfig <path>',
        'the kube config to merge into (default: $KUBECONFIG or ~/.kube/config)',
      ),
  ).action((name: string, opts: ConnectOptions) => connect(io, name, opts));
}
