// The stored login: `~/.platform/config.json`, or the file named by `--config` or
// PLATFORM_CONFIG. It holds an access key, so it is readable by its owner only
// (0600, in a 0700 directory), written to a temporary file in the same directory and
// renamed, so a crash never leaves half a file or a moment where it is readable.

import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { isObject } from '../apis/meta/types.js';
import { CliError } from './errors.js';

export const CONFIG_ENV = 'PLATFORM_CONFIG';

export interface StoredLogin {
  /** `https://host[:port][/path]`, without the management prefix. */
  server: string;
  accessKey: string;
  apiGroup: string;
  /** PEM of the CA that signs the platform's certificate, when not a public one. */
  ca?: string;
  insecure?: boolean;
  /** Who the key was at login, for `logout` and messages. */
  user?: string;
}

export interface CliConfig {
  login?: StoredLogin;
}

export function configPath(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): string {
  return flag || env[CONFIG_ENV] || join(home, '.platform', 'config.json');
}

export function readConfig(path: string): CliConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text) as unknown;
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or remove it and log in again`);
  }
  if (!isObject(doc)) throw new CliError(`${path} does not hold a JSON object; remove it and log in again`);
  const login = doc.login;
  if (login === undefined || login === null) return {};
  if (
    !isObject(login) ||
    typeof login.server !== 'string' ||
    typeof login.accessKey !== 'string' ||
    typeof login.apiGroup !== 'string'
  ) {
    throw new CliError(`${path} holds an incomplete login; log in again`);
  }
  const out: StoredLogin = { server: login.server, accessKey: login.accessKey, apiGroup: login.apiGroup };
  if (typeof login.ca === 'string') out.ca = login.ca;
  if (login.insecure === true) out.insecure = true;
  if (typeof login.user === 'string') out.user = login.user;
  return { login: out };
}

export function writeConfig(path: string, config: CliConfig): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.config-${process.pid}-${Date.now()}.tmp`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(config, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The umask may have narrowed the mode further, never widened it; make it exact.
    chmodSync(tmp, 0o600);
    try {
      renameSync(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  } catch (err) {
    throw new CliError(`cannot write ${path}: ${(err as Error).message}`);
  }
}
