// `platform login`, `platform logout` and `platform whoami`.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { PlatformApi, chooseApiGroup, DEFAULT_API_GROUP } from '../api-client.js';
import { configPath, readConfig, writeConfig } from '../config-file.js';
import type { StoredLogin } from '../config-file.js';
import { CliError, PlatformApiError, UsageError } from '../errors.js';
import type { CliIO } from '../io.js';
import { withCommonOptions, withOutputOption } from '../options.js';
import type { OutputFormat } from '../output.js';
import { formatTable, printData } from '../output.js';
import { normalizePlatformUrl } from '../platform-url.js';
import { describeSelf, reviewSelf } from '../self.js';
import type { SelfInfo } from '../self.js';
import type { CommonOptions } from '../session.js';
import { ACCESS_KEY_ENV, openSession } from '../session.js';
import { loginAccessKey } from '../access-key-input.js';

export const API_GROUP_ENV = 'PLATFORM_API_GROUP';
const LOGIN_TRUST_HINT =
  'pass that CA with --ca-file <file>, or use --insecure to skip verification (not recommended)';

interface LoginOptions {
  accessKey?: string;
  insecure?: boolean;
  caFile?: string;
  apiGroup?: string;
  config?: string;
  output?: OutputFormat;
}

function readCaFile(path: string, cwd: string): string {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    throw new UsageError(
      `--ca-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`--ca-file: ${path} holds no PEM certificate`);
  }
  return text;
}

/** The API group the platform serves: asked of its discovery document, since the group is a server setting. */
async function discoverApiGroup(api: PlatformApi): Promise<string> {
  let groups: string[];
  try {
    groups = await api.groups();
  } catch (err) {
    // A platform without a discovery document under the prefix: assume the default group.
    if (err instanceof PlatformApiError && err.status === 404) return DEFAULT_API_GROUP;
    throw err;
  }
  const group = chooseApiGroup(groups);
  if (!group) {
    throw new UsageError(
      groups.length === 0
        ? `the platform at ${api.endpoint.baseUrl} serves no API group under /kubernetes/management; is it the platform?`
        : `the platform serves several API groups (${groups.join(', ')}): choose one with --api-group`,
    );
  }
  return group;
}

export function selfSummary(self: SelfInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (self.user) out.user = self.user;
  if (self.team) out.team = self.team;
  out.teams = [...self.teams];
  out.groups = [...self.groups];
  if (self.accessKeyName) out.accessKey = self.accessKeyName;
  if (self.accessKeyType) out.accessKeyType = self.accessKeyType;
  if (self.scope) out.accessKeyScope = self.scope;
  return out;
}

async function login(io: CliIO, url: string, opts: LoginOptions): Promise<void> {
  const server = normalizePlatformUrl(url);
  if (opts.insecure && opts.caFile) throw new UsageError('use either --ca-file or --insecure, not both');
  const ca = opts.caFile ? readCaFile(opts.caFile, io.cwd) : undefined;
  const accessKey = await loginAccessKey(io, opts.accessKey);
  const endpoint = { baseUrl: server, token: accessKey, ca, insecure: opts.insecure };
  const apiGroup =
    opts.apiGroup ||
    io.env[API_GROUP_ENV] ||
    (await discoverApiGroup(new PlatformApi(endpoint, '', LOGIN_TRUST_HINT)));
  const api = new PlatformApi(endpoint, apiGroup, LOGIN_TRUST_HINT);
  let self: SelfInfo;
  try {
    self = await reviewSelf(api);
  } catch (err) {
    if (err instanceof PlatformApiError && err.status === 404) {
      throw new CliError(
        `${server} does not serve the platform's selves call for API group ${apiGroup}; is it the platform?`,
      );
    }
    throw err;
  }
  const stored: StoredLogin = { server, accessKey, apiGroup };
  if (ca) stored.ca = ca;
  if (opts.insecure) stored.insecure = true;
  const who = self.user ?? (self.team ? `team:${self.team}` : undefined);
  if (who) stored.user = who;
  const path = configPath(opts.config, io.env, io.homeDir);
  writeConfig(path, { ...readConfig(path), login: stored });
  if (opts.output) {
    printData(io.stdout, { server, apiGroup, ...selfSummary(self) }, opts.output);
    return;
  }
  const key = self.accessKeyName ? ` with access key "${self.accessKeyName}"` : '';
  io.stdout.write(`Logged in to ${server} as ${describeSelf(self)}${key}.\n`);
  if (opts.insecure) io.stderr.write('warning: the server certificate is not verified (--insecure)\n');
}

export function registerLogin(program: Command, io: CliIO): void {
  withOutputOption(
    program
      .command('login')
      .description('Log in to the platform with an access key, check it, and remember the login')
      .argument('<url>', 'the platform URL; https:// is added when missing, plain http is refused')
      .option(
        '--access-key <key>',
        `the access key; - reads it from standard input. Default: $${ACCESS_KEY_ENV}, else asked for (not echoed) in a terminal`,
      )
      .option('--ca-file <path>', 'PEM file with the CA that signs the platform certificate')
      .option('--insecure', 'do not verify the platform certificate (not recommended)')
      .option('--api-group <group>', `the management API group (default: discovered, or $${API_GROUP_ENV})`)
      .option('--config <path>', 'the login file (default: $PLATFORM_CONFIG or ~/.platform/config.json)'),
  ).action((url: string, opts: LoginOptions) => login(io, url, opts));

  program
    .command('logout')
    .description('Forget the stored login')
    .option('--config <path>', 'the login file (default: $PLATFORM_CONFIG or ~/.platform/config.json)')
    .action((opts: { config?: string }) => {
      const path = configPath(opts.config, io.env, io.homeDir);
      const config = readConfig(path);
      if (!config.login) {
        io.stdout.write('Not logged in.\n');
        return;
      }
      const { login: old, ...rest } = config;
      writeConfig(path, rest);
      io.stdout.write(`Logged out of ${old.server}.\n`);
    });

  withOutputOption(
    withCommonOptions(program.command('whoami').description('Show who the access key in use belongs to')),
  ).action(async (opts: CommonOptions & { output?: OutputFormat }) => {
    const session = openSession(io, opts);
    const self = await reviewSelf(session.api);
    if (opts.output) {
      printData(io.stdout, { server: session.login.server, ...selfSummary(self) }, opts.output);
      return;
    }
    io.stdout.write(
      formatTable(
        ['SERVER', 'USER', 'TEAM', 'ACCESS KEY', 'TEAMS'],
        [
          [
            session.login.server,
            self.user ?? '',
            self.team ?? '',
            self.accessKeyName ?? '',
            self.teams.join(','),
          ],
        ],
      ),
    );
  });
}
