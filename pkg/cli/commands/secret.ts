// `platform get secret` and `platform set secret`: Global Secrets (SharedSecret).
// Values are bytes: one key is written to stdout exactly as stored (binary-safe);
// all keys print as data, with values that are not UTF-8 text kept as base64.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { SharedSecret } from '../../apis/management/v1/shared-secret.js';
import { Document } from 'yaml';
import { CliError, PlatformApiError, UsageError } from '../errors.js';
import type { CliIO } from '../io.js';
import { readAll } from '../io.js';
import { withCommonOptions, withOutputOption } from '../options.js';
import type { OutputFormat } from '../output.js';
import { printData } from '../output.js';
import type { CommonOptions } from '../session.js';
import { openSession } from '../session.js';

const DEFAULT_NAMESPACE = 'default';

/** The text of `bytes` when they are valid UTF-8, else undefined. */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

interface GetOptions extends CommonOptions {
  key?: string;
  namespace: string;
  output?: OutputFormat;
}

async function getSecret(io: CliIO, name: string, opts: GetOptions): Promise<void> {
  const { api } = openSession(io, opts);
  const ns = opts.namespace;
  const secret = await api.getOptional<SharedSecret>(`/namespaces/${ns}/sharedsecrets/${name}`);
  if (!secret) throw new CliError(`global secret "${name}" not found in namespace "${ns}"`);
  const data = secret.spec?.data ?? {};
  if (opts.key !== undefined) {
    const value = data[opts.key];
    if (value === undefined) {
      const keys = Object.keys(data).sort();
      throw new CliError(
        `global secret ${ns}/${name} has no key "${opts.key}"${keys.length > 0 ? ` (its keys: ${keys.join(', ')})` : ' (it has no keys)'}`,
      );
    }
    const bytes = Buffer.from(value, 'base64');
    if (opts.output) {
      const text = utf8(bytes);
      printData(
        io.stdout,
        text !== undefined ? { [opts.key]: text } : { [opts.key]: { base64: value } },
        opts.output,
      );
      return;
    }
    io.stdout.write(bytes);
    // A terminal gets a newline so the prompt does not land on the value; a pipe gets the bytes alone.
    if (io.stdoutIsTTY && bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) io.stdout.write('\n');
    return;
  }
  const entries = Object.keys(data)
    .sort()
    .map((k) => [k, Buffer.from(data[k] ?? '', 'base64')] as const);
  if (opts.output === 'json') {
    const out: Record<string, unknown> = {};
    for (const [k, bytes] of entries) out[k] = utf8(bytes) ?? { base64: bytes.toString('base64') };
    printData(io.stdout, out, 'json');
    return;
  }
  // YAML (the default for all keys): binary values become !!binary, YAML's own way to carry bytes.
  const out = new Map<string, string | Uint8Array>();
  for (const [k, bytes] of entries) out.set(k, utf8(bytes) ?? new Uint8Array(bytes));
  io.stdout.write(entries.length === 0 ? '{}\n' : new Document(out, { customTags: ['binary'] }).toString({ lineWidth: 0 }));
}

interface SetOptions extends CommonOptions {
  key: string;
  value?: string;
  fromFile?: string;
  namespace: string;
}

async function setSecret(io: CliIO, name: string, opts: SetOptions): Promise<void> {
  if ((opts.value === undefined) === (opts.fromFile === undefined)) {
    throw new UsageError('give the value with exactly one of --value or --from-file');
  }
  let bytes: Buffer;
  if (opts.value !== undefined) bytes = Buffer.from(opts.value, 'utf8');
  else if (opts.fromFile === '-') bytes = await readAll(io.stdin);
  else {
    try {
      bytes = readFileSync(resolve(io.cwd, opts.fromFile ?? ''));
    } catch (err) {
      throw new UsageError(
        `--from-file: cannot read ${opts.fromFile}: ${(err as NodeJS.ErrnoException).code ?? ''}`,
      );
    }
  }
  const { api } = openSession(io, opts);
  const ns = opts.namespace;
  const path = `/namespaces/${ns}/sharedsecrets`;
  const encoded = bytes.toString('base64');
  const patch = () =>
    api.call(
      'PATCH',
      `${path}/${name}`,
      { spec: { data: { [opts.key]: encoded } } },
      'application/merge-patch+json',
    );
  let verb = 'updated';
  const existing = await api.getOptional<SharedSecret>(`${path}/${name}`);
  if (existing) await patch();
  else {
    try {
      await api.call('POST', path, {
        apiVersion: `${api.group}/v1`,
        kind: 'SharedSecret',
        metadata: { name, namespace: ns },
        spec: { displayName: name, data: { [opts.key]: encoded } },
      });
      verb = 'created';
    } catch (err) {
      // Someone created it in between: set the key on theirs.
      if (!(err instanceof PlatformApiError && err.status === 409)) throw err;
      await patch();
    }
  }
  io.stdout.write(`Global secret ${ns}/${name} ${verb}: key "${opts.key}" set (${bytes.length} bytes).\n`);
}

export function registerSecretCommands(get: Command, set: Command, io: CliIO): void {
  withOutputOption(
    withCommonOptions(
      get
        .command('secret')
        .description("Print a Global Secret's value (one key, decoded) or all its keys")
        .argument('<name>', 'the Global Secret (SharedSecret) name')
        .option('--key <key>', 'print only this key, exactly as stored (binary-safe)')
        .option('-n, --namespace <namespace>', 'the namespace of the secret', DEFAULT_NAMESPACE),
    ),
  ).action((name: string, opts: GetOptions) => getSecret(io, name, opts));

  withCommonOptions(
    set
      .command('secret')
      .description('Create a Global Secret or set one key of it')
      .argument('<name>', 'the Global Secret (SharedSecret) name')
      .requiredOption('--key <key>', 'the key to set (letters, digits, -, _ and .)')
      .option('--value <value>', 'the value, as text')
      .option('--from-file <path>', 'read the value from a file (any bytes); - reads stdin')
      .option('-n, --namespace <namespace>', 'the namespace of the secret', DEFAULT_NAMESPACE),
  ).action((name: string, opts: SetOptions) => setSecret(io, name, opts));
}
