// Errors the command-line client reports: one line for a person, an exit code for a
// script. Everything a command throws reaches main as one of these (or is turned
// into one there), so no stack trace is ever printed.

/** Exit codes: 0 success, 1 the command failed, 2 the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The command line itself is wrong (missing or conflicting flags). */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
}

/** The platform answered a request with an error Status (or an HTTP error without one). */
export class PlatformApiError extends CliError {
  override readonly name = 'PlatformApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

/** One line, whatever the error: the first line of its message. */
export function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.trim() || 'unknown error';
}
