#!/usr/bin/env node
// platform-apiserver: flags -> complete -> validate -> config -> run. The options
// live in pkg/apiserver/options, the server they build in pkg/server; this file only
// wires the process to them: exit codes, signals, and last-resort error handling.

import { ServerOptions, parseFlags, usage } from '../../pkg/apiserver/options/index.js';
import { SERVER_NODE_FLAGS, run, youngGeneration, type RunningServer } from '../../pkg/server/index.js';
import { JsonLogger, isLogLevel } from '../../pkg/util/log/index.js';

/** Invalid command line: one line on stderr, exit 2 (as Go's flag package does). */
function usageError(message: string): never {
  process.stderr.write(`platform-apiserver: ${message} (see --help)\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const parsed = parseFlags(process.argv.slice(2));
  if (parsed.help) {
    process.stdout.write(usage());
    return;
  }
  const options = new ServerOptions(parsed.values, parsed.problems).complete();
  const problems = options.validate();
  if (problems.length > 0) usageError(`invalid flags: ${problems.join('; ')}`);

  const logLevel = options.values.logLevel;
  const logger = new JsonLogger(isLogLevel(logLevel) ? logLevel : 'info');
  const fail = (msg: string, err: unknown): never => {
    logger.error(msg, { error: err });
    process.exit(1);
  };
  // V8 sized the young generation before this script ran: only the launcher's node
  // flags set it (pkg/server/node-flags.ts). A launcher that left them out is told so.
  const young = youngGeneration();
  if (!young.minimumGiven) {
    logger.warn(
      "started without the server's node flags: V8 sizes the young generation by the process's history",
      {
        nodeFlags: SERVER_NODE_FLAGS.join(' '),
        semiSpaceMiB: young.semiSpaceMiB,
      },
    );
  }
  process.on('uncaughtException', (err) => fail('uncaught exception', err));
  process.on('unhandledRejection', (err) => fail('unhandled promise rejection', err));

  // Signal handlers go in before start-up: a SIGTERM that arrives while the server is
  // still starting (it may already have logged where it serves) must drain and exit 0
  // once it has started, not kill the process with the signal's default action.
  let server: RunningServer | undefined;
  let pending: NodeJS.Signals | undefined;
  // The server bounds its own shutdown; this is the backstop should storage hang on close.
  const HARD_EXIT_MS = 45_000;
  let signals = 0;
  const shutDown = (running: RunningServer, signal: NodeJS.Signals): void => {
    logger.info('received signal, shutting down', { signal });
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, HARD_EXIT_MS).unref();
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => fail('shutdown failed', err),
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      logger.warn('second signal: exiting without waiting', { signal });
      process.exit(1);
    }
    if (server) shutDown(server, signal);
    else pending = signal;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    server = await run(options, logger);
  } catch (err) {
    fail('the server failed to start', err);
    return;
  }
  if (pending) shutDown(server, pending);
}

main().catch((err: unknown) => {
  process.stderr.write(`platform-apiserver: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
