// Where `platform login` gets the access key, safest first: the environment
// (PLATFORM_ACCESS_KEY), standard input (`--access-key -`), or, in a terminal, a
// prompt that does not echo. `--access-key <key>` still works, but puts the key in
// the shell's history and in `ps` for everyone on the machine to read.

import { UsageError } from './errors.js';
import { readAll, type CliIO } from './io.js';
import { ACCESS_KEY_ENV } from './session.js';

export const ACCESS_KEY_PROMPT = 'Access key: ';

const NO_KEY =
  `no access key: set ${ACCESS_KEY_ENV}, or pass --access-key - and give the key on standard input ` +
  '(run in a terminal, login asks for it)';

/** The key to log in with; a UsageError when there is none. */
export async function loginAccessKey(io: CliIO, given: string | undefined): Promise<string> {
  if (given === '-') {
    // The first line: `echo "$KEY" | platform login ... --access-key -` ends with a newline.
    const text = (await readAll(io.stdin)).toString('utf8');
    const key = (text.split(/\r?\n/)[0] ?? '').trim();
    if (key === '') throw new UsageError('--access-key -: standard input holds no access key');
    return key;
  }
  if (given !== undefined) {
    const key = given.trim();
    if (key === '') throw new UsageError('--access-key is empty');
    return key;
  }
  const fromEnv = io.env[ACCESS_KEY_ENV]?.trim();
  if (fromEnv) return fromEnv;
  if (io.stdinIsTTY && io.readSecret) {
    const key = (await io.readSecret(ACCESS_KEY_PROMPT)).trim();
    if (key === '') throw new UsageError('no access key was entered');
    return key;
  }
  throw new UsageError(NO_KEY);
}
