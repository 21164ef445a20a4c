// The `platform` command tree (commander) and the one place errors become exit
// codes: 0 success, 1 failure, 2 a wrong command line. Every failure prints one
// line, `error: <reason>`, and never a stack trace.

import { Command, CommanderError } from 'commander';
import { registerAccessKeyCommands } from './commands/access-key.js';
import { registerConnect } from './commands/connect.js';
import { registerLogin } from './commands/login.js';
import { registerSecretCommands } from './commands/secret.js';
import type { ConnectionHostFactory } from './commands/vcluster.js';
import { kubeConnectionHost, registerVClusterCommands } from './commands/vcluster.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, oneLine } from './errors.js';
import type { CliIO } from './io.js';

export const CLI_VERSION = '0.1.0';

export interface CliDependencies {
  readonly io: CliIO;
  /** The host cluster for the `vcluster` commands; default: @kubernetes/client-node from --kubeconfig. */
  readonly connectionHost?: ConnectionHostFactory;
}

export function buildProgram(deps: CliDependencies): Command {
  const { io } = deps;
  const program = new Command('platform');
  program
    .description(
      'Command-line client of the platform: log in, connect to virtual clusters, Global Secrets, access keys',
    )
    .version(CLI_VERSION, '-v, --version', 'print the version')
    .helpCommand(true)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  registerLogin(program, io);
  registerConnect(program, io);
  const get = program.command('get').description('Read a resource');
  const set = program.command('set').description('Create or change a resource');
  registerSecretCommands(get, set, io);
  const create = program.command('create').description('Create a resource');
  const list = program.command('list').description('List resources');
  const del = program.command('delete').description('Delete a resource');
  registerAccessKeyCommands(create, list, del, io);
  registerVClusterCommands(program, io, deps.connectionHost ?? kubeConnectionHost(io));
  return program;
}

/** Runs the client on `argv` (without node and script); resolves to the exit code. */
export async function runCli(argv: readonly string[], deps: CliDependencies): Promise<number> {
  const program = buildProgram(deps);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with 0; commander already printed its one-line error otherwise.
      if (err.exitCode === 0) return EXIT_OK;
      return EXIT_USAGE;
    }
    deps.io.stderr.write(`error: ${oneLine(err)}\n`);
    return err instanceof CliError ? err.exitCode : EXIT_FAILURE;
  }
}
