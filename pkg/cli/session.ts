// The login a command runs with: the stored one, with `--access-key` (or
// PLATFORM_ACCESS_KEY) taking its key's place for this one call.

import type { PlatformApi as PlatformApiType } from './api-client.js';
import { PlatformApi } from './api-client.js';
import type { StoredLogin } from './config-file.js';
import { configPath, readConfig } from './config-file.js';
import { CliError } from './errors.js';
import type { CliIO } from './io.js';

export const ACCESS_KEY_ENV = 'PLATFORM_ACCESS_KEY';

/** Options every command has. */
export interface CommonOptions {
  config?: string;
  accessKey?: string;
}

export interface Session {
  readonly api: PlatformApiType;
  readonly login: StoredLogin;
  readonly configPath: string;
}

export const RELOGIN_TRUST_HINT =
  'log in again with --ca-file <file> holding that CA, or with --insecure to skip verification';

export function openSession(io: CliIO, options: CommonOptions): Session {
  const path = configPath(options.config, io.env, io.homeDir);
  const stored = readConfig(path).login;
  if (!stored) {
    throw new CliError(
      `not logged in (no login in ${path}): run "platform login <url>" first`,
    );
  }
  const accessKey = options.accessKey || io.env[ACCESS_KEY_ENV] || stored.accessKey;
  const login: StoredLogin = { ...stored, accessKey };
  const api = new PlatformApi(
    { baseUrl: login.server, token: accessKey, ca: login.ca, insecure: login.insecure },
    login.apiGroup,
    RELOGIN_TRUST_HINT,
  );
  return { api, login, configPath: path };
}
