// The `platform` command-line client.

export { runCli, buildProgram, CLI_VERSION } from './program.js';
export type { CliDependencies } from './program.js';
export type { CliIO, Output } from './io.js';
export { EXIT_OK, EXIT_FAILURE, EXIT_USAGE, oneLine } from './errors.js';
