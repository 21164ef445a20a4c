#!/usr/bin/env node
// platform: the command-line client. Everything lives in pkg/cli; this file only
// hands it the process (arguments, streams, environment) and turns its result into
// the exit code. Anything that escapes is still one line, never a stack trace.

import { homedir } from 'node:os';
import { EXIT_FAILURE, oneLine, runCli } from '../../pkg/cli/index.js';
import { readSecretFromTerminal } from '../../pkg/cli/terminal.js';

function die(err: unknown): never {
  process.stderr.write(`error: ${oneLine(err)}\n`);
  process.exit(EXIT_FAILURE);
}

process.on('uncaughtException', die);
process.on('unhandledRejection', die);

runCli(process.argv.slice(2), {
  io: {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    stdoutIsTTY: process.stdout.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true,
    // The prompt goes to stderr, so stdout stays the command's output.
    readSecret: (prompt) => readSecretFromTerminal(process.stdin, process.stderr, prompt),
    env: process.env,
    homeDir: homedir(),
    cwd: process.cwd(),
  },
}).then((code) => {
  // Let the streams drain (large -o yaml output through a pipe) before leaving.
  process.exitCode = code;
}, die);
