// `platform create accesskey`, `platform list accesskeys`, `platform delete accesskey`.
// The platform returns a new key's value once, in the create response; the client
// prints it then and says so, because it cannot be shown again.

import type { Command } from 'commander';
import type { AccessKeyScope, AccessKeyScopeRole } from '../../apis/management/v1/common.js';
import type { OwnedAccessKey } from '../../apis/management/v1/owned-access-key.js';
import { age } from '../../apis/meta/duration.js';
import { parseNamespacedName } from '../../apis/meta/namespaced-name.js';
import { isObject } from '../../apis/meta/types.js';
import type { KubeList, PlatformApi } from '../api-client.js';
import { formatSeconds, parseDurationSeconds } from '../duration.js';
import { CliError, PlatformApiError, UsageError } from '../errors.js';
import type { CliIO } from '../io.js';
import { collect, withCommonOptions, withOutputOption } from '../options.js';
import type { OutputFormat } from '../output.js';
import { formatTable, printData } from '../output.js';
import type { SelfInfo } from '../self.js';
import { reviewSelf } from '../self.js';
import type { CommonOptions } from '../session.js';
import { openSession } from '../session.js';

export interface VirtualClusterName {
  readonly project: string;
  readonly name: string;
}

export function parseVirtualClusterName(text: string, flag: string): VirtualClusterName {
  // A project is a namespace's suffix and a virtual cluster an object in it: the
  // rule of every `<namespace>/<name>`.
  const ref = parseNamespacedName(text.trim());
  if (!ref) throw new UsageError(`${flag}: "${text}" is not <project>/<virtual cluster>`);
  return { project: ref.namespace, name: ref.name };
}

/**
 * The scope for `--role` and `--scope-virtual-cluster`: the key reaches only the
 * named virtual clusters, and each role applies to exactly those (one entry per
 * virtual cluster, so two clusters in two projects do not cross over), or to all
 * projects when no virtual cluster is named.
 */
export function buildScope(
  roles: readonly string[],
  vcs: readonly VirtualClusterName[],
): AccessKeyScope | undefined {
  if (roles.length === 0 && vcs.length === 0) return undefined;
  const scope: AccessKeyScope = {};
  if (vcs.length > 0)
    scope.virtualClusters = vcs.map((v) => ({ project: v.project, virtualCluster: v.name }));
  if (roles.length > 0) {
    const entries: AccessKeyScopeRole[] = [];
    for (const role of roles) {
      if (vcs.length === 0) entries.push({ role, projects: ['*'] });
      else for (const v of vcs) entries.push({ role, projects: [v.project], virtualClusters: [v.name] });
    }
    scope.roles = entries;
  }
  return scope;
}

export interface NewKey {
  displayName: string;
  description?: string | undefined;
  user?: string | undefined;
  team?: string | undefined;
  ttlSeconds?: number | undefined;
  scope?: AccessKeyScope | undefined;
  name?: string | undefined;
  /** Used for generateName when no name is given. */
  namePrefix?: string | undefined;
}

/** The owner flags or, without them, whoever the key in use belongs to (asked of the platform). */
export async function resolveOwner(
  api: PlatformApi,
  user: string | undefined,
  team: string | undefined,
): Promise<{ user?: string; team?: string }> {
  if (user && team) throw new UsageError('use either --user or --team, not both');
  if (user) return { user };
  if (team) return { team };
  const self: SelfInfo = await reviewSelf(api);
  if (self.user) return { user: self.user };
  if (self.team) return { team: self.team };
  throw new CliError(
    'cannot tell whose key this is: the key in use belongs to no user or team; pass --user or --team',
  );
}

/** Creates the key; the returned object carries the plain key in spec.key, this once. */
export async function createAccessKey(
  api: PlatformApi,
  key: NewKey,
): Promise<OwnedAccessKey & { spec: { key: string } }> {
  const owner = key.user ?? key.team ?? 'key';
  const metadata: Record<string, string> = key.name
    ? { name: key.name }
    : {
        generateName: `${(key.namePrefix ?? owner)
          .toLowerCase()
          .replace(/[^a-z0-9-]/g, '-')
          .slice(0, 40)}-`,
      };
  const spec: Record<string, unknown> = { displayName: key.displayName, type: 'User' };
  if (key.description) spec.description = key.description;
  if (key.user) spec.user = key.user;
  if (key.team) spec.team = key.team;
  if (key.ttlSeconds !== undefined) spec.ttl = key.ttlSeconds;
  if (key.scope) spec.scope = key.scope;
  const created = await api.call<OwnedAccessKey>('POST', '/ownedaccesskeys', {
    apiVersion: `${api.group}/v1`,
    kind: 'OwnedAccessKey',
    metadata,
    spec,
  });
  const value = created.spec?.key;
  if (typeof value !== 'string' || value === '' || value.startsWith('sha256:')) {
    throw new CliError(
      `access key "${created.metadata.name ?? ''}" was created but the platform did not return its value`,
    );
  }
  return created as OwnedAccessKey & { spec: { key: string } };
}

interface CreateOptions extends CommonOptions {
  displayName: string;
  description?: string;
  user?: string;
  team?: string;
  ttl?: string;
  scopeVirtualCluster?: string[];
  role?: string[];
  name?: string;
  output?: OutputFormat;
}

async function create(io: CliIO, opts: CreateOptions): Promise<void> {
  const ttlSeconds = opts.ttl === undefined ? undefined : parseDurationSeconds(opts.ttl, '--ttl');
  if (ttlSeconds === 0)
    throw new UsageError('--ttl: must be more than zero (leave it out for a key that does not expire)');
  const vcs = (opts.scopeVirtualCluster ?? []).map((v) =>
    parseVirtualClusterName(v, '--scope-virtual-cluster'),
  );
  const scope = buildScope(opts.role ?? [], vcs);
  const { api } = openSession(io, opts);
  const owner = await resolveOwner(api, opts.user, opts.team);
  const created = await createAccessKey(api, {
    displayName: opts.displayName,
    description: opts.description,
    ...owner,
    ttlSeconds,
    scope,
    name: opts.name,
  });
  if (opts.output) {
    printData(io.stdout, created, opts.output);
    return;
  }
  const who = owner.user ? `user ${owner.user}` : `team ${owner.team ?? ''}`;
  const expiry = ttlSeconds ? `, expires in ${formatSeconds(ttlSeconds)}` : '';
  io.stdout.write(
    `Access key "${created.metadata.name ?? ''}" created for ${who}${expiry}.\n` +
      `Key: ${created.spec.key}\n` +
      'Store it now: the platform shows it only this once.\n',
  );
}

function keysOf(answer: unknown): OwnedAccessKey[] {
  if (!isObject(answer)) return [];
  const list = Array.isArray(answer.accessKeys)
    ? answer.accessKeys
    : Array.isArray(answer.items)
      ? answer.items
      : [];
  return list.filter(isObject) as OwnedAccessKey[];
}

/** The keys of a user or team: their accesskeys subresource, or a filtered list on servers without one. */
async function listKeys(
  api: PlatformApi,
  owner: { user?: string; team?: string },
): Promise<OwnedAccessKey[]> {
  const [field, name] = owner.user ? (['user', owner.user] as const) : (['team', owner.team ?? ''] as const);
  try {
    return keysOf(await api.call<unknown>('GET', `/${field}s/${name}/accesskeys`));
  } catch (err) {
    if (!(err instanceof PlatformApiError && (err.status === 404 || err.status === 405))) throw err;
    let all: KubeList<OwnedAccessKey>;
    try {
      all = await api.call<KubeList<OwnedAccessKey>>('GET', '/ownedaccesskeys');
    } catch {
      throw err;
    }
    return all.items.filter((k) => k.spec?.[field] === name);
  }
}

function scopeSummary(scope: AccessKeyScope | undefined): string {
  if (!scope) return '<none>';
  const parts: string[] = [];
  for (const r of scope.roles ?? []) {
    const where = [...(r.projects ?? []), ...(r.virtualClusters ?? []).map((v) => `vc:${v}`)].join(',');
    parts.push(where ? `${r.role ?? ''}(${where})` : (r.role ?? ''));
  }
  for (const v of scope.virtualClusters ?? []) parts.push(`${v.project ?? '*'}/${v.virtualCluster ?? '*'}`);
  for (const p of scope.projects ?? []) parts.push(`project:${p.project ?? '*'}`);
  if (scope.allowPlatformCli) parts.push('platformCLI');
  return parts.join(' ') || '<empty>';
}

async function list(
  io: CliIO,
  opts: CommonOptions & { user?: string; team?: string; output?: OutputFormat },
) {
  const { api } = openSession(io, opts);
  const owner = await resolveOwner(api, opts.user, opts.team);
  const keys = (await listKeys(api, owner)).sort((a, b) =>
    (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  if (opts.output) {
    printData(io.stdout, { items: keys }, opts.output);
    return;
  }
  if (keys.length === 0) {
    io.stderr.write(
      `No access keys for ${owner.user ? `user ${owner.user}` : `team ${owner.team ?? ''}`}.\n`,
    );
    return;
  }
  io.stdout.write(
    formatTable(
      ['NAME', 'DISPLAY NAME', 'TYPE', 'SCOPE', 'TTL', 'DISABLED', 'AGE'],
      keys.map((k) => [
        k.metadata.name ?? '',
        k.spec?.displayName ?? '',
        k.spec?.type ?? '',
        scopeSummary(k.spec?.scope),
        k.spec?.ttl ? formatSeconds(k.spec.ttl) : '<none>',
        k.spec?.disabled ? 'true' : 'false',
        age(k.metadata.creationTimestamp),
      ]),
    ),
  );
}

export function registerAccessKeyCommands(
  createCmd: Command,
  listCmd: Command,
  deleteCmd: Command,
  io: CliIO,
): void {
  withOutputOption(
    withCommonOptions(
      createCmd
        .command('accesskey')
        .alias('accesskeys')
        .description('Create an access key; its value is printed once and cannot be shown again')
        .requiredOption('--display-name <text>', 'the name shown for the key')
        .option('--description <text>', 'what the key is for')
        .option('--user <user>', 'create the key for this user (default: yourself)')
        .option('--team <team>', 'create the key for this team')
        .option('--ttl <duration>', 'how long the key lives, e.g. 30d, 12h (default: it does not expire)')
        .option(
          '--scope-virtual-cluster <project/name>',
          'limit the key to this virtual cluster (repeatable)',
          collect,
        )
        .option(
          '--role <role>',
          'give the key this scope role, e.g. vcluster or platformCLI (repeatable)',
          collect,
        )
        .option('--name <name>', 'the key object name (default: generated)'),
    ),
  ).action((opts: CreateOptions) => create(io, opts));

  withOutputOption(
    withCommonOptions(
      listCmd
        .command('accesskeys')
        .alias('accesskey')
        .description('List the access keys of a user (default: yourself) or a team; values are never shown')
        .option('--user <user>', "list this user's keys")
        .option('--team <team>', "list this team's keys"),
    ),
  ).action((opts: CommonOptions & { user?: string; team?: string; output?: OutputFormat }) => list(io, opts));

  withCommonOptions(
    deleteCmd
      .command('accesskey')
      .alias('accesskeys')
      .description('Delete (revoke) an access key')
      .argument('<name>', 'the access key object name (see platform list accesskeys)'),
  ).action(async (name: string, opts: CommonOptions) => {
    const { api } = openSession(io, opts);
    try {
      await api.call('DELETE', `/ownedaccesskeys/${name}`);
    } catch (err) {
      if (err instanceof PlatformApiError && err.status === 404)
        throw new CliError(`access key "${name}" not found`);
      throw err;
    }
    io.stdout.write(`Access key "${name}" deleted.\n`);
  });
}
