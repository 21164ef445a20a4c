// `platform vcluster ...`: connecting virtual clusters to the platform with access keys.
//   create-secret  shared mode: one key in one secret (vc-platform recommended) for many virtual clusters
//   connect-key    dedicated mode: a key scoped to one virtual cluster, in its own namespace
//   check          resolve and validate what a virtual cluster would use, and say where it came from
//   rbac           the Role/RoleBinding a virtual cluster needs to read a secret in another namespace

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { KubeObject } from '../../apis/meta/types.js';
import { isObject } from '../../apis/meta/types.js';
import { fieldErrorString } from '../../apis/meta/field-errors.js';
import { parseNamespacedName, type NamespacedName } from '../../apis/meta/namespaced-name.js';
import {
  DEFAULT_SECRET_NAME,
  IncompleteSourceError,
  KeyNotFoundError,
  KubeConnectionHost,
  MissingRoleError,
  RECOMMENDED_SHARED_NAMESPACE,
  UnknownProjectError,
  checkConnection,
  connectionRbac,
  connectionSecret,
  describeSource,
  parseConnectionSettings,
  requireVirtualClusterRole,
  HostError,
  HostForbiddenError,
} from '../../vcluster/index.js';
import type {
  ApiKeySettings,
  ConnectionHost,
  ConnectionRbac,
  ResolvedConnection,
  SecretObject,
} from '../../vcluster/index.js';
import { DEFAULT_API_GROUP, PlatformApi } from '../api-client.js';
import { configPath, readConfig } from '../config-file.js';
import { parseDurationSeconds } from '../duration.js';
import { CliError, UsageError } from '../errors.js';
import type { CliIO } from '../io.js';
import { kubeconfigPath } from '../kubeconfig-merge.js';
import { collect, withCommonOptions, withHostOptions, withOutputOption } from '../options.js';
import type { OutputFormat } from '../output.js';
import { printData } from '../output.js';
import { hostOf, normalizePlatformUrl } from '../platform-url.js';
import { reviewSelf } from '../self.js';
import type { Session, CommonOptions } from '../session.js';
import { openSession } from '../session.js';
import { createAccessKey, parseVirtualClusterName, resolveOwner } from './access-key.js';
import { findInstance } from './connect.js';

export interface HostOptions {
  kubeconfig?: string;
  context?: string;
  /** The platform's URL: a kube config whose cluster is the platform is refused (it is no host). */
  platformServer?: string;
}

/** Makes the host cluster client; tests pass their own. */
export type ConnectionHostFactory = (options: HostOptions) => ConnectionHost;

export function kubeConnectionHost(io: CliIO): ConnectionHostFactory {
  return (options) => {
    const path = kubeconfigPath(options.kubeconfig, io.env, io.homeDir);
    const kc = new KubeConfig();
    try {
      kc.loadFromFile(path);
    } catch (err) {
      throw new CliError(
        `cannot load the host cluster's kube config ${path}: ${(err as Error).message}; pass --kubeconfig`,
      );
    }
    if (options.context) {
      if (!kc.getContextObject(options.context))
        throw new UsageError(`--context: ${path} has no context "${options.context}"`);
      kc.setCurrentContext(options.context);
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new CliError(`${path} has no current context with a cluster; pass --context`);
    if (options.platformServer && isPlatformServer(cluster.server, options.platformServer)) {
      throw new CliError(
        `the kube config ${path} (context "${kc.getCurrentContext()}") points at the platform (${cluster.server}), ` +
          'not at a host cluster: pass --kubeconfig or --context naming the cluster the virtual clusters run in',
      );
    }
    return new KubeConnectionHost(kc);
  };
}

/** True when `server` is the platform's own address (same host and port), not a host cluster's. */
function isPlatformServer(server: string, platform: string): boolean {
  try {
    const a = new URL(server);
    const b = new URL(normalizePlatformUrl(platform));
    return a.host === b.host || a.pathname.startsWith('/kubernetes/management');
  } catch {
    return false;
  }
}

/**
 * Opens the host cluster before any access key is made, so that a missing kube
 * config, or one that names the platform itself, costs nothing.
 */
function openHost(hosts: ConnectionHostFactory, opts: HostOptions, session: Session): ConnectionHost {
  return hosts({ ...opts, platformServer: session.login.server });
}

/**
 * Writes to the host what holds a key this command just made; when that fails,
 * deletes the key (it could not be made last: the secret carries it), so that a
 * failed command leaves no live key held by nobody.
 */
async function applyWithNewKey(
  session: Session,
  keyName: string | undefined,
  apply: () => Promise<void>,
): Promise<void> {
  try {
    await apply();
  } catch (err) {
    if (!keyName) throw err;
    const message = err instanceof Error ? err.message : String(err);
    try {
      await session.api.call('DELETE', `/ownedaccesskeys/${encodeURIComponent(keyName)}`);
    } catch (deleteErr) {
      throw new CliError(
        `${message}; deleting the access key "${keyName}" made for it failed too ` +
          `(${deleteErr instanceof Error ? deleteErr.message : String(deleteErr)}): delete it with: platform delete accesskey ${keyName}`,
      );
    }
    throw new CliError(`${message}; the access key "${keyName}" made for it was deleted`);
  }
}

/** Host failures as one line, with what was being done. */
function hostFailure(err: unknown): never {
  if (err instanceof HostForbiddenError) throw new CliError(`the host cluster refused: ${err.message}`);
  if (err instanceof HostError) throw new CliError(err.message);
  throw err;
}

function yamlDocuments(objects: readonly object[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}

async function applyAll(
  io: CliIO,
  host: ConnectionHost,
  secret: SecretObject | undefined,
  rbac: readonly ConnectionRbac[],
): Promise<void> {
  try {
    if (secret) {
      const r = await host.applySecret(secret);
      io.stdout.write(`secret ${secret.metadata.namespace}/${secret.metadata.name} ${r}\n`);
    }
    for (const { role, roleBinding } of rbac) {
      const r1 = await host.applyRole(role);
      io.stdout.write(`role ${role.metadata.namespace}/${role.metadata.name} ${r1}\n`);
      const r2 = await host.applyRoleBinding(roleBinding);
      io.stdout.write(`rolebinding ${roleBinding.metadata.namespace}/${roleBinding.metadata.name} ${r2}\n`);
    }
  } catch (err) {
    hostFailure(err);
  }
}

function parseVirtualClusterRef(text: string, flag: string): NamespacedName {
  const ref = parseNamespacedName(text.trim());
  if (!ref) throw new UsageError(`${flag}: "${text}" is not <namespace>/<virtual cluster>`);
  return ref;
}

// ---- create-secret (shared mode) ----

interface CreateSecretOptions extends CommonOptions, HostOptions {
  namespace: string;
  secretName: string;
  useAccessKey?: string;
  displayName?: string;
  ttl?: string;
  project?: string;
  vcluster?: string[];
  createRbac: boolean;
  print?: boolean;
}

function sessionValues(session: Session): { host: string; insecure?: boolean; caPem?: string } {
  return {
    host: hostOf(session.login.server),
    insecure: session.login.insecure,
    caPem: session.login.ca,
  };
}

async function createSecret(
  io: CliIO,
  hosts: ConnectionHostFactory,
  opts: CreateSecretOptions,
): Promise<void> {
  const session = openSession(io, opts);
  const project = opts.project ?? '*';
  const vcs = (opts.vcluster ?? []).map((v) => parseVirtualClusterRef(v, '--vcluster'));
  const ttlSeconds = opts.ttl === undefined ? undefined : parseDurationSeconds(opts.ttl, '--ttl');
  const host = opts.print ? undefined : openHost(hosts, opts, session);
  let accessKey: string;
  let keyName: string | undefined;
  /** The key this command made (not one given with --use-access-key). */
  let madeKey: string | undefined;
  if (opts.useAccessKey) {
    // An existing key: it must already carry the role, or every virtual cluster using it fails later.
    accessKey = opts.useAccessKey;
    const keyApi = new PlatformApi({ ...session.api.endpoint, token: accessKey }, session.api.group);
    const self = await reviewSelf(keyApi);
    // '*' as the project asks for a role entry covering every project, as a shared key needs.
    try {
      requireVirtualClusterRole(self, { project, name: '*' });
    } catch (err) {
      if (err instanceof MissingRoleError) throw new CliError(err.message);
      throw err;
    }
    keyName = self.accessKeyName;
  } else {
    const owner = await resolveOwner(session.api, undefined, undefined);
    const created = await createAccessKey(session.api, {
      displayName:
        opts.displayName ?? `virtual clusters (shared secret ${opts.namespace}/${opts.secretName})`,
      ...owner,
      ttlSeconds,
      namePrefix: 'vc-shared',
      scope: { roles: [{ role: 'vcluster', projects: [project] }], allowPlatformCli: true },
    });
    accessKey = created.spec.key;
    keyName = created.metadata.name;
    madeKey = keyName;
  }
  const secret = connectionSecret(
    { accessKey, ...sessionValues(session), project: opts.project },
    { namespace: opts.namespace, name: opts.secretName },
    'shared',
  );
  const apiKey: ApiKeySettings = {
    secretName: opts.secretName,
    namespace: opts.namespace,
    createRBAC: opts.createRbac,
    explicit: true,
  };
  const rbac = vcs.flatMap((vc) => connectionRbac(apiKey, vc) ?? []);
  if (!host) {
    io.stdout.write(yamlDocuments([secret, ...rbac.flatMap((r) => [r.role, r.roleBinding])]));
    return;
  }
  await applyWithNewKey(session, madeKey, () => applyAll(io, host, secret, rbac));
  io.stdout.write(
    `The secret holds access key "${keyName ?? ''}". Point each virtual cluster at it in its configuration:\n` +
      stringify({
        external: { platform: { apiKey: { secretName: opts.secretName, namespace: opts.namespace } } },
      }),
  );
}

// ---- connect-key (dedicated mode) ----

interface ConnectKeyOptions extends CommonOptions, HostOptions {
  project: string;
  namespace?: string;
  ttl?: string;
  print?: boolean;
}

function clusterRefNamespace(obj: KubeObject): string | undefined {
  const spec = obj['spec'];
  const ref = isObject(spec) ? spec['clusterRef'] : undefined;
  const ns = isObject(ref) ? ref['namespace'] : undefined;
  return typeof ns === 'string' && ns !== '' ? ns : undefined;
}

async function connectKey(io: CliIO, hosts: ConnectionHostFactory, name: string, opts: ConnectKeyOptions) {
  const session = openSession(io, opts);
  const ttlSeconds = opts.ttl === undefined ? undefined : parseDurationSeconds(opts.ttl, '--ttl');
  parseVirtualClusterName(`${opts.project}/${name}`, '<virtual-cluster> and --project');
  let namespace = opts.namespace;
  if (!namespace) {
    const self = await reviewSelf(session.api);
    const found = await findInstance(session.api, name, opts.project, self.projectNamespacePrefix);
    namespace = clusterRefNamespace(found.object);
    if (!namespace) {
      throw new UsageError(
        `virtual cluster ${opts.project}/${name} names no host namespace (spec.clusterRef.namespace): pass --namespace`,
      );
    }
  }
  const host = opts.print ? undefined : openHost(hosts, opts, session);
  const owner = await resolveOwner(session.api, undefined, undefined);
  const created = await createAccessKey(session.api, {
    displayName: `virtual cluster ${opts.project}/${name}`,
    ...owner,
    ttlSeconds,
    namePrefix: `vc-${name}`,
    scope: {
      roles: [{ role: 'vcluster', projects: [opts.project], virtualClusters: [name] }],
      virtualClusters: [{ project: opts.project, virtualCluster: name }],
    },
  });
  const secret = connectionSecret(
    { accessKey: created.spec.key, ...sessionValues(session), project: opts.project },
    { namespace, name: DEFAULT_SECRET_NAME },
    'dedicated',
  );
  if (!host) {
    io.stdout.write(yamlDocuments([secret]));
    return;
  }
  const keyName = created.metadata.name ?? '';
  await applyWithNewKey(session, keyName, () => applyAll(io, host, secret, []));
  io.stdout.write(
    `Access key "${keyName}" works for virtual cluster ${opts.project}/${name} only; ` +
      `revoke it with: platform delete accesskey ${keyName}\n` +
      'Use dedicated-key mode in the virtual cluster configuration:\n' +
      stringify({ external: { platform: {} } }),
  );
}

// ---- check ----

interface CheckOptions extends CommonOptions, HostOptions {
  name: string;
  namespace: string;
  project?: string;
  caFile?: string;
  insecure?: boolean;
  apiGroup?: string;
  output?: OutputFormat;
}

function readSettings(io: CliIO, file: string) {
  let text: string;
  try {
    text = readFileSync(resolve(io.cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const { settings, errors } = parseConnectionSettings(text);
  if (errors.length > 0) throw new CliError(`${file}: ${errors.map(fieldErrorString).join('; ')}`);
  return settings;
}

async function check(
  io: CliIO,
  hosts: ConnectionHostFactory,
  file: string,
  opts: CheckOptions,
): Promise<void> {
  const settings = readSettings(io, file);
  if (!settings.connected) {
    throw new CliError(
      `${file} has no external.platform section, so the virtual cluster does not connect to the platform ` +
        '(add "external: {platform: {}}" for dedicated-key mode, or apiKey settings for a shared secret)',
    );
  }
  const login = readConfig(configPath(opts.config, io.env, io.homeDir)).login;
  const caFromFlag = opts.caFile ? readFileSync(resolve(io.cwd, opts.caFile), 'utf8') : undefined;
  const reviewSelfFor = async (conn: ResolvedConnection) => {
    const baseUrl = normalizePlatformUrl(conn.host);
    const sameAsLogin = login?.server === baseUrl;
    const api = new PlatformApi(
      {
        baseUrl,
        token: conn.accessKey,
        ca: conn.caPem ?? caFromFlag ?? (sameAsLogin ? login?.ca : undefined),
        insecure: conn.insecure || opts.insecure || (sameAsLogin && login?.insecure),
      },
      opts.apiGroup ?? login?.apiGroup ?? DEFAULT_API_GROUP,
      'add its CA to the secret (certificateAuthorityData), or pass --ca-file or --insecure',
    );
    try {
      return await reviewSelf(api);
    } catch (err) {
      if (err instanceof CliError) {
        throw new CliError(
          `the access key from ${describeSource(conn.source)} does not work: ${err.message}`,
        );
      }
      throw err;
    }
  };
  let result;
  try {
    result = await checkConnection({
      settings,
      virtualCluster: { name: opts.name, namespace: opts.namespace },
      project: opts.project,
      env: io.env,
      host: hosts(opts),
      reviewSelf: reviewSelfFor,
    });
  } catch (err) {
    if (
      err instanceof KeyNotFoundError ||
      err instanceof MissingRoleError ||
      err instanceof UnknownProjectError ||
      err instanceof IncompleteSourceError
    ) {
      throw new CliError(err.message);
    }
    hostFailure(err);
  }
  const { connection, project, identity } = result;
  const rbac = connectionRbac(settings.apiKey, { name: opts.name, namespace: opts.namespace });
  const summary = {
    virtualCluster: `${opts.namespace}/${opts.name}`,
    mode: settings.mode,
    source: describeSource(connection.source),
    lookedAt: connection.lookedAt,
    host: connection.host,
    project,
    user: identity.user,
    team: identity.team,
    accessKey: identity.accessKeyName,
    rbac: rbac ? { role: `${rbac.role.metadata.namespace}/${rbac.role.metadata.name}` } : undefined,
  };
  if (opts.output) {
    printData(io.stdout, JSON.parse(JSON.stringify(summary)) as unknown, opts.output);
    return;
  }
  const owner = identity.user ? `user ${identity.user}` : identity.team ? `team ${identity.team}` : 'unknown';
  io.stdout.write(
    `key from: ${summary.source}\n` +
      `host:     ${connection.host}\n` +
      `project:  ${project}\n` +
      `owner:    ${owner}${identity.accessKeyName ? ` (access key "${identity.accessKeyName}")` : ''}\n` +
      (rbac
        ? `rbac:     needs role ${summary.rbac?.role ?? ''} (platform vcluster rbac ${file} ...)\n`
        : '') +
      `OK: virtual cluster ${opts.namespace}/${opts.name} can connect to the platform with the "vcluster" role.\n`,
  );
}

// ---- rbac ----

interface RbacOptions extends HostOptions {
  name: string;
  namespace: string;
  serviceAccount?: string;
  apply?: boolean;
}

async function rbacCommand(
  io: CliIO,
  hosts: ConnectionHostFactory,
  file: string,
  opts: RbacOptions,
): Promise<void> {
  const settings = readSettings(io, file);
  const rbac = connectionRbac(settings.apiKey, {
    name: opts.name,
    namespace: opts.namespace,
    serviceAccount: opts.serviceAccount,
  });
  if (!rbac) {
    const why = !settings.apiKey.createRBAC
      ? 'createRBAC is false'
      : `the secret is in the virtual cluster's own namespace ${opts.namespace}`;
    io.stderr.write(`No RBAC needed: ${why}.\n`);
    return;
  }
  if (!opts.apply) {
    io.stdout.write(yamlDocuments([rbac.role, rbac.roleBinding]));
    return;
  }
  await applyAll(io, hosts(opts), undefined, [rbac]);
}

export function registerVClusterCommands(program: Command, io: CliIO, hosts: ConnectionHostFactory): void {
  const vcluster = program
    .command('vcluster')
    .description('Connect virtual clusters to the platform with access keys (shared or dedicated)');

  withHostOptions(
    withCommonOptions(
      vcluster
        .command('create-secret')
        .description(
          'Shared mode: create a key with the vcluster role for all projects and write it into one secret that many virtual clusters use',
        )
        .option(
          '--namespace <namespace>',
          'namespace of the secret on the host cluster',
          RECOMMENDED_SHARED_NAMESPACE,
        )
        .option('--secret-name <name>', 'name of the secret', DEFAULT_SECRET_NAME)
        .option(
          '--use-access-key <key>',
          'put this existing key in the secret instead of creating one (it must have the vcluster role)',
        )
        .option('--display-name <text>', 'display name of the created key')
        .option('--ttl <duration>', 'lifetime of the created key, e.g. 90d (default: no expiry)')
        .option('--project <project>', 'limit the key to one project (default: all projects, *)')
        .option(
          '--vcluster <namespace/name>',
          'a virtual cluster that will use the secret: create its RBAC (repeatable)',
          collect,
        )
        .option('--no-create-rbac', 'do not create Roles and RoleBindings for the --vcluster entries')
        .option('--print', 'print the Secret (and RBAC) as YAML instead of applying them'),
    ),
  ).action((opts: CreateSecretOptions) => createSecret(io, hosts, opts));

  withHostOptions(
    withCommonOptions(
      vcluster
        .command('connect-key')
        .description(
          "Dedicated mode: create a key scoped to one virtual cluster and write it into the secret in the virtual cluster's namespace",
        )
        .argument('<virtual-cluster>', 'the virtual cluster name')
        .requiredOption('--project <project>', 'the project the virtual cluster belongs to')
        .option(
          '--namespace <namespace>',
          "the virtual cluster's host namespace (default: from its instance's clusterRef)",
        )
        .option('--ttl <duration>', 'lifetime of the key, e.g. 90d (default: no expiry)')
        .option('--print', 'print the Secret as YAML instead of applying it'),
    ),
  ).action((name: string, opts: ConnectKeyOptions) => connectKey(io, hosts, name, opts));

  withOutputOption(
    withHostOptions(
      withCommonOptions(
        vcluster
          .command('check')
          .description(
            'Resolve the access key and host a virtual cluster would use (LICENSE, then its configured secret, then vc-platform-api-key), validate the key, and say where it came from',
          )
          .argument('<config-file>', "the virtual cluster's configuration file (YAML)")
          .requiredOption('--name <name>', 'the virtual cluster name')
          .requiredOption('--namespace <namespace>', "the virtual cluster's host namespace")
          .option('--project <project>', 'its project, when neither the file nor the secret names it')
          .option('--ca-file <path>', "PEM file with the platform's CA, when the secret has none")
          .option('--insecure', "do not verify the platform's certificate")
          .option('--api-group <group>', "the management API group (default: the stored login's)"),
      ),
    ),
  ).action((file: string, opts: CheckOptions) => check(io, hosts, file, opts));

  withHostOptions(
    vcluster
      .command('rbac')
      .description(
        'Print (or apply) the Role and RoleBinding a virtual cluster needs to read its secret in another namespace',
      )
      .argument('<config-file>', "the virtual cluster's configuration file (YAML)")
      .requiredOption('--name <name>', 'the virtual cluster name')
      .requiredOption('--namespace <namespace>', "the virtual cluster's host namespace")
      .option('--service-account <name>', "the virtual cluster's service account (default: vc-<name>)")
      .option('--apply', 'create or update them on the host cluster instead of printing them'),
  ).action((file: string, opts: RbacOptions) => rbacCommand(io, hosts, file, opts));
}
